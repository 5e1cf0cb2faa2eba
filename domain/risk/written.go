package risk

import (
	"path"
	"slices"
	"strings"
)

// Files written and then run in the same line (risk-policy.md R14, "files
// written then run"): the analyzer remembers what each write put in a file,
// so running the file (sh f, . f, ./f, python f, make, a git hook, BASH_ENV)
// classifies that content. Content that is not known (a copy, an edit, the
// output of a program) stands as a marker: running it is at least high.

// unknownFile is the content of a file whose text is known only at run time.
var unknownFile = marker("file")

// recordWrite notes what a write leaves in the file at p.
func (a *analyzer) recordWrite(p string, mode writeMode, content stream, via string) {
	old, had := a.written[p]
	switch via {
	case "chmod", "chown", "chgrp", "touch", "setfacl", "chattr":
		// The mode, owner or times change, not the text.
		return
	}
	text := unknownFile
	fl := content.flags & contentFlags
	if content.piped || content.text != "" {
		text = content.text
	}
	switch mode {
	case appendWrite:
		prefix := unknownFile + "\n"
		if had {
			prefix = old.text
			fl |= old.flags
		}
		text = prefix + text
	case modifyWrite:
		text = unknownFile
	}
	if a.written == nil {
		a.written = map[string]stream{}
	}
	if len(text) > maxValueLen*16 {
		text = unknownFile
	}
	a.written[p] = stream{text: text, flags: fl, piped: true}
	a.writes = append(a.writes, p)
}

// taintWrites marks the files written since the n-th write as holding
// secret material: the command that wrote them read some (cp, tar, zip, mv
// of a secret), so an upload of them later in the line is exfiltration.
func (a *analyzer) taintWrites(n int) {
	for _, p := range a.writes[n:] {
		s := a.written[p]
		s.flags |= fSecret
		a.written[p] = s
	}
}

// secretInWorkspace reports a file in the workspace that this line filled
// with secret material: `git add -A` stages it.
func (a *analyzer) secretInWorkspace() bool {
	for p, s := range a.written {
		if s.flags&fSecret != 0 && !strings.HasPrefix(p, "/") {
			return true
		}
	}
	return false
}

// writtenContent reports what this line wrote to the file named by word.
func (a *analyzer) writtenContent(sc *scope, word string) (stream, string, bool) {
	if len(a.written) == 0 || word == "" {
		return stream{}, "", false
	}
	for _, p := range sc.resolvePath(word) {
		if s, ok := a.written[p]; ok {
			return s, p, true
		}
	}
	return stream{}, "", false
}

// runWritten classifies running a file this line wrote: its text as a
// script of the shell or interpreter that runs it (or that its #! line
// names).
func (c *call) runWritten(p string, content stream, params []field, runner string) stream {
	c.a.sensitive = true
	via := runner + " runs " + p + ", written in this line"
	lang := runner
	if !isInterpreterName(lang) {
		lang = shebangInterpreter(content.text)
	}
	if isInterpreterName(lang) {
		c.inlineCode(lang, field{s: content.text, fl: content.flags})
		return unknownStream(0)
	}
	same := runner == "source" || runner == "."
	return c.a.scriptIn(c.sc, content.text, content.flags, via, c.in, fieldStrings(params), same)
}

// shebangInterpreter names the interpreter of a script's #! line.
func shebangInterpreter(text string) string {
	line, _, _ := strings.Cut(text, "\n")
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return ""
	}
	fs := strings.Fields(rest)
	if len(fs) == 0 {
		return ""
	}
	name := path.Base(fs[0])
	if name == "env" {
		for _, f := range fs[1:] {
			if !strings.HasPrefix(f, "-") {
				return path.Base(f)
			}
		}
		return ""
	}
	return name
}

// isInterpreterName reports the interpreters hInterp knows.
func isInterpreterName(n string) bool {
	if n == "" || isShellName(n) {
		return false
	}
	switch n {
	case "python", "python2", "python3", "pypy", "pypy3", "perl", "ruby", "node", "nodejs", "php", "lua", "luajit", "Rscript", "deno", "bun":
		return true
	}
	return strings.HasPrefix(n, "python3.")
}

// makeRecipes classifies the recipes of a makefile this line wrote: every
// tab-indented line, without its @ - + prefixes, and each $(shell …).
func (c *call) makeRecipes(p string, content stream) {
	c.a.sensitive = true
	var script []string
	for _, line := range strings.Split(content.text, "\n") {
		if hasMarker(line) && onlyMarker(strings.TrimSpace(line)) {
			c.add(High, "R3 dynamic command", c.name+" reads "+p+", whose content is known only at run time")
			continue
		}
		if rest, ok := strings.CutPrefix(line, "\t"); ok {
			script = append(script, strings.TrimLeft(rest, "@-+ \t"))
		}
		for s := line; ; {
			i := strings.Index(s, "$(shell ")
			if i < 0 {
				break
			}
			s = s[i+len("$(shell "):]
			if j := strings.IndexByte(s, ')'); j >= 0 {
				script = append(script, s[:j])
			}
		}
	}
	if len(script) > 0 {
		c.a.scriptIn(c.sc, strings.Join(script, "\n"), content.flags, c.name+" runs the recipes of "+p+", written in this line", ttyStream(), nil, false)
	}
}

// writtenMakefile finds the makefile make would read, if this line wrote it.
func (c *call) writtenMakefile(files []field) (string, stream, bool) {
	names := []string{"GNUmakefile", "makefile", "Makefile"}
	if len(files) > 0 {
		names = fieldStrings(files)
	}
	for _, n := range names {
		if s, p, ok := c.a.writtenContent(c.sc, n); ok {
			return p, s, true
		}
	}
	return "", stream{}, false
}

// gitHookVerbs are the git commands that run client-side hooks.
var gitHookVerbs = map[string]bool{"commit": true, "merge": true, "push": true, "checkout": true, "switch": true, "rebase": true,
	"am": true, "pull": true, "clone": true, "gc": true, "cherry-pick": true, "revert": true, "worktree": true, "commit-tree": false}

// runGitHooks classifies the hooks this line wrote that git is about to
// run: files in .git/hooks or in a directory named by core.hooksPath.
func (c *call) runGitHooks(verb string) {
	if !gitHookVerbs[verb] || len(c.a.written) == 0 {
		return
	}
	paths := make([]string, 0, len(c.a.written))
	for p := range c.a.written {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		hook := strings.HasPrefix(p, ".git/hooks/") || strings.Contains(p, "/.git/hooks/")
		for _, d := range c.a.hooksDirs {
			hook = hook || strings.HasPrefix(p, d+"/")
		}
		if hook {
			s := c.a.written[p]
			c.a.scriptIn(c.sc, s.text, s.flags, "git "+verb+" runs hook "+p+", written in this line", ttyStream(), nil, false)
		}
	}
}
