package risk

import (
	"maps"
	"slices"
	"strings"
)

func registerWrapperHandlers(reg func(func(*call), ...string)) {
	reg(hSudo, "sudo", "doas", "pkexec", "run0")
	reg(hSu, "su", "runuser")
	reg(hEnv, "env")
	reg(simpleWrapper("n", []string{"--adjustment"}, false), "nice")
	reg(simpleWrapper("", nil, false), "nohup", "setsid", "chronic", "unbuffer", "eatmydata", "fakeroot", "catchsegv", "dbus-launch", "xvfb-run", "rlwrap", "caffeinate")
	reg(hTimeout, "timeout", "gtimeout")
	reg(simpleWrapper("fo", []string{"--format", "--output"}, false), "time")
	reg(simpleWrapper("ioe", []string{"--input", "--output", "--error"}, false), "stdbuf")
	reg(hIonice, "ionice")
	reg(hFlock, "flock")
	reg(hWatch, "watch")
	reg(hStrace, "strace", "ltrace")
	reg(hScript, "script")
	reg(hParallel, "parallel")
	reg(hCommand, "command")
	reg(simpleWrapperNoFunc, "builtin")
	reg(hExec, "exec")
	reg(hBusybox, "busybox", "toybox")
	reg(hXargs, "xargs")
	reg(hConfined, "chroot", "unshare", "nsenter", "firejail", "bwrap", "systemd-nspawn", "proot", "schroot")
	reg(hSystemdRun, "systemd-run")
	reg(hAt, "at", "batch")
	reg(levelHandler(Safe, "R15 read-only"), "atq")
	reg(levelHandler(High, "R13 persistence"), "atrm")
	reg(hCrontab, "crontab")
	reg(hNetWrapper, "proxychains", "proxychains4", "torsocks", "tsocks", "torify")
	reg(hValgrind, "valgrind")
	reg(hGdb, "gdb", "lldb")
	reg(hFaketime, "faketime")
	reg(hTmux, "tmux", "screen")
	reg(hNohupLike, "daemonize", "start-stop-daemon")
}

// hSudo: sudo, doas, pkexec and run0 set a floor of high and are otherwise
// transparent (R5); with no command, -i and -s are interactive root shells (R10).
func hSudo(c *call) {
	c.readsStdin()
	var p parsed
	switch c.name {
	case "doas":
		p = getopt(c.args(), "uC", nil, false)
	case "pkexec":
		p = getopt(c.args(), "", []string{"--user"}, false)
	default:
		p = getopt(c.args(), "ugpChDrtTUc", []string{"--user", "--group", "--prompt", "--close-from", "--host", "--chdir",
			"--role", "--type", "--command-timeout", "--other-user"}, false)
	}
	c.add(High, "R5 sudo floor", c.name)
	inner := p.rest
	shell := p.has("-s", "--shell")
	login := p.has("-i", "--login")
	if p.has("-e", "--edit") {
		for _, f := range p.pos {
			c.a.write(c.sc, f, modifyWrite, stream{}, "sudoedit")
		}
		return
	}
	if p.has("-l", "--list", "-v", "--validate", "-k", "--reset-timestamp", "-K", "--remove-timestamp", "-V", "--version", "-h", "--help") && len(inner) == 0 {
		return
	}
	if d, ok := p.val("-D", "--chdir"); ok {
		c.sc = c.sc.clone()
		c.sc.cwd = c.sc.resolvePath(d.s)
	}
	if len(inner) == 0 {
		if shell || login || c.name == "doas" && p.has("-s") || c.name == "pkexec" || c.name == "run0" {
			if c.in.piped {
				c.a.scriptIn(c.sc, c.in.text, c.in.flags, c.name+" shell", c.in, nil, false)
				return
			}
			c.add(Dangerous, "R10 interactive root shell", c.name+" opens a root shell")
		}
		return
	}
	// sudo VAR=value CMD sets VAR for CMD.
	env := c.env
	for len(inner) > 1 && strings.Contains(inner[0].s, "=") && !strings.HasPrefix(inner[0].s, "=") && !strings.HasPrefix(inner[0].s, "-") {
		k, v, _ := strings.Cut(inner[0].s, "=")
		if env == nil || len(env) == len(c.env) {
			env = maps.Clone(c.env)
			if env == nil {
				env = map[string]field{}
			}
		}
		env[k] = field{s: v, fl: inner[0].fl}
		inner = inner[1:]
	}
	opts := c.opts
	opts.elevated = true
	if shell || login {
		// sudo -s CMD runs CMD through the shell: re-parse it as a script.
		text, fl := joinFields(inner)
		c.setOut(c.a.scriptIn(c.sc, text, fl, c.name+" -s", c.in, nil, false))
		return
	}
	c.setOut(c.a.runArgv(c.sc, inner, env, c.in, opts))
}

// hSu: su -c CMD runs CMD as another user (floor high); su without -c is an
// interactive shell of that user (R10).
func hSu(c *call) {
	c.readsStdin()
	p := getopt(c.args(), "cslgGuw", []string{"--command", "--shell", "--group", "--supp-group", "--user", "--whitelist-environment", "--session-command"}, true)
	c.add(High, "R5 sudo floor", c.name)
	if cmd, ok := p.val("-c", "--command", "--session-command"); ok {
		opts := c.opts
		opts.elevated = true
		c.setOut(c.a.scriptIn(c.sc, cmd.s, cmd.fl, c.name+" -c", c.in, nil, false))
		return
	}
	if c.name == "runuser" {
		if i := slices.IndexFunc(c.args(), func(f field) bool { return f.s == "--" }); i >= 0 && i+1 < len(c.args()) {
			opts := c.opts
			opts.elevated = true
			c.setOut(c.a.runArgv(c.sc, c.args()[i+1:], c.env, c.in, opts))
			return
		}
	}
	if c.in.piped {
		c.a.scriptIn(c.sc, c.in.text, c.in.flags, c.name+" shell", c.in, nil, false)
		return
	}
	c.add(Dangerous, "R10 interactive root shell", c.name+" opens an interactive shell as another user")
}

// hEnv: env is transparent, including -i, NAME=V, -C and -S (R5).
func hEnv(c *call) {
	args := c.args()
	newEnv := map[string]field{}
	for k, v := range c.env {
		newEnv[k] = v
	}
	sc := c.sc
	for len(args) > 0 {
		s := args[0].s
		switch {
		case s == "--":
			args = args[1:]
			goto inner
		case s == "-i" || s == "--ignore-environment" || s == "-0" || s == "--null" || s == "-v" || s == "--debug" || s == "-":
			args = args[1:]
		case (s == "-u" || s == "--unset" || s == "-C" || s == "--chdir") && len(args) > 1:
			if s == "-C" || s == "--chdir" {
				sc = sc.clone()
				sc.cwd = sc.resolvePath(args[1].s)
			}
			args = args[2:]
		case strings.HasPrefix(s, "--unset=") || strings.HasPrefix(s, "-u") && len(s) > 2:
			args = args[1:]
		case strings.HasPrefix(s, "--chdir=") || strings.HasPrefix(s, "-C") && len(s) > 2:
			sc = sc.clone()
			sc.cwd = sc.resolvePath(strings.TrimPrefix(strings.TrimPrefix(s, "--chdir="), "-C"))
			args = args[1:]
		case s == "-S" || s == "--split-string" || strings.HasPrefix(s, "-S") || strings.HasPrefix(s, "--split-string="):
			var str field
			switch {
			case s == "-S" || s == "--split-string":
				if len(args) < 2 {
					return
				}
				str, args = args[1], args[2:]
			case strings.HasPrefix(s, "--split-string="):
				str, args = field{s: strings.TrimPrefix(s, "--split-string="), fl: args[0].fl}, args[1:]
			default:
				str, args = field{s: strings.TrimPrefix(s, "-S"), fl: args[0].fl}, args[1:]
			}
			// -S splits its string into words like a tiny shell.
			text, fl := joinFields(append([]field{str}, args...))
			c.setOut(c.a.scriptIn(sc, text, fl, "env -S", c.in, nil, false))
			return
		case strings.HasPrefix(s, "-") && len(s) > 1:
			args = args[1:]
		case strings.Contains(s, "=") && !strings.HasPrefix(s, "="):
			k, v, _ := strings.Cut(s, "=")
			newEnv[k] = field{s: v, fl: args[0].fl}
			args = args[1:]
		default:
			goto inner
		}
	}
inner:
	if len(args) == 0 {
		for k, v := range newEnv {
			c.a.checkEnvVar(sc, k, []string{v.s}, v.fl, true)
		}
		c.add(Safe, "R15 read-only", "env prints the environment")
		c.setOut(unknownStream(fSecret))
		return
	}
	c.setOut(c.a.runArgv(sc, args, newEnv, c.in, c.opts))
}

// simpleWrapper builds a handler for wrappers that run their first operand
// as a command after options (shortArg/longArg take values).
func simpleWrapper(shortArg string, longArg []string, noFunc bool) func(*call) {
	return func(c *call) {
		p := getopt(c.args(), shortArg, longArg, false)
		if len(p.rest) == 0 {
			c.add(Safe, "R15 read-only", c.name)
			return
		}
		opts := c.opts
		opts.noFunc = opts.noFunc || noFunc
		c.setOut(c.a.runArgv(c.sc, p.rest, c.env, c.in, opts))
	}
}

var simpleWrapperNoFunc = simpleWrapper("", nil, true)

func hNohupLike(c *call) {
	c.add(High, "R13 persistence", c.name+" starts a daemon")
	p := getopt(c.args(), "pnuxaocgN", []string{"--exec", "--startas", "--pidfile", "--name", "--user", "--chuid", "--chdir"}, true)
	if e, ok := p.val("-x", "--exec", "-a", "--startas"); ok {
		c.run(append([]field{e}, p.pos...))
	} else if len(p.pos) > 0 {
		c.run(p.pos)
	}
}

func hTimeout(c *call) {
	p := getopt(c.args(), "sk", []string{"--signal", "--kill-after"}, false)
	if len(p.rest) < 2 {
		c.add(Safe, "R15 read-only", "timeout")
		return
	}
	c.setOut(c.a.runArgv(c.sc, p.rest[1:], c.env, c.in, c.opts))
}

func hIonice(c *call) {
	p := getopt(c.args(), "cnpPuT", []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}, false)
	if p.has("-p", "--pid", "-P", "--pgid", "-u", "--uid") {
		c.add(High, "R13 elevated operation", "ionice on running processes")
		return
	}
	if len(p.rest) == 0 {
		c.add(Safe, "R15 read-only", "ionice")
		return
	}
	c.setOut(c.a.runArgv(c.sc, p.rest, c.env, c.in, c.opts))
}

func hFlock(c *call) {
	// flock FILE -c CMD: the options may follow the lock file.
	if pp := getopt(c.args(), "wEc", []string{"--timeout", "--conflict-exit-code", "--command"}, true); pp.has("-c", "--command") {
		if cmd, ok := pp.val("-c", "--command"); ok {
			c.setOut(c.script(cmd.s, cmd.fl, "flock -c"))
			return
		}
	}
	p := getopt(c.args(), "wEc", []string{"--timeout", "--conflict-exit-code", "--command"}, false)
	if cmd, ok := p.val("-c", "--command"); ok {
		c.setOut(c.script(cmd.s, cmd.fl, "flock -c"))
		return
	}
	if len(p.rest) >= 2 {
		c.setOut(c.a.runArgv(c.sc, p.rest[1:], c.env, c.in, c.opts))
		return
	}
	c.add(Safe, "R15 read-only", "flock")
}

// hWatch: watch joins its arguments and runs them with sh -c, unless -x.
func hWatch(c *call) {
	p := getopt(c.args(), "nd", []string{"--interval", "--differences"}, false)
	if len(p.rest) == 0 {
		c.add(Safe, "R15 read-only", "watch")
		return
	}
	if p.has("-x", "--exec") {
		c.run(p.rest)
		return
	}
	text, fl := joinFields(p.rest)
	c.script(text, fl, "watch")
}

func hStrace(c *call) {
	p := getopt(c.args(), "eoOsSuEabIPpX", []string{"--trace", "--output", "--user", "--env", "--attach", "--signal"}, false)
	if p.has("-p", "--attach") {
		c.add(High, "R13 elevated operation", c.name+" attaches to a running process")
	}
	if len(p.rest) == 0 {
		return
	}
	c.setOut(c.a.runArgv(c.sc, p.rest, c.env, c.in, c.opts))
}

func hScript(c *call) {
	p := getopt(c.args(), "cEIOTBtm", []string{"--command", "--echo", "--log-in", "--log-out", "--log-timing", "--logging-format"}, true)
	if cmd, ok := p.val("-c", "--command"); ok {
		c.setOut(c.script(cmd.s, cmd.fl, "script -c"))
	} else {
		c.add(Moderate, "R14 workspace change", "script records a new shell session")
	}
	for _, f := range p.pos {
		c.a.write(c.sc, f, truncateWrite, stream{}, "script")
	}
}

// hParallel: GNU parallel runs its command template once per input through
// the shell; with no template the inputs are the commands.
func hParallel(c *call) {
	c.readsStdin()
	args := c.args()
	var tmpl, items []field
	i := 0
	for ; i < len(args); i++ {
		s := args[i].s
		if s == ":::" || s == "::::" || s == ":::+" {
			break
		}
		if strings.HasPrefix(s, "-") && len(tmpl) == 0 {
			switch s {
			case "-j", "-N", "-S", "-a", "-d", "-I", "--jobs", "--arg-file", "--colsep", "--delimiter", "-n", "-L", "--sshlogin", "--joblog", "--results":
				i++
			}
			continue
		}
		tmpl = append(tmpl, args[i])
	}
	for ; i < len(args); i++ {
		if !strings.HasPrefix(args[i].s, ":::") {
			items = append(items, args[i])
		}
	}
	if len(items) == 0 {
		items = []field{{s: marker("stdin"), fl: c.in.flags & contentFlags}}
		if c.in.known() {
			items = nil
			for _, w := range strings.Fields(c.in.text) {
				items = append(items, field{s: w, fl: c.in.flags & contentFlags})
			}
		}
	}
	if len(items) > maxLoopValues {
		items = items[:maxLoopValues]
	}
	for _, it := range items {
		var text string
		var fl fflags
		if len(tmpl) == 0 {
			text, fl = it.s, it.fl
		} else {
			t, f := joinFields(replaceBraces(tmpl, "{}", it))
			if !strings.Contains(t, it.s) {
				t += " " + it.s
			}
			text, fl = t, f
		}
		c.script(text, fl, "parallel")
	}
}

// hCommand: `command -v X` is a lookup; `command X` runs X, skipping functions.
func hCommand(c *call) {
	args := c.args()
	for len(args) > 0 && strings.HasPrefix(args[0].s, "-") {
		if args[0].s == "-v" || args[0].s == "-V" {
			c.add(Safe, "R15 read-only", "command -v")
			var b strings.Builder
			for _, f := range args[1:] {
				b.WriteString("/usr/bin/" + baseName(f.s) + "\n")
			}
			c.setOut(textStream(b.String(), 0))
			return
		}
		if args[0].s == "--" {
			args = args[1:]
			break
		}
		args = args[1:]
	}
	if len(args) == 0 {
		c.add(Safe, "R15 read-only", "command")
		return
	}
	opts := c.opts
	opts.noFunc = true
	c.setOut(c.a.runArgv(c.sc, args, c.env, c.in, opts))
}

// hExec replaces the shell with its command; with none it only applies redirections.
func hExec(c *call) {
	p := getopt(c.args(), "a", nil, false)
	if len(p.rest) == 0 {
		c.add(Safe, "R15 read-only", "exec redirections")
		return
	}
	opts := c.opts
	opts.noFunc = true
	c.setOut(c.a.runArgv(c.sc, p.rest, c.env, c.in, opts))
}

func hBusybox(c *call) {
	args := c.args()
	if len(args) == 0 || strings.HasPrefix(args[0].s, "-") {
		c.add(Safe, "R15 read-only", c.name+" lists its applets")
		return
	}
	c.setOut(c.run(args))
}

// hXargs: xargs CMD runs CMD with arguments read from stdin; a literal
// upstream is resolved (R5).
func hXargs(c *call) {
	c.readsStdin()
	args := c.args()
	replace := ""
	delim := ""
	fromFile := false
	i := 0
	for ; i < len(args); i++ {
		s := args[i].s
		switch {
		case s == "--":
			i++
			goto done
		case s == "-I" || s == "--replace":
			if i+1 < len(args) {
				replace = args[i+1].s
				i++
			}
		case strings.HasPrefix(s, "--replace="):
			replace = strings.TrimPrefix(s, "--replace=")
		case strings.HasPrefix(s, "-I") && len(s) > 2:
			replace = s[2:]
		case s == "-i" || s == "--replace":
			replace = "{}"
		case strings.HasPrefix(s, "-i") && len(s) > 2:
			replace = s[2:]
		case s == "-d" || s == "--delimiter":
			if i+1 < len(args) {
				delim = args[i+1].s
				i++
			}
		case s == "-0" || s == "--null":
			delim = "\x00"
		case s == "-a" || s == "--arg-file":
			fromFile = true
			i++
		case s == "-n" || s == "-L" || s == "-P" || s == "-s" || s == "-E" || s == "-e" || s == "--max-args" || s == "--max-procs" ||
			s == "--max-lines" || s == "--max-chars" || s == "--eof" || s == "--process-slot-var":
			i++
		case strings.HasPrefix(s, "-"):
		default:
			goto done
		}
	}
done:
	inner := args[min(i, len(args)):]
	if len(inner) == 0 {
		inner = []field{lit("echo")}
	}
	var items []field
	switch {
	case fromFile || !c.in.piped || !c.in.known():
		items = []field{{s: marker("stdin"), fl: c.in.flags & contentFlags}}
	default:
		var words []string
		if delim != "" {
			d := strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\0`, "\x00").Replace(delim)
			for _, w := range strings.Split(strings.TrimSuffix(c.in.text, "\n"), d) {
				if w != "" {
					words = append(words, w)
				}
			}
		} else if replace != "" {
			words = strings.Split(strings.TrimSuffix(c.in.text, "\n"), "\n")
		} else {
			words = strings.Fields(c.in.text)
		}
		for _, w := range words {
			items = append(items, field{s: w, fl: c.in.flags & contentFlags})
		}
		if len(items) > maxLoopValues {
			items = items[:maxLoopValues]
		}
	}
	if replace != "" {
		if isShellName(baseName(inner[0].s)) && slices.ContainsFunc(inner, func(f field) bool { return strings.Contains(f.s, replace) }) {
			c.add(High, "R13 shell interpolation", "xargs -I puts input into shell code")
		}
		for _, it := range items {
			c.run(replaceBraces(inner, replace, it))
		}
		return
	}
	if len(items) == 0 {
		c.run(inner)
		return
	}
	c.run(append(slices.Clone(inner), items...))
}

// hConfined: chroot, unshare, nsenter … run a command in another root or
// namespace: high, plus the inner command.
func hConfined(c *call) {
	c.add(High, "R13 elevated operation", c.name)
	var p parsed
	switch c.name {
	case "chroot":
		p = getopt(c.args(), "", []string{"--userspec", "--groups"}, false)
		if len(p.rest) == 0 {
			return
		}
		root := p.rest[0]
		inner := p.rest[1:]
		sc := c.sc.clone()
		if r := c.sc.resolvePath(root.s); len(r) != 1 || r[0] != "/" {
			sc.container = true
		}
		if len(inner) == 0 {
			c.add(Dangerous, "R10 interactive root shell", "chroot opens a root shell")
			return
		}
		c.a.runArgv(sc, inner, c.env, c.in, callOpts{elevated: true})
		return
	case "nsenter":
		p = getopt(c.args(), "tSGrwF", []string{"--target", "--setuid", "--setgid", "--root", "--wd"}, false)
	case "firejail", "bwrap", "systemd-nspawn", "proot", "schroot":
		// Many options take values; the command follows "--" or the last option.
		args := c.args()
		if i := slices.IndexFunc(args, func(f field) bool { return f.s == "--" }); i >= 0 {
			p.rest = args[i+1:]
		} else {
			for i := len(args) - 1; i >= 0; i-- {
				if strings.HasPrefix(args[i].s, "-") {
					if i+1 < len(args) {
						p.rest = args[i+1:]
						if c.name == "bwrap" && len(p.rest) > 1 {
							p.rest = p.rest[1:]
						}
					}
					break
				}
				if i == 0 {
					p.rest = args
				}
			}
		}
	default:
		p = getopt(c.args(), "S", []string{"--setuid", "--setgid", "--root", "--wd", "--propagation", "--map-user", "--map-group"}, false)
	}
	if len(p.rest) > 0 {
		c.a.runArgv(c.sc, p.rest, c.env, c.in, callOpts{elevated: true})
	}
}

func hSystemdRun(c *call) {
	c.add(High, "R13 elevated operation", "systemd-run")
	p := getopt(c.args(), "upEHMd", []string{"--unit", "--property", "--setenv", "--host", "--machine", "--on-active", "--on-boot",
		"--on-startup", "--on-unit-active", "--on-unit-inactive", "--on-calendar", "--uid", "--gid", "--nice", "--working-directory",
		"--description", "--slice", "--timer-property", "--path-property", "--socket-property", "--service-type"}, false)
	if len(p.rest) > 0 {
		c.a.runArgv(c.sc, p.rest, c.env, c.in, callOpts{elevated: true})
	}
}

// hAt schedules its stdin script: high (persistence), plus the script (R8, R9h).
func hAt(c *call) {
	c.readsStdin()
	p := getopt(c.args(), "qfmMtlrdbcv", nil, true)
	if p.has("-l", "-c") {
		c.add(Safe, "R15 read-only", c.name+" query")
		return
	}
	if p.has("-r", "-d") {
		c.add(High, "R13 persistence", c.name+" removes a job")
		return
	}
	c.add(High, "R13 persistence", c.name+" schedules a job")
	if f, ok := p.val("-f"); ok {
		if c.a.isDownloaded(c.sc, f.s) {
			c.add(Forbidden, "R9e downloaded code", "schedules a downloaded file")
		}
		return
	}
	if c.in.piped {
		c.a.scriptIn(c.sc, c.in.text, c.in.flags, "at job", ttyStream(), nil, false)
	}
}

func hCrontab(c *call) {
	c.readsStdin()
	p := getopt(c.args(), "ucs", nil, true)
	switch {
	case p.has("-l"):
		c.add(Safe, "R15 read-only", "crontab -l")
	case p.has("-r"):
		c.add(Dangerous, "R10 destructive", "crontab -r removes every job")
	case p.has("-e"):
		c.add(High, "R13 persistence", "crontab -e")
	default:
		c.add(High, "R13 persistence", "crontab install")
		if len(p.pos) == 0 || p.pos[0].s == "-" {
			c.a.crontabText(c.sc, c.in)
		} else if s, ok := c.a.fdStreams[p.pos[0].s]; ok {
			c.a.crontabText(c.sc, s)
		}
	}
}

func hNetWrapper(c *call) {
	c.add(Moderate, "R11 network", c.name)
	p := getopt(c.args(), "fq", nil, false)
	if len(p.rest) > 0 {
		c.setOut(c.run(p.rest))
	}
}

func hValgrind(c *call) {
	c.add(Moderate, "R14 project code", c.name)
	p := getopt(c.args(), "", nil, false)
	if len(p.rest) > 0 {
		c.setOut(c.run(p.rest))
	}
}

// hGdb runs a program under the debugger; -ex 'shell …' and -ex '!…' are shell escapes (R5).
func hGdb(c *call) {
	c.add(Moderate, "R14 project code", c.name)
	args := c.args()
	for i := 0; i < len(args); i++ {
		s := args[i].s
		switch {
		case (s == "-ex" || s == "--ex" || s == "-eval-command" || s == "--eval-command" || s == "-o" || s == "--one-line") && i+1 < len(args):
			i++
			cmd := strings.TrimSpace(args[i].s)
			if rest, ok := strings.CutPrefix(cmd, "shell "); ok {
				c.script(rest, args[i].fl, "debugger shell escape")
			} else if rest, ok := strings.CutPrefix(cmd, "!"); ok {
				c.script(rest, args[i].fl, "debugger shell escape")
			} else if strings.HasPrefix(cmd, "platform shell ") {
				c.script(strings.TrimPrefix(cmd, "platform shell "), args[i].fl, "debugger shell escape")
			}
		case s == "-p" || s == "--pid":
			c.add(High, "R13 elevated operation", c.name+" attaches to a running process")
		case s == "--args" && i+1 < len(args):
			c.run(args[i+1:])
			return
		}
	}
}

func hFaketime(c *call) {
	p := getopt(c.args(), "f", nil, false)
	if len(p.rest) > 1 {
		c.setOut(c.run(p.rest[1:]))
	}
	c.add(Safe, "R15 read-only", "faketime")
}

// hTmux classifies commands that tmux or screen start or type into a pane.
func hTmux(c *call) {
	args := c.args()
	c.add(Moderate, "R14 workspace change", c.name)
	sub, idx := firstSub(args)
	if c.name == "tmux" {
		switch sub {
		case "kill-server", "kill-session", "kill-window", "kill-pane":
			c.add(Forbidden, "R7 process termination", "tmux "+sub)
			return
		case "send-keys", "send":
			var parts []string
			for _, a := range args[idx+1:] {
				if strings.HasPrefix(a.s, "-") {
					continue
				}
				if a.s == "Enter" || a.s == "C-m" || a.s == "KPEnter" {
					parts = append(parts, "\n")
					continue
				}
				parts = append(parts, a.s)
			}
			c.script(strings.Join(parts, " "), 0, "tmux send-keys")
			return
		case "new-session", "new", "new-window", "neww", "split-window", "splitw", "respawn-pane", "run-shell", "run":
			p := getopt(args[idx+1:], "cefFlnstxyLCAEBc", nil, true)
			if len(p.pos) > 0 {
				text, fl := joinFields(p.pos)
				c.script(text, fl, "tmux "+sub)
			}
		}
		return
	}
	// screen: -X quit ends sessions; screen -dm CMD starts CMD.
	if hasArg(args, "quit") && hasArg(args, "-X") {
		c.add(Forbidden, "R7 process termination", "screen -X quit")
		return
	}
	p := getopt(args, "SXcpTe", nil, false)
	if len(p.rest) > 0 {
		c.run(p.rest)
	}
}

func isShellName(n string) bool {
	switch n {
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "tcsh", "csh", "yash", "posh", "rbash", "pwsh", "busybox":
		return true
	}
	return false
}
