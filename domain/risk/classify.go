package risk

import (
	"cmp"
	"errors"
	"path"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/shellgate/shellgate/domain/shellword"
)

// Assessment is the classifier's verdict on one command line.
type Assessment struct {
	// Level is the highest risk of anything the line may run (R1).
	Level Level
	// Contained is Level with each deletion whose every target lies inside
	// the workspace counted as moderate: the level the gate decides by when
	// the command runs sandboxed with workspace writes and no network
	// (R21). It is never above Level; without a workspace it equals Level.
	Contained Level
	// Reasons name the rule ids that produced the level, riskiest first.
	Reasons []string
}

// maxReasons bounds the reasons list so a huge script cannot flood the audit log.
const maxReasons = 24

// maxSplitStmts bounds how many top-level statements get their own standalone
// analysis; beyond it only the whole line and each statement alone are analysed.
const maxSplitStmts = 12

// Classifier assesses command lines. It is safe for concurrent use.
type Classifier struct {
	exp shellword.Expander
	own *ownFiles // nil: the daemon's own files are not known (see Config)
}

// New returns a classifier that expands words with exp (which reads nothing
// and runs nothing; adapters/shellexpand provides one).
func New(exp shellword.Expander) *Classifier { return &Classifier{exp: exp} }

// Classify assesses what bash would run for command (risk-policy.md R0–R20).
// It is pure: it reads no files, runs nothing and starts no goroutines.
func (c *Classifier) Classify(command string) Assessment {
	return c.ClassifyIn(command, "")
}

// ClassifyIn is Classify for a command that runs in workspace (an absolute
// path; empty when unknown), which lets it tell deletions inside the
// workspace apart (Assessment.Contained, R21). Level and Reasons are the
// same as Classify's.
func (c *Classifier) ClassifyIn(command, workspace string) Assessment {
	f := findings{exp: c.exp, own: c.own, workspace: path.Clean("/" + workspace)}
	if workspace == "" {
		f.workspace = ""
	}
	classifyInto(&f, command)
	return f.assessment()
}

func classifyInto(f *findings, command string) {
	if len(command) > maxLineBytes {
		// Too long to read at all: forbidden, with the commands that can
		// be picked out cheaply named (R2 analysis budget).
		f.add(Forbidden, budgetRule, "the line is "+itoa(len(command))+" bytes, more than the "+itoa(maxLineBytes)+" analysed")
		cheapNames(f, command)
		return
	}
	src, pua := sanitizeInput(command)
	if pua {
		f.add(High, "R19 unicode", "private-use characters in the command")
	}
	scanRawText(f, src)
	f.raw = src

	stmts, err := parseTop(src)
	switch {
	case errors.Is(err, errTooManyStmts):
		f.add(Forbidden, budgetRule, "more than "+itoa(maxSteps)+" statements")
		f.overflow = true
	case err != nil && len(src) > maxRepairBytes:
		f.add(High, "R2 unparseable", "the line cannot be parsed")
		f.add(Forbidden, budgetRule, "an unparseable line of "+itoa(len(src))+" bytes is too long to try completing")
		f.overflow = true
	case err != nil:
		classifyUnparseable(f, src, err)
	default:
		f.lineFuncs = definedFuncs(stmts)
		analyzeList(f, stmts, 0)
	}
	if f.overflow {
		cheapNames(f, src)
	}
	scanTexts(f)
}

// The analysis budget (R2): beyond it a line is forbidden, because a
// person shown a lesser verdict could approve padding that hides a
// forbidden command.
const (
	budgetRule     = "R2 analysis budget"
	maxLineBytes   = 1 << 20  // longest line parsed at all
	maxRepairBytes = 64 << 10 // longest unparseable line for which completions are tried
)

// errTooManyStmts stops parseTop once the statements outnumber the steps
// one analysis may take: parsing the rest would only cost time.
var errTooManyStmts = errors.New("too many statements")

// parseTop parses the top-level statements of a line, stopping early when
// there are more than the analysis could visit.
func parseTop(src string) (stmts []*syntax.Stmt, err error) {
	p := parsers.Get().(*syntax.Parser)
	defer parsers.Put(p)
	tooMany := false
	defer func() {
		// StmtsSeq (mvdan.cc/sh/v3.14.1) yields a pending error once more
		// after the loop stopped; that is the only panic expected here.
		if r := recover(); r != nil {
			if !tooMany {
				panic(r)
			}
			stmts, err = nil, errTooManyStmts
		}
	}()
	for st, e := range p.StmtsSeq(strings.NewReader(src)) {
		if e != nil {
			// Keep consuming: stopping on an error makes the iterator
			// yield again.
			if err == nil {
				err = e
			}
			continue
		}
		stmts = append(stmts, st)
		if len(stmts) > maxSteps {
			tooMany = true
			break
		}
	}
	if tooMany {
		return nil, errTooManyStmts
	}
	return stmts, err
}

// analyzeList gives a statement list the highest of: the list analysed as a
// whole (so state such as variables and cwd carries from one statement to
// the next), and the parts of it that can stand alone. The standalone runs
// make the result monotone (R1): putting something before a command, or
// piping into it, never lowers its risk; `a=ls; $a` keeps the risk of a
// bare `$a`, and `cd /tmp/a && cd .. && rm -rf *` keeps that of
// `cd .. && rm -rf *`.
func analyzeList(f *findings, stmts []*syntax.Stmt, depth int) {
	if len(stmts) == 0 {
		return
	}
	if !runAnalysis(f, stmts) || depth > 4 {
		// Nothing in the line depended on state from an earlier part, so
		// each part alone would be classified exactly as it was here.
		return
	}
	// Standalone runs only contribute reasons that raise the level, so the
	// reasons explain the verdict instead of repeating it.
	parts := findings{exp: f.exp, own: f.own, workspace: f.workspace, lineFuncs: f.lineFuncs}
	for i := 1; i < len(stmts) && i <= maxSplitStmts; i++ {
		// A suffix needs its own run only after a statement that changes
		// shell state; otherwise the longer suffix already covers it.
		if modifiesState(stmts[i-1]) {
			runAnalysis(&parts, stmts[i:])
		}
	}
	for _, st := range stmts {
		analyzeParts(&parts, st, depth+1)
	}
	base := f.level
	for _, r := range parts.reasons {
		if r.level > base {
			f.addFinding(r)
		}
	}
	for _, t := range parts.texts {
		f.addText(t)
	}
}

// analyzeParts runs each tail of an && / || chain or a pipeline standing
// alone: in context an earlier operand may have changed the state or fed
// the input that a later one depends on.
func analyzeParts(f *findings, st *syntax.Stmt, depth int) {
	if depth > 6 {
		return
	}
	for _, pipe := range []bool{false, true} {
		ops, kinds := flatten(st, pipe)
		if len(ops) < 2 {
			continue
		}
		for i := 1; i < len(ops) && i <= maxSplitStmts; i++ {
			runAnalysis(f, []*syntax.Stmt{rebuild(ops[i:], kinds[i:])})
		}
		for _, op := range ops {
			analyzeParts(f, op, depth+1)
		}
	}
}

// flatten lists the operands of a left-nested chain of && and || (or of |
// and |& when pipe is set), with the operator before each operand.
func flatten(st *syntax.Stmt, pipe bool) ([]*syntax.Stmt, []syntax.BinCmdOperator) {
	match := func(s *syntax.Stmt) (*syntax.BinaryCmd, bool) {
		b, ok := s.Cmd.(*syntax.BinaryCmd)
		if !ok || len(s.Redirs) > 0 || s.Negated || s.Background {
			return nil, false
		}
		isPipe := b.Op == syntax.Pipe || b.Op == syntax.PipeAll
		return b, isPipe == pipe
	}
	b, ok := match(st)
	if !ok {
		return nil, nil
	}
	var ops []*syntax.Stmt
	var kinds []syntax.BinCmdOperator
	cur := st
	for {
		b, ok = match(cur)
		if !ok {
			break
		}
		ops = append(ops, b.Y)
		kinds = append(kinds, b.Op)
		cur = b.X
	}
	ops = append(ops, cur)
	kinds = append(kinds, 0)
	// Collected right to left, each operand with the operator before it.
	slices.Reverse(ops)
	slices.Reverse(kinds)
	return ops, kinds
}

// rebuild joins operands back into a left-nested chain; kinds[0] is ignored.
func rebuild(ops []*syntax.Stmt, kinds []syntax.BinCmdOperator) *syntax.Stmt {
	cur := ops[0]
	for i := 1; i < len(ops); i++ {
		cur = &syntax.Stmt{Position: cur.Position, Cmd: &syntax.BinaryCmd{Op: kinds[i], X: cur, Y: ops[i]}}
	}
	return cur
}

// modifiesState reports a statement that may change shell state a later
// statement reads: assignments, cd, functions, aliases, sourcing, loops.
// It errs towards true.
func modifiesState(st *syntax.Stmt) bool {
	found := false
	syntax.Walk(st, func(n syntax.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *syntax.FuncDecl, *syntax.DeclClause, *syntax.ArithmCmd, *syntax.LetClause, *syntax.ForClause:
			found = true
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				found = len(n.Assigns) > 0
				return !found
			}
			name := n.Args[0].Lit()
			switch baseName(name) {
			case "", "cd", "pushd", "popd", "alias", "unalias", "source", ".", "eval", "read", "readarray", "mapfile",
				"export", "declare", "typeset", "local", "readonly", "set", "shopt", "unset", "getopts", "printf", "let",
				"enable", "hash", "builtin", "command", "exec", "wget", "curl", "cp", "mv", "chmod", "env", "sudo", "doas":
				found = true
			}
		case *syntax.CmdSubst, *syntax.ProcSubst:
			// Substitutions run in subshells: their state does not leak.
			return false
		}
		return true
	})
	return found
}

// runAnalysis analyses stmts as one line and reports whether any verdict in
// it depended on context (see analyzer.sensitive).
func runAnalysis(f *findings, stmts []*syntax.Stmt) bool {
	a := newAnalyzer(f)
	sc := newScope()
	a.stmts(sc, stmts, ttyStream())
	a.finish()
	return a.sensitive
}

// classifyUnparseable applies R2: at least high, and the risk of any fragment
// that can be recognised when that is higher.
func classifyUnparseable(f *findings, src string, err error) {
	msg := err.Error()
	if len(msg) > 80 {
		msg = msg[:80] + "…"
	}
	f.add(High, "R2 unparseable", msg)

	// Lines before the failing one still run.
	var perr syntax.ParseError
	line := 0
	if pe, ok := err.(syntax.ParseError); ok {
		perr = pe
		line = int(perr.Pos.Line())
	}
	lines := strings.Split(src, "\n")
	if line > 1 && line-1 <= len(lines) {
		if file, err := parseScript(strings.Join(lines[:line-1], "\n")); err == nil {
			analyzeList(f, file.Stmts, 0)
		}
	}
	// The text may be completed by whatever comes next in a persistent PTY,
	// so try the obvious completions and also read it with quoting ignored.
	for _, suffix := range []string{"'", "\"", "`", ")", "}", "; }", "\nfi", "\ndone", "\nesac", "))", "]]", "'\"", "\"'"} {
		if file, err := parseScript(src + suffix); err == nil {
			analyzeList(f, file.Stmts, 0)
		}
	}
	// Read with quoting ignored, substitutions and groups as separators: a
	// fragment inside an unterminated construct may still run.
	bare := strings.Map(func(r rune) rune {
		switch r {
		case '\'', '"', '\\':
			return ' '
		case '`', '(', ')', '{', '}':
			return ';'
		}
		return r
	}, src)
	bare = strings.ReplaceAll(bare, "$;", " ;")
	if file, err := parseScript(bare); err == nil {
		analyzeList(f, file.Stmts, 0)
	} else {
		for _, frag := range strings.FieldsFunc(bare, func(r rune) bool { return strings.ContainsRune(";|&\n<>$", r) }) {
			if file, err := parseScript(frag); err == nil {
				analyzeList(f, file.Stmts, 0)
			}
		}
	}
}

// parsers are reused across calls: a Parser is large and allocating one per
// script dominated the cost of short commands. A pool hands each caller its
// own parser, so concurrent Classify calls stay independent.
var parsers = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false))
}}

func parseScript(src string) (*syntax.File, error) {
	p := parsers.Get().(*syntax.Parser)
	defer parsers.Put(p)
	return p.Parse(strings.NewReader(src), "")
}

// findings accumulates the verdict of one Classify call.
type findings struct {
	exp   shellword.Expander
	own   *ownFiles
	level Level
	// workspace is the directory the command runs in, when known (R21).
	workspace string
	// contained is the level with workspace-contained deletions counted
	// as moderate (Assessment.Contained).
	contained Level
	reasons   []finding
	// texts are payloads seen during analysis (argv, here-docs, decoded
	// scripts); R12 scans them once at the end.
	texts     []string
	textsSeen map[string]struct{}
	// overflow is set once any analysis of the line ran out of budget.
	overflow bool
	// raw is the line as scanned by scanRawText.
	raw string
	// lineFuncs are the functions the line defines anywhere: a part
	// analysed alone that calls one runs its body (see runArgv).
	lineFuncs map[string]lineFunc
}

// lineFunc is a function the line defines, and where its definition ends.
type lineFunc struct {
	body *syntax.Stmt
	end  uint
}

func (f *findings) addText(s string) {
	if len(s) < 8 || len(f.texts) > 4096 {
		return
	}
	if f.textsSeen == nil {
		f.textsSeen = make(map[string]struct{})
	}
	if _, ok := f.textsSeen[s]; ok {
		return
	}
	f.textsSeen[s] = struct{}{}
	f.texts = append(f.texts, s)
}

type finding struct {
	level Level
	text  string
	// contained marks a deletion inside the workspace (R21).
	contained bool
}

func (f *findings) add(l Level, rule, detail string) {
	f.record(l, rule, detail, false)
}

// addContained records a deletion whose every target lies inside the
// workspace: it counts at l for Level and as moderate for Contained (R21).
func (f *findings) addContained(l Level, rule, detail string) {
	f.record(l, rule, detail, true)
}

func (f *findings) addFinding(r finding) { f.record(r.level, r.text, "", r.contained) }

func (f *findings) record(l Level, rule, detail string, contained bool) {
	if l > f.level {
		f.level = l
	}
	c := l
	if contained {
		c = min(l, Moderate)
	}
	if c > f.contained {
		f.contained = c
	}
	text := rule
	if detail != "" {
		text = rule + ": " + detail
	}
	for _, r := range f.reasons {
		if r.text == text {
			return
		}
	}
	if len(f.reasons) >= 4*maxReasons {
		return
	}
	f.reasons = append(f.reasons, finding{l, text, contained})
}

func (f *findings) assessment() Assessment {
	rs := slices.Clone(f.reasons)
	slices.SortStableFunc(rs, func(a, b finding) int { return cmp.Compare(b.level, a.level) })
	if len(rs) > maxReasons {
		rs = rs[:maxReasons]
	}
	out := Assessment{Level: f.level, Contained: min(f.contained, f.level), Reasons: make([]string, 0, len(rs)+1)}
	for _, r := range rs {
		// Read-only notes add nothing to a verdict above safe.
		if r.level == Safe && f.level > Safe {
			continue
		}
		out.Reasons = append(out.Reasons, r.text)
	}
	if len(out.Reasons) == 0 {
		out.Reasons = append(out.Reasons, "R15 read-only: nothing to run")
	}
	return out
}

// definedFuncs collects the functions a line defines, by name.
func definedFuncs(stmts []*syntax.Stmt) map[string]lineFunc {
	var out map[string]lineFunc
	for _, st := range stmts {
		syntax.Walk(st, func(n syntax.Node) bool {
			if fd, ok := n.(*syntax.FuncDecl); ok && fd.Name != nil && fd.Body != nil {
				if out == nil {
					out = map[string]lineFunc{}
				}
				if _, seen := out[fd.Name.Value]; !seen {
					out[fd.Name.Value] = lineFunc{body: fd.Body, end: fd.End().Offset()}
				}
			}
			return true
		})
	}
	return out
}
