package risk

import (
	"regexp"
	"strings"
)

func registerShellHandlers(reg func(func(*call), ...string)) {
	reg(hShell, "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "rbash", "fish", "tcsh", "csh", "pwsh")
	reg(hEval, "eval")
	reg(hSource, "source", ".")
	reg(hAlias, "alias")
	reg(levelHandler(Safe, "R15 read-only"), "unalias")
	reg(hTrap, "trap")
	reg(hHash, "hash")
	reg(hRead, "read", "mapfile", "readarray")
	reg(hEnable, "enable")
	reg(hComplete, "complete", "compgen")
	reg(hFc, "fc")
	reg(hBind, "bind")
	reg(hExport, "export", "declare", "typeset", "readonly")
	reg(hCd, "cd", "pushd")
	reg(hPopd, "popd")
	reg(hInterp, "python", "python2", "python3", "pypy", "pypy3", "perl", "ruby", "node", "nodejs", "php", "lua", "luajit",
		"Rscript", "tclsh", "deno", "irb", "jshell", "groovy", "julia", "osascript")
	for _, v := range []string{"3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14"} {
		reg(hInterp, "python"+v)
	}
}

// hShell: a shell given -c runs a script; given a file runs a local script
// (R14); reading stdin runs whatever was piped in (R4, R9e); with none of
// these it is an interactive shell (R10 when elevated).
func hShell(c *call) {
	c.readsStdin()
	c.a.events |= evShellAny
	args := c.args()
	var script *field
	noExec := false
	fromStdin := false
	i := 0
	for ; i < len(args); i++ {
		s := args[i].s
		if s == "--" || s == "-" {
			i++
			break
		}
		if !strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "+") {
			break
		}
		if strings.HasPrefix(s, "--") {
			if s == "--rcfile" || s == "--init-file" {
				i++
			}
			continue
		}
		for _, ch := range s[1:] {
			switch ch {
			case 'c':
				script = &field{}
			case 'n':
				noExec = s[0] == '-'
			case 's':
				fromStdin = true
			case 'o', 'O':
				i++
			}
		}
	}
	rest := args[min(i, len(args)):]
	if script != nil {
		if len(rest) == 0 {
			c.add(Safe, "R15 read-only", c.name+" -c with no script")
			return
		}
		*script = rest[0]
		if noExec {
			c.add(Safe, "R15 read-only", c.name+" -n only parses")
			return
		}
		var params []string
		arg0 := ""
		if len(rest) > 1 {
			arg0 = rest[1].s
		}
		if len(rest) > 2 {
			params = fieldStrings(rest[2:])
		}
		c.setOut(c.a.scriptArg0(c.sc, script.s, script.fl, c.name+" -c", c.in, arg0, params, false))
		return
	}
	if noExec {
		c.add(Safe, "R15 read-only", c.name+" -n only parses")
		return
	}
	if len(rest) > 0 && !fromStdin {
		c.runScriptFile(rest[0], rest[1:])
		return
	}
	if c.in.piped {
		c.a.events |= evShellStdin
		if c.in.file != "" && !c.in.known() && c.in.flags&(fDownload|fDecoded) == 0 {
			// `bash < x.sh` and `cat x.sh | bash` run a local script.
			c.runScriptFile(field{s: c.in.file}, nil)
			return
		}
		var params []string
		if fromStdin {
			// sh -s ARGS: the arguments are the script's $1 …
			params = fieldStrings(rest)
		}
		c.setOut(c.a.scriptIn(c.sc, c.in.text, c.in.flags, c.name+" reading stdin", ttyStream(), params, false))
		return
	}
	if c.opts.elevated {
		c.add(Dangerous, "R10 interactive root shell", c.name+" as root")
		return
	}
	c.add(Moderate, "R14 workspace change", "starts a nested "+c.name+" session")
}

// runScriptFile classifies `bash FILE` and `source FILE`.
func (c *call) runScriptFile(file field, params []field) {
	c.readsStdin()
	if s, ok := c.a.fdStreams[file.s]; ok {
		c.a.events |= evShellStdin
		c.setOut(c.a.scriptIn(c.sc, s.text, s.flags, c.name+" "+file.s, c.in, fieldStrings(params), c.name == "source" || c.name == "."))
		return
	}
	if file.s == "/dev/stdin" || file.s == "-" {
		c.a.events |= evShellStdin
		c.setOut(c.a.scriptIn(c.sc, c.in.text, c.in.flags, c.name+" /dev/stdin", ttyStream(), fieldStrings(params), false))
		return
	}
	if file.fl&fDownload != 0 || c.a.isDownloaded(c.sc, file.s) {
		c.add(Forbidden, "R9e downloaded code", c.name+" runs a downloaded file")
		return
	}
	if hasMarker(file.s) {
		c.add(High, "R3 dynamic command", c.name+" runs a script whose name is known only at run time")
		return
	}
	if s, p, ok := c.a.writtenContent(c.sc, file.s); ok {
		c.setOut(c.runWritten(p, s, params, c.name))
		return
	}
	for _, r := range c.sc.resolvePath(file.s) {
		if isSystemPath(r) && !strings.HasPrefix(r, "/usr/share/") && !strings.HasPrefix(r, "/opt/") {
			c.add(High, "R20 unknown executable", c.name+" runs "+r)
			return
		}
	}
	c.add(Moderate, "R14 project script", c.name+" "+file.s)
}

func hEval(c *call) {
	text, fl := joinFields(c.args())
	if text == "" {
		c.add(Safe, "R15 read-only", "eval of nothing")
		return
	}
	c.setOut(c.a.scriptIn(c.sc, text, fl, "eval", c.in, nil, true))
}

func hSource(c *call) {
	args := c.args()
	if len(args) == 0 {
		c.add(High, "R2 unparseable", "source without a file")
		return
	}
	c.runScriptFile(args[0], args[1:])
}

// hAlias records aliases and classifies their bodies: a definition lives on
// in the PTY, so a harmful body counts now (R9h).
func hAlias(c *call) {
	c.add(Safe, "R15 read-only", "alias")
	for _, a := range c.args() {
		name, body, ok := strings.Cut(a.s, "=")
		if !ok || strings.HasPrefix(a.s, "-") {
			continue
		}
		if c.a.aliases == nil {
			c.a.aliases = map[string]string{}
		}
		c.a.aliases[name] = body
		c.a.scriptIn(c.sc, body, a.fl, "alias "+name, ttyStream(), nil, false)
	}
}

// hTrap classifies a trap's handler: it runs in this shell when the
// signal (or EXIT, DEBUG, ERR, RETURN) arrives.
func hTrap(c *call) {
	args := c.args()
	c.add(Safe, "R15 read-only", "trap")
	for len(args) > 0 && strings.HasPrefix(args[0].s, "-") && args[0].s != "-" {
		if args[0].s == "--" {
			args = args[1:]
			break
		}
		// -p, -l and -P print; they set nothing.
		return
	}
	if len(args) >= 2 && args[0].s != "-" {
		c.a.scriptIn(c.sc, args[0].s, args[0].fl, "trap handler", ttyStream(), nil, true)
	}
}

// hExport handles `export NAME=V` reached through a wrapper such as
// `command export`; the parser gives plain ones to declClause.
func hExport(c *call) {
	c.add(Safe, "R15 read-only", c.name)
	for _, a := range c.args() {
		if k, v, ok := strings.Cut(a.s, "="); ok && !strings.HasPrefix(a.s, "-") {
			c.sc.set(k, v)
			c.a.checkEnvVar(c.sc, k, []string{v}, a.fl, c.name == "export")
		}
	}
	if len(c.args()) == 0 || hasArg(c.args(), "-p") {
		c.setOut(unknownStream(fSecret))
	}
}

// hCd changes the tracked working directory (R18).
func hCd(c *call) {
	c.a.sensitive = true
	c.add(Safe, "R15 read-only", c.name)
	if c.name == "cd" {
		// cd prints nothing, so $(cd ~ && pwd) is pwd's output alone.
		c.setOut(stream{})
	}
	p := getopt(c.args(), "", nil, true)
	if len(p.pos) == 0 {
		c.sc.cwd = []string{homeDir}
		return
	}
	t := p.pos[0].s
	quoted := p.pos[0].fl&fQuoted != 0
	if t == "-" {
		c.sc.cwd = []string{marker("OLDPWD")}
		c.setOut(unknownStream(0))
		return
	}
	var cwds []string
	for _, form := range targetForms(t) {
		if form == "" {
			// `cd ""` stays put; an unquoted empty word vanishes and
			// plain `cd` goes home (R17).
			if quoted {
				cwds = append(cwds, c.sc.cwd...)
			} else {
				cwds = append(cwds, homeDir)
			}
			continue
		}
		if hasMarker(form) {
			cwds = append(cwds, marker("cwd"))
			continue
		}
		cwds = append(cwds, c.sc.resolvePath(form)...)
	}
	c.sc.cwd = unionAlts(nil, cwds)
}

func hPopd(c *call) {
	c.a.sensitive = true
	c.add(Safe, "R15 read-only", "popd")
	c.sc.cwd = []string{marker("cwd")}
}

// Inline-code analysis for interpreters (R6).
var (
	rxDeleteCall   = regexp.MustCompile(`(?i)(rmtree|rm_rf|deno\.removesync|deno\.remove|rm_r|remove_dir_all|rmsync|rmdirsync|os\.remove|os\.unlink|os\.rmdir|\.unlink|unlinksync|unlink|fileutils\.rm|file\.delete|fs\.rm|remove_entry_secure|removedirs)\s*\(?\s*(?:Path\s*\(\s*)?(?:os\.path\.expanduser\s*\(\s*)?(?:r|b)?["'](.*?)["']`)
	rxDeleteAny    = regexp.MustCompile(`(?i)\b(rmtree|rm_rf|Deno\.remove|rmSync|rmdirSync|unlinkSync|os\.remove|os\.unlink|removedirs|File::Path|remove_tree)\b`)
	rxSystemCall   = regexp.MustCompile(`(?s)(?:os\.system|os\.popen|os\.execute|io\.popen|subprocess\.\w+|commands\.getoutput|system|exec|execSync|spawnSync|spawn|popen|shell_exec|passthru|proc_open|pcntl_exec|IO\.popen|Open3\.\w+|%x|qx|child_process\.\w+|Runtime\.getRuntime\(\)\.exec|os\.execv?p?e?)\s*\(?\s*[bBrRuU]?(\[[^\]]*\]|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|` + "`[^`]*`" + `)`)
	rxBacktick     = regexp.MustCompile("`([^`]+)`")
	rxForkLoop     = regexp.MustCompile(`(?is)(while\s*\(?\s*(true|1|True)\s*\)?\s*:?\s*\{?[^}]{0,80}?fork\s*\(|fork\s+while\s+fork|fork\s*\(\s*\)\s*while|for\s*\(\s*;\s*;\s*\)\s*\{?[^}]{0,40}fork)`)
	rxSocket       = regexp.MustCompile(`(?i)socket|TCPSocket|net\.connect|net\.Socket|fsockopen|IO::Socket`)
	rxShellSpawn   = regexp.MustCompile(`(?i)pty\.spawn|/bin/(ba)?sh|["'](ba)?sh["']|dup2|exec\s*\(|subprocess|child_process|spawn|\bsystem\b`)
	rxDownload     = regexp.MustCompile(`(?i)urlopen|urllib|requests\.get|http\.get|https\.get|fetch\s*\(|LWP|open-uri|Net::HTTP|file_get_contents\s*\(\s*["']https?:|curl_exec|wget`)
	rxEvalExec     = regexp.MustCompile(`(?i)\bexec\s*\(|\beval\s*\(|\bexecfile\b|Function\s*\(|\bsystem\b|pipe\s*\(`)
	rxB64Literal   = regexp.MustCompile(`(?:b64decode|base64\.decode|decode64|atob|Buffer\.from|base64_decode|unpack)\s*\(\s*b?["']([A-Za-z0-9+/=_-]{8,})["']`)
	rxListen       = regexp.MustCompile(`(?i)\.listen\s*\(|\.bind\s*\(|http\.server|SimpleHTTPServer|createServer|TCPServer`)
	rxOpenWrite    = regexp.MustCompile(`(?:open|File\.open|File\.write|writeFileSync|file_put_contents|fopen)\s*\(\s*["']([^"']+)["']\s*(?:,\s*["']([wa+]+)|,)`)
	rxQuotedString = regexp.MustCompile(`"((?:\\.|[^"\\])*)"|'((?:\\.|[^'\\])*)'`)
)

// hInterp classifies an interpreter: inline code (R6), a module (python -m),
// a script file (R14) or code piped in.
func hInterp(c *call) {
	c.readsStdin()
	c.a.events |= evShellAny
	args := c.args()
	lang := c.name
	var code *field
	i := 0
	for ; i < len(args); i++ {
		s := args[i].s
		if !strings.HasPrefix(s, "-") || s == "-" {
			break
		}
		switch {
		case s == "-c" || s == "-e" || s == "-E" || s == "-r" && lang == "php" || s == "--eval" ||
			(s == "-p" || s == "--print") && (lang == "node" || lang == "nodejs"):
			if i+1 < len(args) {
				code = &args[i+1]
				i = len(args)
			}
		case strings.HasPrefix(s, "-") && len(s) > 2 && !strings.HasPrefix(s, "--") && strings.ContainsAny(s[len(s)-1:], "ec") &&
			(strings.HasPrefix(lang, "perl") || strings.HasPrefix(lang, "ruby") || strings.HasPrefix(lang, "python")):
			// perl -ne '…', perl -pi -e '…', python -Bc '…'
			if i+1 < len(args) {
				code = &args[i+1]
				if strings.Contains(s, "i") && strings.HasPrefix(lang, "perl") {
					for _, f := range args[i+2:] {
						c.a.write(c.sc, f, modifyWrite, stream{}, "perl -i")
					}
				}
				i = len(args)
			}
		case s == "-m" && strings.HasPrefix(lang, "python"):
			if i+1 < len(args) {
				c.pythonModule(args[i+1].s, args[i+2:])
			}
			return
		case strings.HasPrefix(s, "-m") && len(s) > 2 && strings.HasPrefix(lang, "python"):
			c.pythonModule(s[2:], args[i+1:])
			return
		case s == "-V" || s == "--version" || s == "-v" && lang != "perl" || s == "-h" || s == "--help":
			c.add(Safe, "R15 read-only", c.name+" version")
			return
		case s == "-S" && lang == "php":
			c.add(High, "R11 listening socket", "php -S starts a web server")
			return
		case s == "-I" || s == "-i" && lang == "perl" || s == "-W" || s == "-X" || s == "--require" || s == "-r" && lang == "ruby":
			i++
		}
	}
	if code != nil {
		c.inlineCode(lang, *code)
		return
	}
	rest := args[min(i, len(args)):]
	if len(rest) > 0 && rest[0].s != "-" {
		if lang == "deno" || lang == "bun" {
			if sub := rest[0].s; sub == "eval" && len(rest) > 1 {
				c.inlineCode(lang, rest[1])
				return
			} else if sub == "run" || sub == "test" || sub == "install" || sub == "x" {
				c.add(Moderate, "R14 project code", c.name+" "+sub)
				if sub == "x" {
					c.add(High, "R20 unknown executable", c.name+" x runs a downloaded package")
				}
				return
			}
		}
		c.runScriptFile(rest[0], rest[1:])
		return
	}
	if c.in.piped {
		c.a.events |= evShellStdin
		c.inlineCode(lang, field{s: c.in.text, fl: c.in.flags})
		return
	}
	c.add(Moderate, "R14 project code", c.name+" interactive interpreter")
}

func (c *call) pythonModule(mod string, rest []field) {
	switch mod {
	case "http.server", "SimpleHTTPServer", "smtpd", "pyftpdlib", "uvicorn", "flask", "gunicorn":
		c.add(High, "R11 listening socket", "python -m "+mod)
	case "pip", "pip3":
		hPip(&call{a: c.a, sc: c.sc, name: "pip", argv: append([]field{lit("pip")}, rest...), env: c.env, in: c.in, opts: c.opts})
	case "venv", "virtualenv", "pytest", "unittest", "mypy", "black", "ruff", "build", "compileall", "py_compile", "pdb", "doctest", "tox", "coverage":
		c.add(Moderate, "R14 project code", "python -m "+mod)
	case "json.tool", "this", "site", "platform", "tokenize", "sysconfig", "calendar", "pydoc":
		c.add(Safe, "R15 read-only", "python -m "+mod)
	case "base64":
		hBase64(&call{a: c.a, sc: c.sc, name: "base64", argv: append([]field{lit("base64")}, rest...), in: c.in})
	default:
		c.add(Moderate, "R14 project code", "python -m "+mod)
	}
}

// inlineCode applies R6 to interpreter code: at least moderate, raised to
// the risk of each effect that can be recognised in it.
func (c *call) inlineCode(lang string, code field) {
	c.add(Moderate, "R6 inline code", lang)
	if code.fl&fDownload != 0 {
		c.add(Forbidden, "R9e downloaded code", lang+" runs downloaded code")
	}
	if code.fl&fDecoded != 0 {
		c.add(High, "R4 obfuscation floor", lang+" code recovered through a decoding layer")
	}
	c.a.codeEffects(c.sc, lang, code.s, code.fl, 0)
}

func (a *analyzer) codeEffects(sc *scope, lang, text string, fl fflags, depth int) {
	if depth > 3 {
		return
	}
	a.f.addText(stripMarkers(text))
	text, folded := normalizeCode(text)
	a.moreCodeEffects(sc, lang, text, fl, depth, folded)
	if hasMarker(text) && strings.TrimSpace(stripMarkers(text)) == "" {
		a.add(High, "R3 dynamic command", lang+" code known only at run time")
		return
	}
	if own, ok := a.ownInCode(sc, text); ok {
		a.addOwn(High, "R13 secret", lang+" code names the daemon's own "+own)
	}
	for _, m := range rxDeleteCall.FindAllStringSubmatch(text, -1) {
		target := m[2]
		if strings.HasPrefix(target, "~") {
			target = homeDir + target[1:]
		}
		a.destroy(sc, field{s: target}, recursiveDelete, lang+" "+m[1])
	}
	if rxDeleteAny.MatchString(text) && !rxDeleteCall.MatchString(text) {
		a.add(Dangerous, "R10 destructive", lang+" deletes files chosen at run time")
	}
	for _, m := range rxSystemCall.FindAllStringSubmatch(text, -1) {
		arg := m[1]
		switch {
		case strings.HasPrefix(arg, "["):
			var words []string
			for _, q := range rxQuotedString.FindAllStringSubmatch(arg, -1) {
				words = append(words, q[1]+q[2])
			}
			if len(words) > 0 {
				argv := make([]field, len(words))
				for i, w := range words {
					argv[i] = field{s: w, fl: fl}
				}
				a.runArgv(sc, argv, nil, ttyStream(), callOpts{})
			}
		case strings.HasPrefix(arg, "`"):
			a.scriptIn(sc, strings.Trim(arg, "`"), fl, lang+" shell call", ttyStream(), nil, false)
		default:
			a.scriptIn(sc, unescapeC(arg[1:len(arg)-1]), fl, lang+" shell call", ttyStream(), nil, false)
		}
	}
	if lang == "perl" || lang == "ruby" || lang == "php" {
		for _, m := range rxBacktick.FindAllStringSubmatch(text, -1) {
			a.scriptIn(sc, m[1], fl, lang+" backticks", ttyStream(), nil, false)
		}
	}
	if rxForkLoop.MatchString(text) {
		a.add(Forbidden, "R9d fork bomb", lang+" fork loop")
	}
	if rxSocket.MatchString(text) {
		a.add(Moderate, "R11 network", lang+" opens a socket")
		if rxShellSpawn.MatchString(text) {
			a.add(Forbidden, "R9f reverse shell", lang+" joins a socket to a shell")
		}
	}
	if rxListen.MatchString(text) {
		a.add(High, "R11 listening socket", lang+" listens for connections")
	}
	if rxDownload.MatchString(text) {
		a.add(Moderate, "R11 network", lang+" downloads")
		if rxEvalExec.MatchString(text) {
			a.add(Forbidden, "R9e downloaded code", lang+" runs what it downloads")
		}
	}
	for _, m := range rxOpenWrite.FindAllStringSubmatch(text, -1) {
		if m[2] == "" {
			continue
		}
		mode := truncateWrite
		if strings.Contains(m[2], "a") {
			mode = appendWrite
		}
		a.write(sc, field{s: m[1]}, mode, stream{}, lang+" open()")
	}
	for _, m := range rxB64Literal.FindAllStringSubmatch(text, -1) {
		dec, err := decodeBase64(m[1])
		if err != nil {
			continue
		}
		a.add(High, "R4 obfuscation floor", lang+" decodes an embedded payload")
		a.codeEffects(sc, lang, string(dec), fl|fDecoded, depth+1)
		if looksLikeShell(string(dec)) {
			a.scriptIn(sc, string(dec), fl|fDecoded, lang+" decoded payload", ttyStream(), nil, false)
		}
	}
	if strings.Contains(text, "codecs.decode") && strings.Contains(text, "rot") {
		a.add(High, "R4 obfuscation floor", lang+" decodes rot13 text")
	}
}

// looksLikeShell guesses whether decoded text is a shell command line.
func looksLikeShell(s string) bool {
	f := strings.Fields(s)
	if len(f) == 0 {
		return false
	}
	_, ok := handlers[baseName(f[0])]
	return ok
}
