package risk

import (
	"regexp"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Bash features that evaluate data as code (risk-policy.md R3, "text bash
// evaluates as code"): arithmetic, which evaluates the values of the
// variables it names as expressions again, so that a subscript inside one
// (`a[$(cmd)]`) runs its substitution; prompt expansion (${x@P}, PS0–PS4);
// and builtins that take a command (hash -p, mapfile -C, complete -C, bind
// -x, fc, enable -f). Each is at least the risk of what it can run, and
// high when that is not known.

// maxArithDepth bounds how far arithmetic follows a variable whose value
// names another variable (bash follows such chains too).
const maxArithDepth = 8

// numMark stands for a number known only at run time: what a counting
// command such as `wc -l` prints. Arithmetic on it runs nothing.
var numMark = marker("#")

// numericVars are bash's own numeric variables and the positional
// parameters: the agent's line does not choose them.
var numericVars = map[string]bool{"#": true, "?": true, "$": true, "!": true, "-": true, "RANDOM": true, "SRANDOM": true,
	"LINENO": true, "SECONDS": true, "EPOCHSECONDS": true, "EPOCHREALTIME": true, "BASHPID": true, "PPID": true,
	"UID": true, "EUID": true, "OPTIND": true, "OPTERR": true, "COLUMNS": true, "LINES": true, "SHLVL": true, "HISTCMD": true}

// dataLabels are the markers for text read at run time (a substitution's
// output, input, a file). Evaluated as arithmetic it can carry code; an
// environment variable's marker is the daemon's own environment, which the
// line did not write (anything the line assigns is tracked literally).
var dataLabels = map[string]bool{"stdout": true, "stdin": true, "data": true, "tty": true, "heredoc": true, "value": true, "word": true, "file": true}

// dataMark stands for text a builtin read at run time (read, mapfile).
var dataMark = marker("data")

// hasDataMarker reports a value holding text read at run time.
func hasDataMarker(s string) bool {
	for {
		i := strings.IndexRune(s, markOpen)
		if i < 0 {
			return false
		}
		s = s[i+len(string(markOpen)):]
		j := strings.IndexRune(s, markClose)
		if j < 0 {
			return false
		}
		if dataLabels[s[:j]] {
			return true
		}
		s = s[j:]
	}
}

// arithExpr analyses an arithmetic expression as bash evaluates it: every
// substitution in it runs, and every variable it names has its value
// evaluated as an expression in turn.
func (a *analyzer) arithExpr(sc *scope, e syntax.ArithmExpr, depth int) {
	if e == nil || depth > maxArithDepth {
		return
	}
	syntax.Walk(e, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.BinaryArithm:
			if n.Op >= syntax.Assgn {
				if w, ok := n.X.(*syntax.Word); ok {
					if name := w.Lit(); syntax.ValidName(name) {
						// The result of arithmetic is a number.
						a.arithExpr(sc, n.Y, depth)
						sc.set(name, marker(name))
						return false
					}
				}
			}
		case *syntax.Word:
			a.arithWord(sc, n, depth)
			return false
		}
		return true
	})
}

// arithWord evaluates one operand of an arithmetic expression.
func (a *analyzer) arithWord(sc *scope, w *syntax.Word, depth int) {
	if name := w.Lit(); name != "" {
		if syntax.ValidName(name) {
			a.arithName(sc, name, depth)
		} else if i := strings.IndexByte(name, '['); i > 0 && strings.HasSuffix(name, "]") {
			a.arithText(sc, name[i+1:len(name)-1], name, depth+1)
		}
		return
	}
	a.codeInWord(sc, w)
	vals, _ := a.wordValue(sc, w)
	for _, v := range vals {
		a.arithText(sc, v, "an operand", depth+1)
	}
}

// arithName evaluates a variable named in arithmetic.
func (a *analyzer) arithName(sc *scope, name string, depth int) {
	if numericVars[name] || depth > maxArithDepth {
		return
	}
	vals, ok := sc.vars[name]
	if !ok {
		return
	}
	a.sensitive = true
	for _, v := range vals {
		a.arithText(sc, v, "$"+name, depth+1)
	}
}

// arithText evaluates text as an arithmetic expression, as bash does with
// a variable's value.
func (a *analyzer) arithText(sc *scope, s, from string, depth int) {
	if s == "" || depth > maxArithDepth {
		return
	}
	if hasMarker(s) {
		if hasDataMarker(s) {
			a.add(High, "R3 arithmetic on run-time data", from+" is evaluated as an expression; a subscript in it would run commands")
		}
		s = stripMarkers(s)
	}
	if isArithLiteral(s) {
		return
	}
	if syntax.ValidName(s) {
		a.arithName(sc, s, depth)
		return
	}
	p := parsers.Get().(*syntax.Parser)
	e, err := p.Arithmetic(strings.NewReader(s))
	parsers.Put(p)
	if err != nil {
		if strings.ContainsAny(s, "$`") {
			a.promptText(sc, s, 0, from)
		}
		return
	}
	a.arithExpr(sc, e, depth)
}

// isArithLiteral reports text made only of numbers and operators.
func isArithLiteral(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || strings.IndexByte(" \t\n+-*/%<>=!&|^~?:(),", c) >= 0) {
			return false
		}
	}
	return true
}

// codeInWord finds the parts of a word that bash evaluates as code when it
// expands it: arithmetic expansions, array subscripts and slice offsets
// (arithmetic contexts), and prompt expansion (${x@P}). Substitutions are
// left to the expander's hooks.
func (a *analyzer) codeInWord(sc *scope, w *syntax.Word) {
	if w == nil {
		return
	}
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		case *syntax.ArithmExp:
			a.arithExpr(sc, n.X, 0)
			return false
		case *syntax.ParamExp:
			if n.Index != nil {
				a.arithExpr(sc, n.Index, 0)
			}
			if n.Slice != nil {
				a.arithExpr(sc, n.Slice.Offset, 0)
				a.arithExpr(sc, n.Slice.Length, 0)
			}
			if n.Exp != nil && n.Exp.Op == syntax.OtherParamOps && n.Exp.Word != nil && n.Exp.Word.Lit() == "P" && n.Param != nil {
				name := n.Param.Value
				vals, ok := sc.vars[name]
				if !ok {
					vals = []string{marker(name)}
				}
				for _, v := range vals {
					a.promptText(sc, v, 0, "${"+name+"@P}")
				}
			}
		}
		return true
	})
}

// promptText classifies text that bash expands like a prompt string: its
// substitutions run. Text known only at run time is high.
func (a *analyzer) promptText(sc *scope, text string, fl fflags, via string) {
	if hasMarker(text) {
		a.events |= evUnknownExec
		a.add(High, "R3 dynamic command", via+" expands text known only at run time as a prompt")
		text = stripMarkers(text)
	}
	if !strings.ContainsAny(text, "$`") {
		return
	}
	p := parsers.Get().(*syntax.Parser)
	w, err := p.Document(strings.NewReader(text))
	parsers.Put(p)
	if err != nil {
		a.add(High, "R2 unparseable", via+" holds a substitution that cannot be parsed")
		return
	}
	if a.depth >= maxDepth {
		a.overflow = true
		return
	}
	a.depth++
	a.document(sc, w)
	a.depth--
	if fl&fDecoded != 0 {
		a.add(High, "R4 obfuscation floor", via+" runs text recovered through a decoding layer")
	}
}

// isPromptVar reports the prompt strings bash expands (PS4 under set -x).
func isPromptVar(name string) bool {
	switch name {
	case "PS0", "PS1", "PS2", "PS3", "PS4":
		return true
	}
	return false
}

// numericSubst reports a substitution whose output is a count or a number
// (`$(wc -l < f)`, `$(date +%s)`, `$(ls | wc -l)`): arithmetic on it runs
// nothing, so it need not take the run-time data floor.
func numericSubst(cs *syntax.CmdSubst) bool {
	if len(cs.Stmts) != 1 {
		return false
	}
	st := cs.Stmts[0]
	for {
		b, ok := st.Cmd.(*syntax.BinaryCmd)
		if !ok || b.Op != syntax.Pipe {
			break
		}
		st = b.Y
	}
	c, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		return false
	}
	switch c.Args[0].Lit() {
	case "wc", "nproc", "expr", "seq", "getconf":
		return true
	case "date":
		return len(c.Args) == 2 && strings.HasPrefix(c.Args[1].Lit(), "+%")
	case "id":
		return len(c.Args) == 2 && (c.Args[1].Lit() == "-u" || c.Args[1].Lit() == "-g")
	case "stat":
		return len(c.Args) > 1 && (strings.HasPrefix(c.Args[1].Lit(), "-c%") || c.Args[1].Lit() == "-c")
	}
	return false
}

// hHash: `hash -p PATH NAME` makes NAME run PATH for the rest of the shell.
// It is high (a command name rebound, like PATH), the program is classified
// as if run, and NAME run later in the line runs it.
func hHash(c *call) {
	args := c.args()
	for i := 0; i < len(args); i++ {
		s := args[i].s
		if s != "-p" && !(strings.HasPrefix(s, "-") && strings.Contains(s, "p")) {
			continue
		}
		if i+2 > len(args)-1 && i+1 >= len(args) {
			break
		}
		if i+1 >= len(args) {
			break
		}
		target := args[i+1]
		c.add(High, "R13 command rebinding", "hash -p makes later commands run "+printable(target.s))
		if c.a.hashed == nil {
			c.a.hashed = map[string]field{}
		}
		for _, n := range args[i+2:] {
			c.a.hashed[n.s] = target
		}
		c.a.runArgv(c.sc, []field{target}, c.env, ttyStream(), callOpts{rebound: true})
		return
	}
	c.add(Safe, "R15 read-only", "hash")
}

// hRead: read and mapfile store text read at run time in variables; a
// callback (mapfile -C) is a command run every few lines.
func hRead(c *call) {
	c.add(Safe, "R15 read-only", c.name)
	args := c.args()
	takesValue := "dinNptu"
	if c.name != "read" {
		takesValue = "dnOsuCc"
	}
	var names []string
	for i := 0; i < len(args); i++ {
		s := args[i].s
		if strings.HasPrefix(s, "-") && len(s) > 1 {
			opt := s[len(s)-1:]
			if strings.Contains(takesValue, opt) && i+1 < len(args) {
				if opt == "C" && c.name != "read" {
					cb := args[i+1]
					c.a.scriptIn(c.sc, cb.s+" 0 line", cb.fl, c.name+" -C callback", ttyStream(), nil, true)
				}
				if opt == "a" {
					names = append(names, args[i+1].s)
				}
				i++
			}
			continue
		}
		names = append(names, s)
	}
	if len(names) == 0 {
		names = []string{"REPLY"}
		if c.name != "read" {
			names = []string{"MAPFILE"}
		}
	}
	for _, n := range names {
		if syntax.ValidName(n) {
			c.sc.set(n, dataMark)
		}
	}
}

// hEnable: `enable -f FILE NAME` loads a shared object into the shell as a
// builtin, which runs its code: high, forbidden when it was just downloaded.
func hEnable(c *call) {
	args := c.args()
	for i, a := range args {
		if (a.s == "-f" || strings.HasPrefix(a.s, "-") && strings.Contains(a.s, "f")) && i+1 < len(args) {
			if args[i+1].fl&fDownload != 0 || c.a.isDownloaded(c.sc, args[i+1].s) {
				c.add(Forbidden, "R9e downloaded code", "enable -f loads a downloaded file")
			}
			c.add(High, "R13 loads a builtin", "enable -f runs code from "+printable(args[i+1].s)+" inside the shell")
			return
		}
	}
	c.add(Safe, "R15 read-only", "enable")
}

// hComplete: complete -C and compgen -C run a command to list completions
// (compgen at once, complete on the next completion); -F runs a function.
func hComplete(c *call) {
	c.add(Safe, "R15 read-only", c.name)
	args := c.args()
	for i := 0; i+1 < len(args); i++ {
		switch args[i].s {
		case "-C":
			c.a.scriptIn(c.sc, args[i+1].s, args[i+1].fl, c.name+" -C", ttyStream(), nil, true)
			i++
		case "-F":
			if body, ok := c.sc.funcs[args[i+1].s]; ok && c.name == "compgen" {
				c.a.callFunc(c.sc, args[i+1].s, body, nil, ttyStream())
			}
			i++
		case "-A", "-G", "-W", "-X", "-P", "-S", "-o", "-E", "-D", "-I":
			i++
		}
	}
}

// hFc: fc without -l edits a command from history and runs it (fc -s runs
// it again at once); which command that is is known only at run time.
func hFc(c *call) {
	for _, a := range c.args() {
		if strings.HasPrefix(a.s, "-") && strings.Contains(a.s, "l") {
			c.add(Safe, "R15 read-only", "fc -l lists history")
			return
		}
	}
	c.a.events |= evUnknownExec
	c.add(High, "R3 dynamic command", "fc runs a command from history, known only at run time")
}

// rxBindX splits a `bind -x` binding into its key sequence and command.
var rxBindX = regexp.MustCompile(`^\s*("(?:\\.|[^"\\])*"|[^:\s]+)\s*:\s*(.*)$`)

// hBind: bind -x binds a key to a shell command.
func hBind(c *call) {
	c.add(Safe, "R15 read-only", "bind")
	args := c.args()
	for i := 0; i < len(args); i++ {
		s := args[i].s
		if s != "-x" && !(strings.HasPrefix(s, "-") && strings.HasSuffix(s, "x")) || i+1 >= len(args) {
			continue
		}
		b := args[i+1]
		m := rxBindX.FindStringSubmatch(b.s)
		if m == nil {
			c.a.scriptIn(c.sc, b.s, b.fl, "bind -x", ttyStream(), nil, true)
			i++
			continue
		}
		cmd := strings.TrimSpace(m[2])
		if len(cmd) >= 2 && (cmd[0] == '"' || cmd[0] == '\'') && cmd[len(cmd)-1] == cmd[0] {
			cmd = cmd[1 : len(cmd)-1]
		}
		c.a.scriptIn(c.sc, cmd, b.fl, "bind -x", ttyStream(), nil, true)
		i++
	}
}

// envValue is the value a program started by this command sees for name:
// the command's own assignments, else what the line assigned earlier.
func (c *call) envValue(name string) (field, bool) {
	if v, ok := c.env[name]; ok {
		return v, true
	}
	vals, ok := c.sc.vars[name]
	if !ok {
		return field{}, false
	}
	if len(vals) == 1 {
		return field{s: vals[0]}, true
	}
	return field{s: marker(name)}, true
}

// rxGitConfigParam reads one 'key'='value' pair of GIT_CONFIG_PARAMETERS.
var rxGitConfigParam = regexp.MustCompile(`'([^']*)'(?:='([^']*)')?`)

// gitEnvConfig applies the configuration git takes from its environment
// (GIT_CONFIG_COUNT with GIT_CONFIG_KEY_n/VALUE_n, GIT_CONFIG_PARAMETERS)
// as if given with -c.
func (c *call) gitEnvConfig() {
	if n, ok := c.envValue("GIT_CONFIG_COUNT"); ok {
		count, err := strconv.Atoi(strings.TrimSpace(n.s))
		if err != nil || count > 16 {
			count = 16
		}
		for i := range count {
			k, okK := c.envValue("GIT_CONFIG_KEY_" + strconv.Itoa(i))
			v, okV := c.envValue("GIT_CONFIG_VALUE_" + strconv.Itoa(i))
			if !okK && !okV {
				if err == nil {
					c.add(High, "R3 dynamic command", "git reads configuration entry "+strconv.Itoa(i)+" from its environment")
				}
				continue
			}
			if hasMarker(k.s) {
				c.add(High, "R3 dynamic command", "git reads a configuration key known only at run time")
				continue
			}
			if !okV {
				v = field{s: marker("GIT_CONFIG_VALUE_" + strconv.Itoa(i))}
			}
			c.gitConfigValue(k.s, v)
		}
	}
	if p, ok := c.envValue("GIT_CONFIG_PARAMETERS"); ok {
		if hasMarker(p.s) {
			c.add(High, "R3 dynamic command", "GIT_CONFIG_PARAMETERS known only at run time")
		}
		for _, m := range rxGitConfigParam.FindAllStringSubmatch(stripMarkers(p.s), -1) {
			k, v := m[1], m[2]
			if m[2] == "" {
				k, v, _ = strings.Cut(m[1], "=")
			}
			c.gitConfigValue(k, field{s: v, fl: p.fl})
		}
	}
}

// gitConfigEnv applies `git --config-env=KEY=ENVVAR`: KEY takes the value
// of ENVVAR.
func (c *call) gitConfigEnv(spec field) {
	k, envName, ok := strings.Cut(spec.s, "=")
	if !ok {
		return
	}
	v, ok := c.envValue(envName)
	if !ok {
		v = field{s: marker(envName), fl: fEnv}
	}
	c.gitConfigValue(k, v)
}

// lessCommands classifies the commands in less options (the LESS variable
// or less's arguments): `+cmd` runs cmd at start, and `!` in one is a shell
// escape.
func (a *analyzer) lessCommands(sc *scope, opts field, via string) {
	for _, tok := range strings.Fields(opts.s) {
		cmd, ok := strings.CutPrefix(tok, "+")
		if !ok {
			continue
		}
		cmd = strings.TrimPrefix(cmd, "+")
		if i := strings.IndexAny(cmd, "!|"); i >= 0 {
			a.script(sc, cmd[i+1:], opts.fl, via+" shell escape")
		}
	}
	if hasMarker(opts.s) && strings.Contains(opts.s, "+") {
		a.add(High, "R3 dynamic command", via+" holds commands known only at run time")
	}
}

// testArith applies arithmetic to the operands of [[ … ]] that bash
// evaluates as expressions: both sides of -eq, -ne, -lt, -le, -gt, -ge, and
// the subscript of -v a[i].
func (a *analyzer) testArith(sc *scope, x syntax.TestExpr) {
	syntax.Walk(x, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		case *syntax.BinaryTest:
			switch n.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				for _, side := range []syntax.TestExpr{n.X, n.Y} {
					if w, ok := side.(*syntax.Word); ok {
						a.arithWord(sc, w, 0)
					}
				}
			}
		case *syntax.UnaryTest:
			if w, ok := n.X.(*syntax.Word); ok && n.Op == syntax.TsVarSet {
				vals, _ := a.wordValue(sc, w)
				for _, v := range vals {
					if i := strings.IndexByte(v, '['); i > 0 && strings.HasSuffix(v, "]") {
						a.arithText(sc, v[i+1:len(v)-1], "the subscript of -v", 1)
					}
				}
			}
		}
		return true
	})
}
