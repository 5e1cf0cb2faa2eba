package risk

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/shellgate/shellgate/domain/shellword"
)

// Unknown values travel through expansion as markers: private-use runes
// around a label. Input never contains them (sanitizeInput replaces any), so a
// marker in a result always means "only known at run time".
const (
	markOpen  = '\uE000'
	markClose = '\uE001'
)

// homeDir stands in for $HOME and ~. Any /home/<name> is critical (R9a), so
// the exact name does not matter.
const homeDir = "/home/user"

func marker(label string) string {
	return string(markOpen) + label + string(markClose)
}

func hasMarker(s string) bool { return strings.ContainsRune(s, markOpen) }

// stripMarkers gives the empty-expansion form of s (R17).
func stripMarkers(s string) string {
	if !hasMarker(s) {
		return s
	}
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == markOpen:
			in = true
		case r == markClose:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// onlyMarker reports s consisting of a single marker and nothing else.
func onlyMarker(s string) bool {
	return strings.HasPrefix(s, string(markOpen)) && strings.HasSuffix(s, string(markClose)) &&
		strings.Count(s, string(markOpen)) == 1
}

// fflags describe how a field or stream was produced.
type fflags uint16

const (
	fObf      fflags = 1 << iota // R4: split quoting, ANSI-C escapes, braces, IFS
	fEnv                         // an environment variable was expanded (R3)
	fSubst                       // a command substitution was expanded
	fDecoded                     // text went through base64, rev, tr, printf escapes … (R4)
	fDownload                    // text came from a generic downloader (R9e)
	fSecret                      // text carries secret material (R11)
	fUnicode                     // deceptive unicode was mapped (R19)
	fGlob                        // unquoted glob characters that cannot be resolved
	fQuoted                      // the word was quoted (data, not a pattern)
	fTilde                       // the word started with an unquoted ~
	fOwnTree                     // names found at run time under a directory holding the daemon's files (R13)
)

// contentFlags are the flags that describe where text came from and so flow
// from a stream into the words built from it.
const contentFlags = fDecoded | fDownload | fSecret | fOwnTree

type field struct {
	s  string
	fl fflags
}

func lit(s string) field { return field{s: s} }

func fieldStrings(fs []field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.s
	}
	return out
}

func joinFields(fs []field) (string, fflags) {
	var fl fflags
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.s
		fl |= f.fl
	}
	return strings.Join(parts, " "), fl
}

// env answers the expander's variable questions from a scope. It never
// consults the real environment: unknown names expand to markers.
type env struct {
	a  *analyzer
	sc *scope
	fl *fflags
}

func (e env) Get(name string) shellword.Var {
	str := func(s string) shellword.Var { return shellword.Var{Set: true, Str: s} }
	if t := e.sc.taint[name]; t != 0 {
		*e.fl |= t
	}
	if arr, ok := e.sc.arrays[name]; ok {
		e.a.sensitive = true
		return shellword.Var{Set: true, Indexed: true, List: arr}
	}
	if vals, ok := e.sc.vars[name]; ok {
		e.a.sensitive = true
		if len(vals) == 1 {
			if name == "IFS" {
				*e.fl |= fObf
			}
			return str(vals[0])
		}
		return str(marker(name))
	}
	switch name {
	case "@", "*":
		*e.fl |= fEnv
		if e.sc.params != nil {
			e.a.sensitive = true
			return shellword.Var{Set: true, Indexed: true, List: e.sc.params}
		}
		return shellword.Var{Set: true, Indexed: true, List: []string{marker(name)}}
	case "#":
		if e.sc.params != nil {
			return str(itoa(len(e.sc.params)))
		}
	case "0":
		if e.sc.arg0 != "" {
			e.a.sensitive = true
			return str(e.sc.arg0)
		}
		return str("bash")
	case "IFS":
		if e.sc.customIFS {
			*e.fl |= fObf
		}
		return str(" \t\n")
	case "HOME":
		*e.fl |= fEnv
		return str(homeDir)
	case "PWD":
		if len(e.sc.cwd) == 1 && strings.HasPrefix(e.sc.cwd[0], "/") {
			return str(e.sc.cwd[0])
		}
	case "SHELL", "BASH":
		*e.fl |= fEnv
		return str("/bin/bash")
	}
	if len(name) == 1 && name[0] >= '1' && name[0] <= '9' && e.sc.params != nil {
		e.a.sensitive = true
		i := int(name[0] - '1')
		if i < len(e.sc.params) {
			return str(e.sc.params[i])
		}
		return str("")
	}
	if strings.HasPrefix(name, "HOME ") {
		if user := strings.TrimPrefix(name, "HOME "); user == "root" {
			return str("/root")
		} else if syntax.ValidName(user) {
			return str("/home/" + user)
		}
	}
	*e.fl |= fEnv
	return str(marker(name))
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// hooks answer the expander: variables from the scope, and substitutions
// analysed, never run.
func (a *analyzer) hooks(sc *scope, fl *fflags) shellword.Hooks {
	return shellword.Hooks{
		Var: env{a: a, sc: sc, fl: fl}.Get,
		CmdSubst: func(cs *syntax.CmdSubst) (string, error) {
			*fl |= fSubst
			out := a.subst(sc, cs.Stmts, ttyStream())
			*fl |= out.flags & contentFlags
			if !out.known() && numericSubst(cs) {
				return numMark, nil
			}
			return out.text, nil
		},
		ProcSubst: func(ps *syntax.ProcSubst) (string, error) {
			in := ttyStream()
			if ps.Op == syntax.CmdOut {
				in = unknownStream(0)
			}
			out := a.subst(sc, ps.Stmts, in)
			name := "/dev/fd/" + itoa(a.nextFD)
			a.nextFD++
			if a.fdStreams == nil {
				a.fdStreams = map[string]stream{}
			}
			out.piped = true
			a.fdStreams[name] = out
			*fl |= out.flags & contentFlags
			return name, nil
		},
	}
}

// subst analyses the statements of a substitution in a subshell.
func (a *analyzer) subst(sc *scope, list []*syntax.Stmt, in stream) stream {
	if a.depth >= maxDepth {
		a.overflow = true
		return unknownStream(0)
	}
	a.depth++
	defer func() { a.depth-- }()
	return a.stmts(sc.clone(), list, in)
}

// wordFields expands one word as an argument: brace expansion, tilde,
// parameters, substitutions, splitting and quote removal.
func (a *analyzer) wordFields(sc *scope, w *syntax.Word) []field {
	if w == nil {
		return nil
	}
	fl := staticFlags(w)
	if s, ok := plainWord(w); ok {
		return []field{{s: s, fl: fl}}
	}
	a.codeInWord(sc, w)
	var out []field
	// FieldsSeq is lazy, so a brace expansion such as {1..100000000}
	// stops at the bound instead of being built in full.
	for s, err := range a.f.exp.Fields(a.hooks(sc, &fl), w) {
		if err != nil {
			return []field{{s: marker("word"), fl: fl | fEnv}}
		}
		if len(out) >= maxFieldsPerWord {
			out = append(out, field{s: marker("more"), fl: fl | fObf})
			break
		}
		out = append(out, field{s: s})
		a.spend(len(s))
	}
	for i := range out {
		out[i].fl |= fl
	}
	return out
}

// spend counts bytes produced by expansion against the analysis budget, so
// that values which grow on every step (x=${x//?/$x}) cannot exhaust memory.
func (a *analyzer) spend(n int) {
	a.bytes += n
	if a.bytes > maxExpandBytes {
		a.overflow = true
	}
}

// plainWord is the fast path for words that need no expansion: literals
// and quoted literals without escapes, braces or a leading tilde. It keeps
// allocations low on the common path (most words of most commands).
func plainWord(w *syntax.Word) (string, bool) {
	if len(w.Parts) == 1 {
		switch p := w.Parts[0].(type) {
		case *syntax.Lit:
			if plainLit(p.Value, true) {
				return p.Value, true
			}
		case *syntax.SglQuoted:
			if !p.Dollar {
				return p.Value, true
			}
		case *syntax.DblQuoted:
			if len(p.Parts) == 0 {
				return "", true
			}
			if l, ok := p.Parts[0].(*syntax.Lit); ok && len(p.Parts) == 1 && !strings.ContainsRune(l.Value, '\\') {
				return l.Value, true
			}
		}
	}
	return "", false
}

func plainLit(s string, first bool) bool {
	if s == "" || first && s[0] == '~' {
		return false
	}
	return !strings.ContainsAny(s, "\\{")
}

// wordValue expands a word as an assignment value (no splitting or globbing).
func (a *analyzer) wordValue(sc *scope, w *syntax.Word) ([]string, fflags) {
	fl := staticFlags(w)
	if s, ok := plainWord(w); ok {
		return []string{s}, fl
	}
	a.codeInWord(sc, w)
	s, err := a.f.exp.Literal(a.hooks(sc, &fl), w)
	if err != nil {
		return []string{marker("value")}, fl
	}
	a.spend(len(s))
	return []string{s}, fl
}

// document expands a here-document body written with an unquoted delimiter.
func (a *analyzer) document(sc *scope, w *syntax.Word) (string, fflags) {
	var fl fflags
	a.codeInWord(sc, w)
	s, err := a.f.exp.Document(a.hooks(sc, &fl), w)
	if err != nil {
		return marker("heredoc"), fl
	}
	return s, fl
}

// staticFlags reads obfuscation and quoting from the word's syntax (R4).
func staticFlags(w *syntax.Word) fflags {
	var fl fflags
	parts := w.Parts
	if len(parts) == 0 {
		return fl
	}
	hasQuote, hasExp := false, false
	for i, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if i == 0 && strings.HasPrefix(p.Value, "~") {
				fl |= fTilde
			}
			if strings.ContainsAny(p.Value, "*?[") {
				fl |= fGlob
			}
			if idx := strings.IndexByte(p.Value, '\\'); idx > 0 || (idx == 0 && strings.Count(p.Value, "\\") > 1) {
				fl |= fObf
			}
			if strings.ContainsRune(p.Value, '{') && (strings.Contains(p.Value, ",") || strings.Contains(p.Value, "..")) {
				cp := *w
				if syntax.SplitBraces(&cp) {
					fl |= fObf
				}
			}
		case *syntax.SglQuoted:
			hasQuote = true
			if p.Dollar && strings.ContainsRune(p.Value, '\\') {
				fl |= fObf | fDecoded
			}
		case *syntax.DblQuoted:
			hasQuote = true
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					hasExp = true
				}
			}
		case *syntax.ParamExp:
			hasExp = true
			if p.Exp != nil && p.Exp.Op == syntax.OtherParamOps && p.Exp.Word != nil && (p.Exp.Word.Lit() == "E" || p.Exp.Word.Lit() == "P") {
				// ${x@E} decodes escapes, ${x@P} expands a prompt (R4).
				fl |= fObf | fDecoded
			}
			if p.Slice != nil || p.Repl != nil || p.Excl || (p.Exp != nil && p.Exp.Op != syntax.DefaultUnset && p.Exp.Op != syntax.DefaultUnsetOrNull) {
				fl |= fObf
			}
		case *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst:
			hasExp = true
		case *syntax.ExtGlob:
			fl |= fGlob
		}
	}
	if hasQuote {
		fl |= fQuoted
	}
	if len(parts) > 1 && (hasQuote || hasExp) {
		fl |= fObf
	}
	return fl
}

// variant is one way a simple command may expand: one value for each
// variable that has several possible values.
type variant struct {
	sc        *scope
	argv      []field
	env       map[string]field
	overrides map[string]string
}

// expandCall expands a simple command's words, once per combination of the
// possible values of the variables it uses (bounded by maxCombos).
func (a *analyzer) expandCall(sc *scope, c *syntax.CallExpr) []variant {
	multi := multiValued(sc, c)
	combos := []map[string]string{nil}
	for _, name := range multi {
		var next []map[string]string
		for _, cmb := range combos {
			for _, v := range sc.vars[name] {
				m := map[string]string{name: v}
				for k, x := range cmb {
					m[k] = x
				}
				next = append(next, m)
			}
		}
		if len(next) > maxCombos {
			break
		}
		combos = next
	}
	out := make([]variant, 0, len(combos))
	for _, cmb := range combos {
		vsc := sc
		if len(cmb) > 0 {
			vsc = sc.clone()
			for k, v := range cmb {
				vsc.vars[k] = []string{v}
			}
		}
		v := variant{sc: vsc, overrides: cmb}
		for _, w := range c.Args {
			v.argv = append(v.argv, a.wordFields(vsc, w)...)
		}
		for _, as := range c.Assigns {
			if as.Name == nil {
				continue
			}
			if v.env == nil {
				v.env = map[string]field{}
			}
			val := field{}
			if as.Value != nil {
				vals, fl := a.wordValue(vsc, as.Value)
				val = field{s: vals[0], fl: fl}
			}
			v.env[as.Name.Value] = val
		}
		out = append(out, v)
	}
	return out
}

// multiValued lists variables used by c that have more than one possible value.
func multiValued(sc *scope, c *syntax.CallExpr) []string {
	var names []string
	syntax.Walk(c, func(n syntax.Node) bool {
		if pe, ok := n.(*syntax.ParamExp); ok && pe.Param != nil {
			name := pe.Param.Value
			if len(sc.vars[name]) > 1 && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		return true
	})
	return names
}

// sanitizeInput replaces private-use runes (our markers) and reports them.
func sanitizeInput(s string) (string, bool) {
	found := false
	for _, r := range s {
		if r >= 0xE000 && r <= 0xF8FF {
			found = true
			break
		}
	}
	if !found {
		return s, false
	}
	return strings.Map(func(r rune) rune {
		if r >= 0xE000 && r <= 0xF8FF {
			return '?'
		}
		return r
	}, s), true
}
