package risk

import (
	"regexp"
	"strings"
)

// Hidden execution in options and sub-languages (risk-policy.md R5). The
// options below make a program run a command; the table is the open part of
// the family: a program that grows such an option gets a line here and a
// test, not a new handler.

// execKind says how an option's value runs.
type execKind int

const (
	execScript execKind = iota // shell text, run with sh -c
	execArgv                   // a program and its arguments
)

// execOpt is one option whose value is a command. A name of two characters
// ("-x") also matches its value attached ("-xcmd"); a long name also
// matches "--name=value".
type execOpt struct {
	names []string
	kind  execKind
	// attached: the value is optional and only ever attached (-Ocmd,
	// --opt=cmd); a separate next word is an operand.
	attached bool
}

// execOptions lists, by program (or "git <verb>"), the options that run a
// command.
var execOptions = map[string][]execOpt{
	"man":            {{[]string{"-P", "--pager"}, execScript, false}, {[]string{"-H", "--html"}, execScript, true}},
	"tcpdump":        {{[]string{"-z"}, execArgv, false}},
	"fzf":            {{[]string{"--preview"}, execScript, false}},
	"rsync":          {{[]string{"--rsync-path"}, execScript, false}},
	"git grep":       {{[]string{"-O", "--open-files-in-pager"}, execScript, true}},
	"git difftool":   {{[]string{"-x", "--extcmd"}, execScript, false}},
	"git mergetool":  {{[]string{"-x", "--extcmd"}, execScript, false}},
	"git rebase":     {{[]string{"-x", "--exec"}, execScript, false}},
	"git send-email": {{[]string{"--sendmail-cmd", "--to-cmd", "--cc-cmd", "--header-cmd"}, execScript, false}},
}

// hiddenOptions classifies the commands that prog's options in args run.
func (c *call) hiddenOptions(prog string, args []field) {
	specs := execOptions[prog]
	if len(specs) == 0 {
		return
	}
	for i := 0; i < len(args); i++ {
		s := args[i].s
		if s == "--" {
			return
		}
		for _, spec := range specs {
			for _, n := range spec.names {
				var val field
				found := false
				switch {
				case s == n && i+1 < len(args) && !spec.attached:
					val, found = args[i+1], true
				case strings.HasPrefix(n, "--") && strings.HasPrefix(s, n+"="):
					val, found = field{s: s[len(n)+1:], fl: args[i].fl}, true
				case len(n) == 2 && len(s) > 2 && strings.HasPrefix(s, n) && !strings.HasPrefix(s, "--"):
					val, found = field{s: s[2:], fl: args[i].fl}, true
				}
				if !found {
					continue
				}
				via := prog + " " + n
				if spec.kind == execArgv {
					c.run(splitWords(val))
				} else {
					c.a.script(c.sc, val.s, val.fl, via)
				}
			}
		}
	}
}

// rxFzfAction finds the commands of fzf key bindings: execute(…),
// execute-silent(…), become(…), reload(…), preview(…) and their other
// bracket forms.
var rxFzfAction = regexp.MustCompile(`(?:execute|execute-silent|become|reload|reload-sync|preview|change-preview|transform[-a-z]*)[(\[{<]([^)\]}>]*)[)\]}>]`)

// hFzf: fzf runs --preview commands and the actions of --bind.
func hFzf(c *call) {
	c.add(Safe, "R15 read-only", "fzf")
	c.hiddenOptions("fzf", c.args())
	p := getopt(c.args(), "", []string{"--bind"}, true)
	for _, b := range p.vals("--bind") {
		for _, m := range rxFzfAction.FindAllStringSubmatch(b.s, -1) {
			c.a.script(c.sc, m[1], b.fl, "fzf --bind")
		}
	}
}

// hPager: less, more and most run `+cmd` at start, and `!` in one is a
// shell escape.
func hPager(c *call) {
	for _, a := range c.args() {
		if strings.HasPrefix(a.s, "+") {
			c.a.lessCommands(c.sc, a, c.name)
		}
	}
	passThrough(c, Safe, "R15 read-only")
}

// hEntr: entr runs its utility whenever a file it watches changes; -s
// hands it to the shell.
func hEntr(c *call) {
	c.readsStdin()
	p := getopt(c.args(), "", nil, false)
	if len(p.rest) == 0 {
		c.add(Safe, "R15 read-only", "entr")
		return
	}
	if p.has("-s") {
		text, fl := joinFields(p.rest)
		c.a.script(c.sc, text, fl, "entr -s")
		return
	}
	c.setOut(c.run(p.rest))
}

// rxShellMeta are the shell escapes of database clients and ed: psql and
// mysql `\!`, mysql `system`, sqlite3 `.shell`/`.system`, ed and ex `!`.
var (
	rxBangEscape   = regexp.MustCompile(`(?m)\\!\s*([^\n]*)`)
	rxMysqlSystem  = regexp.MustCompile(`(?mi)^\s*system\s+([^\n]*)`)
	rxSqliteShell  = regexp.MustCompile(`(?m)^\s*\.(?:shell|system)\s+([^\n]*)`)
	rxEdBang       = regexp.MustCompile(`(?m)^\s*[0-9,.$]*\s*[rwe]?\s*!([^\n]*)`)
	rxGawkLoad     = regexp.MustCompile(`@load\s+"`)
	rxAwkPrintPipe = regexp.MustCompile(`printf?\s*\(?\s*"((?:\\.|[^"\\])*)"\s*\)?\s*\|\s*"((?:\\.|[^"\\])*)"`)
)

// dbShellEscapes classifies the shell escapes in what a database client
// reads: its arguments and its input.
func (c *call) dbShellEscapes() {
	texts := []field{{s: c.in.text, fl: c.in.flags}}
	texts = append(texts, c.args()...)
	for _, t := range texts {
		if hasMarker(t.s) && !c.in.known() && t.s == c.in.text {
			continue
		}
		var rx []*regexp.Regexp
		switch c.name {
		case "sqlite3":
			rx = []*regexp.Regexp{rxSqliteShell}
		case "mysql", "mariadb":
			rx = []*regexp.Regexp{rxBangEscape, rxMysqlSystem}
		default:
			rx = []*regexp.Regexp{rxBangEscape}
		}
		for _, r := range rx {
			for _, m := range r.FindAllStringSubmatch(stripMarkers(t.s), -1) {
				c.a.script(c.sc, m[1], t.fl, c.name+" shell escape")
			}
		}
	}
}

// hEd: ed and ex run `!cmd` lines of their script (stdin) as shell text.
func hEd(c *call) {
	c.readsStdin()
	found := Safe
	for _, f := range getopt(c.args(), "p", nil, true).pos {
		found = max(found, c.a.write(c.sc, f, modifyWrite, stream{}, c.name))
	}
	c.workspaceChange(found, c.name)
	if !c.in.piped {
		return
	}
	for _, m := range rxEdBang.FindAllStringSubmatch(stripMarkers(c.in.text), -1) {
		c.a.script(c.sc, m[1], c.in.flags, c.name+" shell escape")
	}
}

// hChrt: chrt [options] PRIORITY COMMAND runs COMMAND at a scheduling
// priority (transparent); -p changes a running process (R13).
func hChrt(c *call) {
	p := getopt(c.args(), "TPD", []string{"--sched-runtime", "--sched-period", "--sched-deadline"}, false)
	if p.has("-p", "--pid") || p.has("-m", "--max") {
		c.add(High, "R13 elevated operation", c.name+" changes a running process")
		return
	}
	if len(p.rest) < 2 {
		c.add(Safe, "R15 read-only", c.name)
		return
	}
	c.setOut(c.run(p.rest[1:]))
}

// hTaskset: taskset [options] MASK COMMAND pins COMMAND to CPUs
// (transparent); -p changes a running process (R13).
func hTaskset(c *call) {
	p := getopt(c.args(), "", nil, false)
	if p.has("-p", "--pid") {
		c.add(High, "R13 elevated operation", c.name+" changes a running process")
		return
	}
	if len(p.rest) < 2 {
		c.add(Safe, "R15 read-only", c.name)
		return
	}
	c.setOut(c.run(p.rest[1:]))
}

// hLimitWrapper: cpulimit, numactl, prlimit, systemd-inhibit and
// dbus-run-session run the command after their options (transparent);
// given a pid they change a running process (R13).
func hLimitWrapper(c *call) {
	var p parsed
	switch c.name {
	case "cpulimit":
		p = getopt(c.args(), "lpem", []string{"--limit", "--pid", "--exe", "--path"}, false)
		if p.has("-p", "--pid", "-e", "--exe", "-P", "--path") {
			c.add(High, "R13 elevated operation", c.name+" limits a running process")
			return
		}
	case "numactl":
		p = getopt(c.args(), "NmCpiP", []string{"--cpunodebind", "--membind", "--physcpubind", "--preferred", "--interleave", "--preferred-many"}, false)
	case "prlimit":
		p = getopt(c.args(), "p", []string{"--pid", "--output"}, false)
		if p.has("-p", "--pid") {
			c.add(High, "R13 elevated operation", c.name+" changes a running process")
			return
		}
	default:
		p = getopt(c.args(), "", []string{"--what", "--who", "--why", "--mode", "--config-file", "--dbus-daemon"}, false)
	}
	if len(p.rest) == 0 {
		c.add(Safe, "R15 read-only", c.name)
		return
	}
	c.setOut(c.run(p.rest))
}

// hSchedtool: schedtool [options] -e COMMAND runs COMMAND (transparent).
func hSchedtool(c *call) {
	args := c.args()
	for i, a := range args {
		if a.s == "-e" && i+1 < len(args) {
			c.setOut(c.run(args[i+1:]))
			return
		}
	}
	c.add(High, "R13 elevated operation", c.name+" changes a running process")
}

// registerHiddenExecHandlers registers the programs whose options or
// sub-languages run commands, and the wrappers of this family.
func registerHiddenExecHandlers(reg func(func(*call), ...string)) {
	reg(hFzf, "fzf")
	reg(hPager, "less", "more", "most")
	reg(hEntr, "entr")
	reg(hEd, "ed", "ex")
	reg(hChrt, "chrt")
	reg(hTaskset, "taskset")
	reg(hLimitWrapper, "cpulimit", "numactl", "prlimit", "systemd-inhibit", "dbus-run-session")
	reg(hSchedtool, "schedtool")
	reg(func(c *call) {
		c.hiddenOptions("man", c.args())
		c.add(Safe, "R15 read-only", "man")
	}, "man")
	reg(func(c *call) {
		c.add(High, "R13 elevated operation", "tcpdump")
		c.hiddenOptions("tcpdump", c.args())
	}, "tcpdump")
}
