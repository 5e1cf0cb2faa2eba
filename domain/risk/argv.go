package risk

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// callOpts carry what wrappers establish for the command they run.
type callOpts struct {
	elevated bool // under sudo, doas, su … (R5, R10 interactive root shells)
	noFunc   bool // `command`/`builtin`/`exec` skip functions and aliases
	rebound  bool // the name was already looked up in the hash table (hash -p)
}

// call is one simple command being classified.
type call struct {
	a      *analyzer
	sc     *scope
	name   string // resolved command name (basename, unicode-folded)
	argv   []field
	env    map[string]field
	in     stream
	out    stream
	outSet bool
	opts   callOpts
	secret bool // an argument names secret material
}

func (c *call) args() []field { return c.argv[1:] }

// readsStdin notes that the verdict depends on what was piped in, so the
// command must also be classified standing alone (see analyzer.sensitive).
func (c *call) readsStdin() {
	if c.in.piped {
		c.a.sensitive = true
	}
}

func (c *call) add(l Level, rule, detail string) { c.a.add(l, rule, detail) }

// setOut records what the command prints. Decoded text is kept for the
// prompt-injection scan (R12 runs on payloads decoded under R4).
func (c *call) setOut(s stream) {
	c.out, c.outSet = s, true
	if s.flags&fDecoded != 0 {
		c.a.f.addText(stripMarkers(s.text))
	}
}

// run classifies an inner command line with the same state and input.
func (c *call) run(argv []field) stream {
	return c.a.runArgv(c.sc, argv, c.env, c.in, c.opts)
}

// script classifies a shell script that this command runs.
func (c *call) script(text string, fl fflags, via string) stream {
	return c.a.scriptIn(c.sc, text, fl, via, ttyStream(), nil, false)
}

// runArgv classifies one expanded simple command (R0 step 3 and 4).
func (a *analyzer) runArgv(sc *scope, argv []field, env map[string]field, in stream, opts callOpts) stream {
	if len(argv) == 0 {
		return stream{}
	}
	if !a.step() {
		return unknownStream(0)
	}
	text, _ := joinFields(argv)
	a.f.addText(stripMarkers(text))
	for k, v := range env {
		a.checkEnvVar(sc, k, []string{v.s}, v.fl, true)
	}

	argv, reparse := a.foldUnicode(argv)
	if reparse {
		t, fl := joinFields(argv)
		return a.scriptIn(sc, t, fl, "R19 unicode", in, nil, true)
	}
	if isSelfExe(argv[0].s) {
		// The shell's own executable: /proc/self/exe -c … is bash -c ….
		argv = append([]field{{s: "/bin/bash", fl: argv[0].fl}}, argv[1:]...)
	}
	name := argv[0]
	if name.fl&fDownload != 0 {
		a.add(Forbidden, "R9e downloaded code", "command name comes from a download")
	}
	if name.fl&(fObf|fDecoded) != 0 {
		a.add(High, "R4 obfuscation floor", "command name "+printable(name.s)+" is built by quoting, escapes or expansion tricks")
	}
	if hasMarker(name.s) {
		return a.dynamicName(sc, argv, env, in, opts)
	}
	if name.fl&fGlob != 0 && isGlobPattern(name.s) {
		return a.globName(sc, argv, env, in, opts)
	}
	if name.s == "" {
		if len(argv) > 1 {
			return a.runArgv(sc, argv[1:], env, in, opts)
		}
		return stream{}
	}

	base := baseName(name.s)
	if a.isDownloaded(sc, name.s) {
		a.add(Forbidden, "R9e downloaded code", "runs the file it just downloaded: "+name.s)
	}
	if t, ok := a.hashed[name.s]; ok && !opts.rebound && !strings.Contains(name.s, "/") {
		if _, fn := sc.funcs[base]; !fn || opts.noFunc {
			a.sensitive = true
			opts.rebound = true
			return a.runArgv(sc, append([]field{t}, argv[1:]...), env, in, opts)
		}
	}
	if !opts.noFunc && !strings.Contains(name.s, "/") {
		if body, ok := sc.funcs[base]; ok {
			return a.callFunc(sc, base, body, argv[1:], in)
		}
		if fn, ok := a.f.lineFuncs[base]; ok && a.depth == 0 && a.callPos > fn.end {
			if _, known := handlers[base]; !known {
				// A part analysed alone calls a function the line defines
				// elsewhere: it runs that body. A function that shadows a
				// known command keeps that command's verdict (R1).
				if sc.funcs == nil {
					sc.funcs = map[string]*syntax.Stmt{}
				}
				sc.funcs[base] = fn.body
				return a.callFunc(sc, base, fn.body, argv[1:], in)
			}
		}
		if al, ok := a.aliases[base]; ok && a.depth < maxDepth {
			a.sensitive = true
			rest, fl := joinFields(argv[1:])
			return a.scriptIn(sc, al+" "+rest, fl, "alias "+base, in, nil, true)
		}
	}

	c := &call{a: a, sc: sc, name: base, argv: argv, env: env, in: in, opts: opts}
	for _, f := range argv[1:] {
		if looksLikePath(f.s) || strings.HasPrefix(f.s, ".env") || strings.HasSuffix(f.s, ".pem") || strings.HasSuffix(f.s, ".key") {
			for _, p := range sc.resolvePath(f.s) {
				if isSecretPath(p) {
					c.secret = true
				}
			}
		}
	}
	// An argument naming the daemon's own files is a read of secret
	// material (R13) unless the handler found what the command does to it.
	ownArg := ""
	trees := readsTrees(base, argv[1:])
	for _, f := range argv[1:] {
		if p, ok := a.ownArgument(sc, f.s); ok {
			ownArg = "the daemon's own " + p
			break
		}
		if p, ok := a.ownTree(sc, f.s); ok && trees {
			ownArg = p
			break
		}
	}
	if strings.Contains(name.s, "/") {
		if s, p, ok := a.writtenContent(sc, name.s); ok {
			return c.runWritten(p, s, argv[1:], p)
		}
	}
	secretReads := a.secretReads
	ownHits := a.ownHits
	writes := len(a.writes)
	secretArg := c.secret // handlers clear it once they have said what they do with it
	h, known := handlers[base]
	switch {
	case known:
		h(c)
	case strings.Contains(name.s, "/") && !strings.HasPrefix(name.s, "/"):
		c.add(Moderate, "R14 project script", name.s)
	case strings.HasPrefix(name.s, "/") && isTempOrHome(path.Clean(name.s)) && !strings.HasPrefix(path.Clean(name.s), "/tmp"):
		c.add(Moderate, "R14 project script", name.s)
	default:
		a.events |= evUnknownExec
		c.add(High, "R20 unknown executable", printable(name.s))
	}
	c.markOwnTree()
	if ownArg == "" && !metadataOnly[base] && a.f.own != nil {
		for _, f := range argv[1:] {
			if f.fl&fOwnTree != 0 {
				ownArg = "paths found at run time under a directory holding the daemon's files"
				break
			}
		}
	}
	if ownArg != "" && !metadataOnly[base] && base != "cd" && base != "pushd" && a.ownHits == ownHits {
		c.add(High, "R13 secret", base+" reads "+ownArg)
		c.out.flags |= fSecret
	}
	if secretArg || c.in.piped && c.in.flags&fSecret != 0 || a.secretReads > secretReads {
		a.taintWrites(writes)
	}
	if secretArg && !metadataOnly[base] {
		// What it prints carries the secret, even from a handler that
		// cleared c.secret to avoid naming a read (zip - ~/.aws/credentials).
		c.out.flags |= fSecret
	}
	if c.secret && !metadataOnly[base] {
		// A handler that read the file already named it ("R13 secret:
		// reads ~/.env"); this reason is for those that did not.
		if a.secretReads == secretReads {
			c.add(High, "R13 secret", base+" reads secret material")
		}
		c.out.flags |= fSecret
	}
	if !c.outSet {
		return unknownStream(c.out.flags)
	}
	return c.out
}

// metadataOnly are commands that look at a file without reading its content.
var metadataOnly = map[string]bool{"ls": true, "stat": true, "test": true, "[": true, "file": true, "chmod": true,
	"chown": true, "touch": true, "mkdir": true, "du": true, "realpath": true, "readlink": true, "dirname": true, "basename": true,
	"rm": true, "shred": true, "unlink": true, "mv": true, "sudo": true, "doas": true, "env": true, "nice": true, "nohup": true, "timeout": true,
	"time": true, "command": true, "exec": true, "xargs": true, "find": true, "echo": true, "printf": true, "ssh-keygen": true, "ssh-add": true}

// dynamicName handles a command name that is only known at run time (R3):
// at least high, and if the unknown part is empty the rest still runs (R17).
func (a *analyzer) dynamicName(sc *scope, argv []field, env map[string]field, in stream, opts callOpts) stream {
	a.events |= evUnknownExec
	a.add(High, "R3 dynamic command", "command name "+printable(argv[0].s)+" is known only at run time")
	empty := stripMarkers(argv[0].s)
	if empty == "" {
		if len(argv) > 1 && !strings.HasPrefix(argv[1].s, "-") {
			a.runArgv(sc, argv[1:], env, in, opts)
		}
	} else {
		alt := slices.Clone(argv)
		alt[0] = field{s: empty, fl: argv[0].fl &^ (fEnv | fSubst)}
		a.runArgv(sc, alt, env, in, opts)
	}
	// Whatever the name, `-c SCRIPT` hands a script to it.
	for i, f := range argv[1:] {
		if f.s == "-c" && i+2 < len(argv) {
			a.scriptIn(sc, argv[i+2].s, argv[i+2].fl, "script of an unknown command", ttyStream(), nil, false)
			break
		}
	}
	return unknownStream(0)
}

// globName handles a glob in command position (R4): it may run any command
// that matches, so each known match is classified, with a floor of high.
func (a *analyzer) globName(sc *scope, argv []field, env map[string]field, in stream, opts callOpts) stream {
	a.add(High, "R4 obfuscation floor", "glob in command position: "+printable(argv[0].s))
	pat := baseName(argv[0].s)
	n := 0
	for _, name := range handlerNames() {
		if ok, _ := path.Match(pat, name); ok {
			alt := slices.Clone(argv)
			alt[0] = field{s: name}
			a.runArgv(sc, alt, env, in, opts)
			if n++; n >= 24 {
				break
			}
		}
	}
	return unknownStream(0)
}

func (a *analyzer) isDownloaded(sc *scope, p string) bool {
	if len(a.downloaded) == 0 {
		return false
	}
	for _, r := range sc.resolvePath(p) {
		if a.downloaded[r] || a.downloaded[path.Base(r)] {
			return true
		}
	}
	return false
}

func (a *analyzer) markDownloaded(sc *scope, p string) {
	if a.downloaded == nil {
		a.downloaded = map[string]bool{}
	}
	for _, r := range sc.resolvePath(p) {
		a.downloaded[r] = true
		a.downloaded[path.Base(r)] = true
	}
}

// scriptIn classifies shell text that something runs: `bash -c`, eval, a
// script piped to a shell, an alias, an ssh remote command. sameShell is set
// when the text runs in the current shell (eval, source, alias).
func (a *analyzer) scriptIn(sc *scope, text string, fl fflags, via string, in stream, params []string, sameShell bool) stream {
	return a.scriptArg0(sc, text, fl, via, in, "", params, sameShell)
}

// scriptArg0 is scriptIn with $0 set, for `bash -c SCRIPT NAME ARGS…`.
func (a *analyzer) scriptArg0(sc *scope, text string, fl fflags, via string, in stream, arg0 string, params []string, sameShell bool) stream {
	if fl&fDownload != 0 {
		a.add(Forbidden, "R9e downloaded code", via+" runs downloaded content")
	}
	if fl&fDecoded != 0 {
		a.add(High, "R4 obfuscation floor", via+" runs text recovered through a decoding layer")
	}
	a.f.addText(stripMarkers(text))
	if strings.TrimSpace(stripMarkers(text)) == "" {
		if hasMarker(text) {
			a.events |= evUnknownExec
			a.add(High, "R3 dynamic command", via+" runs a script known only at run time")
		}
		return stream{}
	}
	if a.depth >= maxDepth {
		a.overflow = true
		return unknownStream(0)
	}
	file, err := parseScript(text)
	if err != nil {
		classifyUnparseable(a.f, stripMarkers(text), err)
		if hasMarker(text) {
			a.add(High, "R3 dynamic command", via+" runs a script known only at run time")
		}
		return unknownStream(0)
	}
	target := sc
	if !sameShell {
		target = sc.clone()
		target.vars = map[string][]string{}
		target.customIFS = false
		target.funcs = nil
		target.params = params
		target.arg0 = arg0
	}
	// Unknown parts of the script are markers: in command position they
	// are caught as dynamic names, elsewhere they are data.
	a.depth++
	out := a.stmts(target, file.Stmts, in)
	a.depth--
	return out
}

// redirects applies a statement's redirections: it returns the statement's
// input and the output targets to check once the command's output is known.
func (a *analyzer) redirects(sc *scope, rs []*syntax.Redirect, in stream) (stream, []outRedir) {
	var outs []outRedir
	for _, r := range rs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc == nil {
				in = textStream("", 0)
				continue
			}
			var body string
			var fl fflags
			if quotedDelim(r.Word) {
				body = litText(r.Hdoc)
			} else {
				body, fl = a.document(sc, r.Hdoc)
			}
			a.f.addText(stripMarkers(body))
			in = textStream(body, fl&contentFlags)
		case syntax.WordHdoc:
			vals, fl := a.wordValue(sc, r.Word)
			a.f.addText(stripMarkers(vals[0]))
			in = textStream(vals[0]+"\n", fl&contentFlags)
		case syntax.RdrIn:
			for _, f := range a.wordFields(sc, r.Word) {
				if s, ok := a.fdStreams[f.s]; ok {
					in = s
					continue
				}
				fl := a.readTarget(sc, f)
				in = unknownStream(fl | f.fl&contentFlags)
				in.file = f.s
			}
		case syntax.RdrInOut:
			for _, f := range a.wordFields(sc, r.Word) {
				a.readTarget(sc, f)
				outs = append(outs, outRedir{target: f, mode: modifyWrite})
				in = unknownStream(0)
			}
		case syntax.RdrOut, syntax.RdrClob, syntax.RdrAll, syntax.RdrAllClob:
			for _, f := range a.wordFields(sc, r.Word) {
				outs = append(outs, outRedir{target: f, mode: truncateWrite})
			}
		case syntax.AppOut, syntax.AppAll:
			for _, f := range a.wordFields(sc, r.Word) {
				outs = append(outs, outRedir{target: f, mode: appendWrite})
			}
		case syntax.DplOut, syntax.DplIn:
			for _, f := range a.wordFields(sc, r.Word) {
				if f.s == "-" || isDigits(f.s) || hasMarker(f.s) {
					continue
				}
				if r.Op == syntax.DplOut {
					outs = append(outs, outRedir{target: f, mode: truncateWrite})
				}
			}
		default:
			a.substsIn(sc, r.Word)
		}
	}
	return in, outs
}

type outRedir struct {
	target field
	mode   writeMode
}

func (a *analyzer) writeRedirect(sc *scope, w outRedir, content stream) {
	a.write(sc, w.target, w.mode, content, "redirect")
}

func quotedDelim(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.ContainsRune(p.Value, '\\') {
				return true
			}
		}
	}
	return false
}

// litText concatenates a word's text without expanding anything.
func litText(w *syntax.Word) string {
	var b strings.Builder
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Lit:
			b.WriteString(n.Value)
		case *syntax.SglQuoted:
			b.WriteString(n.Value)
		}
		return true
	})
	return b.String()
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// printable shows a value in a reason with unknown parts as $… and bounded length.
func printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case markOpen:
			b.WriteString("${")
		case markClose:
			b.WriteString("}")
		default:
			b.WriteRune(r)
		}
		if b.Len() > 60 {
			b.WriteString("…")
			return b.String()
		}
	}
	return b.String()
}

// script classifies text run as a separate shell (cron jobs, hooks, pagers).
func (a *analyzer) script(sc *scope, text string, fl fflags, via string) stream {
	return a.scriptIn(sc, text, fl, via, ttyStream(), nil, false)
}

// isGlobPattern reports a word with glob syntax that would expand: * and ?,
// or a [...] class; `[` and `[[` alone are commands.
func isGlobPattern(s string) bool {
	if strings.ContainsAny(s, "*?") {
		return true
	}
	i := strings.IndexByte(s, '[')
	return i >= 0 && strings.IndexByte(s[i+1:], ']') > 0
}
