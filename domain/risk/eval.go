package risk

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Bounds that keep one analysis small whatever the input: the classifier must
// answer in well under a millisecond for ordinary commands and must terminate
// on hostile ones.
const (
	maxSteps      = 4000 // statements and commands visited per analysis
	maxDepth      = 10   // nested scripts: bash -c inside eval inside …
	maxAlts       = 8    // possible values tracked per variable
	maxCombos     = 16   // value combinations tried per command
	maxLoopValues = 16   // loop items tracked per loop variable
	maxCallDepth  = 4    // nested function invocations

	maxFieldsPerWord = 512     // fields one word may expand to
	maxValueLen      = 4096    // longest variable value tracked
	maxExpandBytes   = 4 << 20 // bytes all expansions of one analysis may produce
)

// analyzer is one abstract run of a script. It never executes anything: each
// simple command is classified from its expanded argv, and the text it would
// print is computed only for pure text commands (echo, printf, base64 -d …).
type analyzer struct {
	f        *findings
	steps    int
	depth    int
	calls    int
	overflow bool
	aliases  map[string]string
	// downloaded holds paths that a downloader wrote during this line (R9e).
	downloaded map[string]bool
	// fdStreams are the contents of process substitutions, by /dev/fd name.
	fdStreams map[string]stream
	nextFD    int
	// events collects what ran inside the current pipeline (R9f).
	events eventSet
	// allEvents collects what ran anywhere in the line (R9f: /dev/tcp
	// plus a shell, possibly in different statements).
	allEvents eventSet
	// shellCopies are paths a shell binary was copied to (R9g).
	shellCopies map[string]bool
	// bytes counts what expansions produced (maxExpandBytes).
	bytes int
	// sensitive is set when a verdict used state that an earlier part of
	// the line produced (a variable, the cwd, a function, piped input).
	// Only then can a part classify lower in context than alone, and only
	// then does analyzeList need the standalone runs.
	sensitive bool
	// peak is the highest level added since the innermost measure began.
	peak Level
	// secretReads counts the secret files readTarget reported by name.
	secretReads int
	// ownHits counts the reasons about the daemon's own files (addOwn).
	ownHits int
	// hashed are command names that `hash -p` bound to another program.
	hashed map[string]field
	// written is what this line wrote to each file (see recordWrite).
	written map[string]stream
	// hooksDirs are directories core.hooksPath pointed git at.
	hooksDirs []string
	// writes lists the files written, in order (see taintWrites).
	writes []string
	// secretStaged is set once git add or commit took secret material.
	secretStaged bool
	// callPos is the offset of the simple command being classified in the
	// line's text (valid at depth 0): a function the line defines applies
	// only after its definition.
	callPos uint
}

type eventSet uint8

const (
	evNetSocket   eventSet = 1 << iota // nc, socat, telnet … or /dev/tcp
	evShellStdin                       // a shell or interpreter reading stdin
	evUnknownExec                      // a command whose name is only known at run time
	evShellAny                         // any shell or interpreter ran
	evDevTCP                           // a redirection to /dev/tcp or /dev/udp
)

func newAnalyzer(f *findings) *analyzer {
	return &analyzer{f: f, nextFD: 63}
}

func (a *analyzer) add(l Level, rule, detail string) {
	a.peak = max(a.peak, l)
	a.f.add(l, rule, detail)
}

// addContained is add for a deletion inside the workspace (R21).
func (a *analyzer) addContained(l Level, rule, detail string) {
	a.peak = max(a.peak, l)
	a.f.addContained(l, rule, detail)
}

// measure runs fn and returns the highest level it added. Effect helpers
// use it to tell a handler whether their own reasons already explain the
// command, so the handler adds its generic reason only when they do not.
func (a *analyzer) measure(fn func()) Level {
	outer := a.peak
	a.peak = Safe
	fn()
	got := a.peak
	a.peak = max(outer, got)
	return got
}

func (a *analyzer) finish() {
	if ev := a.allEvents | a.events; ev&evDevTCP != 0 && ev&(evShellAny|evShellStdin|evUnknownExec) != 0 {
		a.add(Forbidden, "R9f reverse shell", "/dev/tcp together with a shell")
	}
	if a.overflow {
		a.f.overflow = true
		a.add(Forbidden, budgetRule, "the line is too large or too deeply nested to analyse fully")
	}
}

// step counts work and reports false once the budget is spent.
func (a *analyzer) step() bool {
	a.steps++
	if a.steps > maxSteps {
		a.overflow = true
		return false
	}
	return true
}

// scope is the shell state that the analysis tracks: literal variables, the
// working directory and functions.
type scope struct {
	vars   map[string][]string // possible values; a marker stands for unknown
	funcs  map[string]*syntax.Stmt
	cwd    []string // possible working directories; "." is the workspace
	params []string // positional parameters; nil when unknown
	arg0   string   // $0 when a -c script was given one
	// customIFS is set once IFS was assigned: splitting on it is obfuscation.
	customIFS bool
	// taint are the content flags of what variables hold (a secret, a
	// download, a decoded payload), so "$x" carries them on.
	taint map[string]fflags
	// arrays are indexed arrays the line assigned with literal elements.
	arrays map[string][]string
	// ints are variables declared integer (declare -i): assigning to one
	// evaluates the value as arithmetic.
	ints map[string]bool
	// container means paths are inside a container that does not see the host.
	container bool
	// remote means commands run on another host (ssh).
	remote bool
}

func newScope() *scope {
	return &scope{vars: map[string][]string{}, cwd: []string{"."}}
}

// clone copies the scope for a subshell or a branch.
func (s *scope) clone() *scope {
	c := *s
	c.vars = maps.Clone(s.vars)
	if s.funcs != nil {
		c.funcs = maps.Clone(s.funcs)
	}
	c.cwd = slices.Clone(s.cwd)
	if s.ints != nil {
		c.ints = maps.Clone(s.ints)
	}
	if s.arrays != nil {
		c.arrays = maps.Clone(s.arrays)
	}
	if s.taint != nil {
		c.taint = maps.Clone(s.taint)
	}
	return &c
}

// merge widens s so that it also covers the state in o: after a branch either
// side may have run.
func (s *scope) merge(o *scope) {
	for k, ov := range o.vars {
		s.vars[k] = unionAlts(s.getAlts(k), ov)
	}
	for k := range s.vars {
		if _, ok := o.vars[k]; !ok {
			s.vars[k] = unionAlts(s.vars[k], []string{marker(k)})
		}
	}
	for k, fn := range o.funcs {
		if s.funcs == nil {
			s.funcs = map[string]*syntax.Stmt{}
		}
		if _, ok := s.funcs[k]; !ok {
			s.funcs[k] = fn
		}
	}
	for k, v := range o.taint {
		if s.taint == nil {
			s.taint = map[string]fflags{}
		}
		s.taint[k] |= v
	}
	for k, v := range s.arrays {
		if ov, ok := o.arrays[k]; !ok || !slices.Equal(v, ov) {
			// Either branch may have run: the elements are not known.
			delete(s.arrays, k)
		}
	}
	for k := range o.ints {
		if s.ints == nil {
			s.ints = map[string]bool{}
		}
		s.ints[k] = true
	}
	s.cwd = unionAlts(s.cwd, o.cwd)
	s.customIFS = s.customIFS || o.customIFS
}

func (s *scope) getAlts(name string) []string {
	if v, ok := s.vars[name]; ok {
		return v
	}
	return []string{marker(name)}
}

func (s *scope) set(name string, vals ...string) {
	if len(vals) == 0 {
		vals = []string{""}
	}
	for i, v := range vals {
		if len(v) > maxValueLen {
			vals[i] = marker(name)
		}
	}
	s.vars[name] = unionAlts(nil, vals)
	if name == "IFS" {
		s.customIFS = true
	}
}

func unionAlts(a, b []string) []string {
	out := slices.Clone(a)
	for _, v := range b {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	if len(out) > maxAlts {
		// Keep the first few concrete values so a dangerous one is still seen,
		// and record that more are possible.
		out = append(out[:maxAlts-1:maxAlts-1], marker("alts"))
	}
	return out
}

// stream is what flows through a pipe: known text with markers for the
// unknown parts, plus where it came from.
type stream struct {
	text  string
	flags fflags
	piped bool   // false for the terminal
	file  string // the file the text was read from, when that is all we know
}

func ttyStream() stream { return stream{text: marker("tty")} }

func unknownStream(fl fflags) stream {
	return stream{text: marker("stdout"), flags: fl, piped: true}
}

func textStream(s string, fl fflags) stream { return stream{text: s, flags: fl, piped: true} }

func (s stream) known() bool { return !hasMarker(s.text) }

// concat joins the output of consecutive commands.
func concat(a, b stream) stream {
	switch {
	case a.text == "" && a.flags == 0:
		return b
	case b.text == "" && b.flags == 0:
		return a
	}
	return stream{text: a.text + b.text, flags: a.flags | b.flags, piped: true}
}

// stmts analyses a statement list and returns what it prints.
func (a *analyzer) stmts(sc *scope, list []*syntax.Stmt, in stream) stream {
	var out stream
	for _, st := range list {
		if a.overflow {
			break
		}
		out = concat(out, a.stmt(sc, st, in))
	}
	return out
}

func (a *analyzer) stmt(sc *scope, st *syntax.Stmt, in stream) stream {
	if st == nil || !a.step() {
		return stream{}
	}
	in, outs := a.redirects(sc, st.Redirs, in)
	out := a.command(sc, st, in)
	for _, w := range outs {
		a.writeRedirect(sc, w, out)
	}
	if len(outs) > 0 && redirectsStdout(st.Redirs) {
		return stream{}
	}
	return out
}

func (a *analyzer) command(sc *scope, st *syntax.Stmt, in stream) stream {
	switch c := st.Cmd.(type) {
	case nil:
		return stream{}
	case *syntax.CallExpr:
		return a.callExpr(sc, c, in)
	case *syntax.BinaryCmd:
		return a.binary(sc, c, in)
	case *syntax.Subshell:
		return a.stmts(sc.clone(), c.Stmts, in)
	case *syntax.Block:
		return a.stmts(sc, c.Stmts, in)
	case *syntax.IfClause:
		return a.ifClause(sc, c, in)
	case *syntax.WhileClause:
		out := a.stmts(sc, c.Cond, in)
		if isConstTrue(c.Cond) != c.Until && containsBackground(c.Do) && !callsWait(c.Do) {
			a.add(Forbidden, "R9d fork bomb", "endless loop that keeps starting background processes")
		}
		return concat(out, a.loopBody(sc, c.Do, in))
	case *syntax.ForClause:
		return a.forClause(sc, c, in)
	case *syntax.CaseClause:
		a.wordFields(sc, c.Word)
		base := sc.clone()
		var out stream
		for _, item := range c.Items {
			for _, p := range item.Patterns {
				a.wordFields(base, p)
			}
			br := base.clone()
			out = concat(out, a.stmts(br, item.Stmts, in))
			sc.merge(br)
		}
		return out
	case *syntax.FuncDecl:
		a.funcDecl(sc, c)
		return stream{}
	case *syntax.DeclClause:
		a.declClause(sc, c)
		return stream{}
	case *syntax.TimeClause:
		if c.Stmt == nil {
			return stream{}
		}
		return a.stmt(sc, c.Stmt, in)
	case *syntax.CoprocClause:
		if c.Stmt == nil {
			return stream{}
		}
		return a.stmt(sc.clone(), c.Stmt, in)
	case *syntax.LetClause:
		for _, e := range c.Exprs {
			a.arith(sc, e)
		}
		return stream{}
	case *syntax.ArithmCmd:
		a.arith(sc, c.X)
		return stream{}
	case *syntax.TestClause:
		a.substsIn(sc, c.X)
		a.testArith(sc, c.X)
		a.add(Safe, "R15 read-only", "test")
		return stream{}
	default:
		a.substsIn(sc, c)
		return unknownStream(0)
	}
}

func (a *analyzer) binary(sc *scope, c *syntax.BinaryCmd, in stream) stream {
	switch c.Op {
	case syntax.Pipe, syntax.PipeAll:
		saved := a.events
		a.events = 0
		out := a.pipeline(sc, c, in)
		if a.events&evNetSocket != 0 && a.events&(evShellStdin|evUnknownExec) != 0 {
			a.add(Forbidden, "R9f reverse shell", "a network socket and a shell are joined in one pipeline")
		}
		a.allEvents |= a.events
		a.events |= saved
		return out
	default: // && and ||: no credit for short-circuit logic (R1)
		out := a.stmt(sc, c.X, in)
		before := sc.clone()
		out = concat(out, a.stmt(sc, c.Y, in))
		sc.merge(before)
		return out
	}
}

// pipeline runs every stage in a subshell of its own, as bash does, with the
// previous stage's output as its input.
func (a *analyzer) pipeline(sc *scope, c *syntax.BinaryCmd, in stream) stream {
	left := a.pipeStage(sc, c.X, in)
	left.piped = true
	return a.pipeStage(sc, c.Y, left)
}

func (a *analyzer) pipeStage(sc *scope, st *syntax.Stmt, in stream) stream {
	if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && len(st.Redirs) == 0 {
		return a.pipeline(sc, b, in)
	}
	return a.stmt(sc.clone(), st, in)
}

func (a *analyzer) ifClause(sc *scope, c *syntax.IfClause, in stream) stream {
	out := a.stmts(sc, c.Cond, in)
	base := sc.clone()
	out = concat(out, a.stmts(sc, c.Then, in))
	if c.Else != nil {
		other := base.clone()
		out = concat(out, a.ifClause(other, c.Else, in))
		sc.merge(other)
	} else {
		sc.merge(base)
	}
	return out
}

// loopBody runs a loop body twice so that values assigned late in one
// iteration are seen by the next, then widens the scope with the state from
// before the loop (it may run zero times).
func (a *analyzer) loopBody(sc *scope, body []*syntax.Stmt, in stream) stream {
	before := sc.clone()
	out := a.stmts(sc, body, in)
	if !a.overflow {
		a.stmts(sc, body, in)
	}
	sc.merge(before)
	return out
}

func (a *analyzer) forClause(sc *scope, c *syntax.ForClause, in stream) stream {
	switch l := c.Loop.(type) {
	case *syntax.WordIter:
		var items []string
		if l.InPos.IsValid() || len(l.Items) > 0 {
			for _, w := range l.Items {
				for _, f := range a.wordFields(sc, w) {
					items = append(items, f.s)
				}
			}
		} else if sc.params != nil {
			items = slices.Clone(sc.params)
		} else {
			items = []string{marker("@")}
		}
		if len(items) > maxLoopValues {
			items = append(items[:maxLoopValues-1:maxLoopValues-1], marker(l.Name.Value))
		}
		if len(items) > 0 {
			sc.set(l.Name.Value, items...)
		}
	case *syntax.CStyleLoop:
		a.arith(sc, l.Init)
		a.arith(sc, l.Cond)
		a.arith(sc, l.Post)
		if l.Cond == nil && containsBackground(c.Do) && !callsWait(c.Do) {
			a.add(Forbidden, "R9d fork bomb", "endless loop that keeps starting background processes")
		}
	}
	return a.loopBody(sc, c.Do, in)
}

// arith analyses an arithmetic command or loop clause (see arithExpr).
func (a *analyzer) arith(sc *scope, e syntax.ArithmExpr) { a.arithExpr(sc, e, 0) }

// substsIn analyses the command and process substitutions anywhere in node,
// for constructs whose words are not otherwise expanded.
func (a *analyzer) substsIn(sc *scope, node syntax.Node) {
	syntax.Walk(node, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			a.stmts(sc.clone(), n.Stmts, ttyStream())
			return false
		case *syntax.ProcSubst:
			a.stmts(sc.clone(), n.Stmts, ttyStream())
			return false
		}
		return true
	})
}

func (a *analyzer) funcDecl(sc *scope, c *syntax.FuncDecl) {
	names := c.Names
	if c.Name != nil {
		names = append([]*syntax.Lit{c.Name}, names...)
	}
	for _, n := range names {
		if sc.funcs == nil {
			sc.funcs = map[string]*syntax.Stmt{}
		}
		sc.funcs[n.Value] = c.Body
		if forksItself(c.Body, n.Value) {
			a.add(Forbidden, "R9d fork bomb", "function "+n.Value+" recursively starts copies of itself")
		}
	}
	// A function that is never called runs nothing, so its body adds
	// nothing, with two exceptions (R9h): a definition persists in a
	// terminal, so one that shadows a known command counts in full (the
	// next `ls` typed runs it), and a forbidden body counts anyway.
	if c.Body != nil && a.calls < maxCallDepth {
		shadows := false
		for _, n := range names {
			if _, ok := handlers[n.Value]; ok {
				shadows = true
			}
		}
		body := sc.clone()
		body.params = nil
		a.calls++
		if shadows {
			a.stmt(body, c.Body, ttyStream())
		} else {
			tmp := findings{exp: a.f.exp, own: a.f.own, workspace: a.f.workspace, lineFuncs: a.f.lineFuncs}
			sub := newAnalyzer(&tmp)
			sub.calls, sub.depth, sub.steps = a.calls, a.depth, a.steps
			sub.stmt(body, c.Body, ttyStream())
			sub.finish()
			a.steps = sub.steps
			for _, r := range tmp.reasons {
				if r.level == Forbidden {
					a.add(r.level, r.text, "")
				}
			}
			for _, t := range tmp.texts {
				a.f.addText(t)
			}
			if tmp.overflow {
				a.f.overflow = true
			}
		}
		a.calls--
	}
	for _, n := range names {
		a.add(Safe, "R15 read-only", "defines function "+n.Value)
	}
}

func (a *analyzer) callFunc(sc *scope, name string, body *syntax.Stmt, args []field, in stream) stream {
	a.sensitive = true
	if a.calls >= maxCallDepth {
		return unknownStream(0)
	}
	a.calls++
	defer func() { a.calls-- }()
	saved := sc.params
	sc.params = fieldStrings(args)
	out := a.stmt(sc, body, in)
	sc.params = saved
	return out
}

func (a *analyzer) declClause(sc *scope, c *syntax.DeclClause) {
	variant := c.Variant.Value
	exported := variant == "export"
	integer := variant == "let"
	for _, as := range c.Args {
		if as.Naked && as.Name == nil && as.Value != nil {
			for _, f := range a.wordFields(sc, as.Value) {
				if strings.HasPrefix(f.s, "-") && strings.Contains(f.s, "x") {
					exported = true
				}
				if strings.HasPrefix(f.s, "-") && strings.Contains(f.s, "i") {
					integer = true
				}
				if f.s == "-f" || f.s == "-p" || f.s == "-F" {
					a.add(Safe, "R15 read-only", variant+" "+f.s)
				}
			}
			continue
		}
		if integer && as.Name != nil {
			if sc.ints == nil {
				sc.ints = map[string]bool{}
			}
			sc.ints[as.Name.Value] = true
		}
		a.assign(sc, as, exported || variant == "export")
	}
	a.add(Safe, "R15 read-only", variant+" of an ordinary variable")
}

// assign records a variable assignment (no command word) in the scope.
func (a *analyzer) assign(sc *scope, as *syntax.Assign, exported bool) {
	if as.Name == nil {
		return
	}
	name := as.Name.Value
	var vals []string
	var fl fflags
	switch {
	case as.Array != nil:
		var elems []string
		for _, el := range as.Array.Elems {
			if el.Value != nil {
				for _, f := range a.wordFields(sc, el.Value) {
					elems = append(elems, f.s)
				}
			}
		}
		vals = []string{strings.Join(elems, " ")}
		if as.Index == nil && !as.Append && len(elems) <= maxFieldsPerWord {
			if sc.arrays == nil {
				sc.arrays = map[string][]string{}
			}
			sc.arrays[name] = elems
			defer func() { sc.arrays[name] = elems }()
		}
	case as.Value != nil:
		vs, f := a.wordValue(sc, as.Value)
		vals, fl = vs, f
	case as.Naked:
		if _, ok := sc.vars[name]; ok {
			vals = sc.vars[name]
		} else {
			vals = []string{marker(name)}
		}
	default:
		vals = []string{""}
	}
	if as.Append {
		var joined []string
		for _, old := range sc.getAlts(name) {
			for _, v := range vals {
				joined = append(joined, old+v)
			}
		}
		vals = joined
	}
	if as.Index != nil {
		a.arithExpr(sc, as.Index, 0)
		vals = []string{marker(name)}
	}
	if as.Array != nil {
		for _, el := range as.Array.Elems {
			a.arithExpr(sc, el.Index, 0)
		}
	}
	if sc.ints[name] {
		for _, v := range vals {
			a.arithText(sc, v, "integer variable "+name, 1)
		}
	}
	delete(sc.arrays, name)
	if t := fl & contentFlags; t != 0 {
		if sc.taint == nil {
			sc.taint = map[string]fflags{}
		}
		sc.taint[name] = t
	} else if !as.Append {
		delete(sc.taint, name)
	}
	sc.set(name, vals...)
	a.checkEnvVar(sc, name, vals, fl, exported || isExportedByDefault(name))
}

func isExportedByDefault(name string) bool {
	switch name {
	case "PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PROMPT_COMMAND", "BASH_ENV", "ENV",
		"PAGER", "GIT_PAGER", "EDITOR", "VISUAL", "GIT_SSH_COMMAND", "GIT_EDITOR", "PS1", "PS4", "HOME":
		return true
	}
	return false
}

// hijackVars change which program or code another program loads: the
// dynamic loader's preloads, interpreters' start-up code and module paths,
// git's exec path, config files and templates (R13 environment hijack).
var hijackVars = map[string]bool{"PATH": true, "LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true, "BASH_ENV": true,
	"ENV": true, "PYTHONPATH": true, "PYTHONSTARTUP": true, "PYTHONHOME": true, "NODE_OPTIONS": true, "NODE_PATH": true,
	"PERL5OPT": true, "PERL5LIB": true, "PERLLIB": true, "PERL5DB": true, "RUBYOPT": true, "RUBYLIB": true,
	"JAVA_TOOL_OPTIONS": true, "_JAVA_OPTIONS": true, "JDK_JAVA_OPTIONS": true, "DYLD_INSERT_LIBRARIES": true,
	"DYLD_LIBRARY_PATH": true, "GCONV_PATH": true, "ZDOTDIR": true, "GIT_EXEC_PATH": true, "GIT_CONFIG_GLOBAL": true,
	"GIT_CONFIG_SYSTEM": true, "GIT_CONFIG": true, "GIT_TEMPLATE_DIR": true, "SHELLOPTS": true, "BASHOPTS": true}

// checkEnvVar applies R13 (environment hijack) and R5 (commands hidden in
// variables that other programs run) to one assignment.
func (a *analyzer) checkEnvVar(sc *scope, name string, vals []string, fl fflags, exported bool) {
	if hijackVars[name] && exported {
		a.add(High, "R13 environment hijack", name+"=…")
	}
	if name == "BASH_ENV" || name == "ENV" {
		for _, v := range vals {
			if s, p, ok := a.writtenContent(sc, v); ok {
				a.script(sc, s.text, s.flags, name+" runs "+p+", written in this line")
			}
		}
	}
	switch {
	case name == "PROMPT_COMMAND":
		a.add(High, "R13 persistence", "PROMPT_COMMAND runs before every prompt")
		for _, v := range vals {
			a.script(sc, v, fl, "R5 hidden command in "+name)
		}
	case isPromptVar(name):
		for _, v := range vals {
			a.promptText(sc, v, fl, name)
		}
	case name == "LESS":
		for _, v := range vals {
			a.lessCommands(sc, field{s: v, fl: fl}, "LESS")
		}
	case strings.HasPrefix(name, "BASH_FUNC_") && exported:
		// An exported function: every bash started from here defines it.
		fn := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(name, "BASH_FUNC_"), "%%"), "()")
		a.add(High, "R13 environment hijack", "exported function "+fn)
		for _, v := range vals {
			a.script(sc, fn+" "+v, fl, "R5 hidden command in "+name)
		}
	}
	if isExecVar(name) {
		for _, v := range vals {
			if name == "LESSOPEN" || name == "LESSCLOSE" {
				// "|cmd %s" or "||cmd %s": the command gets the file name.
				v = strings.ReplaceAll(strings.TrimLeft(v, "|-"), "%s", "file")
			}
			a.script(sc, v, fl, "R5 hidden command in "+name)
		}
	}
}

// isExecVar reports variables whose value another program runs as a command.
func isExecVar(name string) bool {
	switch name {
	case "PAGER", "GIT_PAGER", "MANPAGER", "EDITOR", "VISUAL", "GIT_EDITOR", "GIT_SSH_COMMAND", "GIT_SEQUENCE_EDITOR",
		"GIT_SSH", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "GIT_PROXY_COMMAND", "SSH_ASKPASS", "SUDO_ASKPASS", "SUDO_EDITOR",
		"BROWSER", "LESSOPEN", "LESSCLOSE", "SYSTEMD_PAGER", "SYSTEMD_EDITOR", "FCEDIT", "RSYNC_RSH", "RSYNC_CONNECT_PROG",
		"CVS_RSH", "KUBE_EDITOR", "GH_PAGER", "GH_EDITOR", "AWS_PAGER", "PSQL_PAGER", "MYSQL_PAGER", "BAT_PAGER",
		"DELTA_PAGER", "SVN_EDITOR", "HGEDITOR", "SELECTED_EDITOR", "TEXEDIT":
		return true
	}
	return false
}

func (a *analyzer) callExpr(sc *scope, c *syntax.CallExpr, in stream) stream {
	if len(c.Args) == 0 {
		for _, as := range c.Assigns {
			a.assign(sc, as, false)
		}
		if len(c.Assigns) > 0 {
			a.add(Safe, "R15 read-only", "variable assignment")
		}
		return stream{}
	}
	var out stream
	pos := c.Pos().Offset()
	for _, v := range a.expandCall(sc, c) {
		if a.overflow {
			break
		}
		a.callPos = pos
		o := a.runArgv(v.sc, v.argv, v.env, in, callOpts{})
		out = concat(out, o)
		// Builtins such as cd change the shell itself; carry that back.
		if v.sc != sc {
			sc.cwd = unionAlts(sc.cwd, v.sc.cwd)
			if v.sc.funcs != nil {
				sc.funcs = v.sc.funcs
			}
			for k, val := range v.sc.vars {
				if _, multi := v.overrides[k]; !multi {
					sc.vars[k] = val
				}
			}
		}
	}
	return out
}

func redirectsStdout(rs []*syntax.Redirect) bool {
	for _, r := range rs {
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrAllClob:
			if r.N == nil || r.N.Value == "1" {
				return true
			}
		}
	}
	return false
}

// isConstTrue reports a loop condition that never fails: true, :, [ 1 ].
func isConstTrue(cond []*syntax.Stmt) bool {
	if len(cond) != 1 {
		return false
	}
	switch c := cond[0].Cmd.(type) {
	case *syntax.CallExpr:
		if len(c.Args) == 0 {
			return false
		}
		switch c.Args[0].Lit() {
		case "true", ":":
			return true
		case "[", "test":
			return len(c.Args) >= 2 && c.Args[1].Lit() != "" && c.Args[1].Lit() != "0" && !strings.HasPrefix(c.Args[1].Lit(), "-")
		}
	case *syntax.ArithmCmd:
		if w, ok := c.X.(*syntax.Word); ok {
			n, err := strconv.Atoi(w.Lit())
			return err == nil && n != 0
		}
	}
	return false
}

func containsBackground(list []*syntax.Stmt) bool {
	found := false
	for _, st := range list {
		syntax.Walk(st, func(n syntax.Node) bool {
			if s, ok := n.(*syntax.Stmt); ok && s.Background {
				found = true
			}
			return !found
		})
	}
	return found
}

// forksItself reports the fork-bomb shape (R9d): the function starts copies
// of itself that run at the same time, in the background or on both sides
// of a pipe. A plain recursive call, even inside a pipeline (a directory
// walker), is not one.
func forksItself(body *syntax.Stmt, name string) bool {
	found := false
	syntax.Walk(body, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			if n.Background && callsItself(n, name) {
				found = true
			}
		case *syntax.BinaryCmd:
			if (n.Op == syntax.Pipe || n.Op == syntax.PipeAll) && callsItself(n.X, name) && callsItself(n.Y, name) {
				found = true
			}
		}
		return !found
	})
	return found
}

func callsItself(body *syntax.Stmt, name string) bool {
	found := false
	syntax.Walk(body, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 && c.Args[0].Lit() == name {
			found = true
		}
		return !found
	})
	return found
}

// callsWait reports a loop body that waits for what it started, which
// bounds the number of processes it can have running.
func callsWait(list []*syntax.Stmt) bool {
	for _, st := range list {
		found := false
		syntax.Walk(st, func(n syntax.Node) bool {
			if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 && c.Args[0].Lit() == "wait" {
				found = true
			}
			return !found
		})
		if found {
			return true
		}
	}
	return false
}
