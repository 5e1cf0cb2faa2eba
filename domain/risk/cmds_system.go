package risk

import (
	"regexp"
	"slices"
	"strings"
)

func registerSystemHandlers(reg func(func(*call), ...string)) {
	reg(levelHandler(Forbidden, "R7 process termination"), "kill", "pkill", "killall", "killall5", "skill", "snice", "xkill", "tkill")
	reg(hFuser, "fuser")
	reg(levelHandler(Forbidden, "R8 power state"), "shutdown", "reboot", "halt", "poweroff", "init", "telinit", "kexec", "rtcwake", "pm-suspend", "pm-hibernate", "systemd-hibernate")
	reg(hSystemctl, "systemctl")
	reg(hService, "service", "rc-service", "sv")
	reg(hLoginctl, "loginctl")
	reg(hPkgManager, "apt", "apt-get", "aptitude", "dnf", "yum", "microdnf", "zypper", "pacman", "yay", "paru", "apk", "dpkg", "rpm",
		"snap", "flatpak", "brew", "port", "nix-env", "emerge", "pkg", "xbps-install")
	reg(hPip, "pip", "pip3", "pip2", "pipx", "uv")
	reg(hNpm, "npm", "yarn", "pnpm", "bun")
	reg(hGo, "go")
	reg(hCargo, "cargo")
	reg(hGem, "gem")
	reg(hMake, "make", "gmake", "ninja")
	reg(hMount, "mount")
	reg(hIP, "ip")
	reg(hIfconfig, "ifconfig", "route", "arp", "iwconfig")
	reg(hFirewall, "iptables", "ip6tables", "iptables-legacy", "nft", "ufw", "firewall-cmd", "pfctl", "iptables-restore")
	reg(hSetenforce, "setenforce")
	reg(levelHandler(Dangerous, "R10 security control"), "aa-disable", "aa-complain", "aa-teardown")
	reg(hHostname, "hostname")
	reg(hDate, "date")
	reg(hCtlSetter, "timedatectl", "hostnamectl", "localectl")
	reg(hSysctl, "sysctl")
	reg(hJournalctl, "journalctl")
	reg(hDmesg, "dmesg")
	reg(hPasswd, "passwd")
	reg(hUseradd, "useradd", "adduser", "usermod")
	reg(hUserdel, "userdel", "deluser")
	reg(hAuditctl, "auditctl")
	reg(hGit, "git")
	reg(hDocker, "docker", "podman", "nerdctl")
	reg(hCompose, "docker-compose", "podman-compose")
	reg(hKubectl, "kubectl", "oc", "k")
	reg(hHelm, "helm")
	reg(hTerraform, "terraform", "tofu", "terragrunt")
	reg(hCloud, "aws", "gcloud", "az", "gsutil", "doctl")
	reg(hDB, "psql", "mysql", "mariadb", "sqlite3", "redis-cli", "mongo", "mongosh", "cqlsh", "clickhouse-client", "sqlcmd", "duckdb")
	reg(levelHandler(Dangerous, "R10 destructive"), "dropdb", "dropuser")
	reg(hVisudo, "visudo")
	reg(hPrintenv, "printenv", "set")
	reg(levelHandler(High, "R20 unknown executable"), "npx", "pnpx", "bunx", "uvx")
	reg(hDbus, "dbus-send", "busctl", "gdbus", "qdbus", "gsettings")
}

// hDbus catches power-state calls to logind made over D-Bus (R8).
func hDbus(c *call) {
	joined := strings.ToLower(strings.Join(fieldStrings(c.args()), " "))
	for _, m := range []string{"poweroff", "reboot", "halt", "suspend", "hibernate", "hybridsleep", "kexec"} {
		if strings.Contains(joined, m) && (strings.Contains(joined, "login1") || strings.Contains(joined, "systemd1") || strings.Contains(joined, "consolekit")) {
			c.add(Forbidden, "R8 power state", c.name+" asks logind to "+m)
			return
		}
	}
	if strings.Contains(joined, "killunit") || strings.Contains(joined, "terminate") || strings.Contains(joined, "killsession") || strings.Contains(joined, "killuser") {
		c.add(Forbidden, "R7 process termination", c.name+" over D-Bus")
		return
	}
	if c.name == "busctl" && (len(c.args()) == 0 || hasArg(c.args(), "list", "status", "tree", "introspect", "monitor")) {
		c.add(Safe, "R15 read-only", c.name)
		return
	}
	c.add(High, "R13 elevated operation", c.name)
}

// hPrintenv prints the environment: safe to show, secret to send (R11).
func hPrintenv(c *call) {
	c.add(Safe, "R15 read-only", c.name)
	c.setOut(unknownStream(fSecret))
}

func hFuser(c *call) {
	if hasShortFlag(c.args(), "k") || hasArg(c.args(), "--kill") {
		c.add(Forbidden, "R7 process termination", "fuser -k")
		return
	}
	c.add(Safe, "R15 read-only", "fuser")
}

var powerVerbs = []string{"poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep", "suspend-then-hibernate", "soft-reboot", "emergency", "rescue", "sleep"}

var securityUnits = []string{"firewalld", "ufw", "apparmor", "auditd", "selinux", "fail2ban", "clamav", "clamd", "nftables", "iptables", "crowdsec", "wazuh", "ossec", "falco"}

func hSystemctl(c *call) {
	args := c.args()
	p := getopt(args, "tpHMsn", []string{"--type", "--property", "--host", "--machine", "--signal", "--lines", "--output", "--state", "--kill-whom", "--root"}, true)
	verb := p.firstWord()
	units := []string{}
	if len(p.pos) > 1 {
		units = fieldStrings(p.pos[1:])
	}
	switch {
	case verb == "" || slices.Contains([]string{"status", "show", "cat", "list-units", "list-unit-files", "list-timers", "list-sockets",
		"list-jobs", "list-dependencies", "list-machines", "is-active", "is-enabled", "is-failed", "is-system-running", "get-default",
		"help", "show-environment", "list-automounts", "list-paths"}, verb):
		c.add(Safe, "R15 read-only", "systemctl "+verb)
	case verb == "kill":
		c.add(Forbidden, "R7 process termination", "systemctl kill")
	case slices.Contains(powerVerbs, verb) || verb == "default":
		c.add(Forbidden, "R8 power state", "systemctl "+verb)
	case verb == "isolate":
		for _, u := range units {
			t := strings.TrimSuffix(u, ".target")
			if slices.Contains([]string{"rescue", "emergency", "poweroff", "reboot", "halt", "kexec", "runlevel0", "runlevel1", "runlevel6"}, t) {
				c.add(Forbidden, "R8 power state", "systemctl isolate "+u)
				return
			}
		}
		c.add(High, "R13 service lifecycle", "systemctl isolate")
	default:
		if slices.Contains([]string{"start", "restart", "reload-or-restart", "try-restart"}, verb) {
			for _, u := range units {
				t := strings.TrimSuffix(u, ".target")
				if slices.Contains([]string{"poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep", "rescue", "emergency", "ctrl-alt-del", "soft-reboot"}, t) {
					c.add(Forbidden, "R8 power state", "systemctl "+verb+" "+u)
					return
				}
			}
		}
		if slices.Contains([]string{"stop", "disable", "mask", "kill"}, verb) {
			for _, u := range units {
				if slices.Contains(securityUnits, strings.TrimSuffix(u, ".service")) {
					c.add(Dangerous, "R10 security control", "systemctl "+verb+" "+u)
				}
			}
		}
		c.add(High, "R13 service lifecycle", "systemctl "+verb)
	}
}

func hService(c *call) {
	args := fieldStrings(c.args())
	if len(args) >= 2 && (args[1] == "status") || slices.Contains(args, "--status-all") || len(args) == 0 {
		c.add(Safe, "R15 read-only", c.name+" status")
		return
	}
	if len(args) >= 2 && slices.Contains([]string{"stop"}, args[1]) && slices.Contains(securityUnits, args[0]) {
		c.add(Dangerous, "R10 security control", c.name+" stop "+args[0])
	}
	c.add(High, "R13 service lifecycle", c.name+" "+strings.Join(args, " "))
}

func hLoginctl(c *call) {
	verb, _ := firstSub(c.args())
	switch {
	case slices.Contains(powerVerbs, verb):
		c.add(Forbidden, "R8 power state", "loginctl "+verb)
	case strings.HasPrefix(verb, "terminate-") || strings.HasPrefix(verb, "kill-"):
		c.add(Forbidden, "R7 process termination", "loginctl "+verb)
	case verb == "" || strings.HasPrefix(verb, "list-") || strings.HasPrefix(verb, "show-") || verb == "session-status" || verb == "user-status" || verb == "seat-status":
		c.add(Safe, "R15 read-only", "loginctl "+verb)
	default:
		c.add(High, "R13 elevated operation", "loginctl "+verb)
	}
}

func hPkgManager(c *call) {
	args := fieldStrings(c.args())
	var verb string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			verb = a
			break
		}
	}
	readOnly := []string{"list", "search", "show", "info", "policy", "depends", "rdepends", "madison", "showpkg", "query",
		"provides", "whatprovides", "repolist", "check-update", "outdated", "deps", "leaves", "config", "doctor", "--version", "version", "files", "contents", "history", "changelog", "help"}
	switch c.name {
	case "pacman", "yay", "paru":
		if len(args) > 0 && (strings.HasPrefix(args[0], "-Q") || strings.HasPrefix(args[0], "-Ss") || strings.HasPrefix(args[0], "-Si") || strings.HasPrefix(args[0], "-F")) {
			c.add(Safe, "R15 read-only", c.name+" query")
			return
		}
	case "dpkg":
		if len(args) > 0 && slices.Contains([]string{"-l", "-L", "-s", "-S", "--list", "--listfiles", "--status", "--search", "-p", "--print-architecture", "--get-selections", "-c", "--contents", "-I", "--info"}, args[0]) {
			c.add(Safe, "R15 read-only", "dpkg query")
			return
		}
	case "rpm":
		if len(args) > 0 && (strings.HasPrefix(args[0], "-q") || args[0] == "--query" || args[0] == "-V" || args[0] == "--verify") {
			c.add(Safe, "R15 read-only", "rpm query")
			return
		}
	}
	if slices.Contains(readOnly, verb) || (verb == "" && hasArg(c.args(), "--version", "-v", "-h", "--help")) {
		c.add(Safe, "R15 read-only", c.name+" "+verb)
		return
	}
	if (c.name == "apt-get" || c.name == "apt") && hasArg(c.args(), "-s", "--simulate", "--dry-run", "--just-print", "--no-act", "--recon") ||
		(c.name == "dnf" || c.name == "yum") && hasArg(c.args(), "--assumeno") {
		c.add(Safe, "R15 read-only", c.name+" "+verb+" simulated")
		return
	}
	if verb == "update" && (c.name == "apt" || c.name == "apt-get") || verb == "makecache" || verb == "fetch" {
		c.add(High, "R13 package manager", c.name+" "+verb+" refreshes system package lists")
		return
	}
	c.add(High, "R13 package manager", c.name+" "+verb)
}

// inVenv reports a pip that belongs to a project virtual environment.
func inVenv(prog string) bool {
	return strings.Contains(prog, "venv/") || strings.Contains(prog, ".venv/") || strings.Contains(prog, "/env/bin/")
}

func hPip(c *call) {
	p := getopt(c.args(), "rcetib", []string{"--requirement", "--constraint", "--editable", "--target", "--index-url", "--extra-index-url", "--prefix", "--root", "--python"}, true)
	verb := p.firstWord()
	switch verb {
	case "", "list", "show", "freeze", "check", "help", "--version", "search", "inspect", "debug", "config", "cache", "index":
		c.add(Safe, "R15 read-only", c.name+" "+verb)
	case "download", "wheel", "hash":
		c.add(Moderate, "R11 network", c.name+" "+verb)
	case "install", "uninstall", "sync", "add", "remove", "tool", "run", "pip":
		if verb == "install" && p.has("--dry-run") {
			c.add(Moderate, "R11 network", c.name+" install --dry-run resolves packages")
			return
		}
		prog := c.argv[0].s
		switch {
		case c.name == "uv" && (verb == "add" || verb == "remove" || verb == "sync" || verb == "run" || verb == "pip" && !hasArg(c.args(), "--system")):
			c.add(Moderate, "R14 project install", "uv "+verb)
		case inVenv(prog) || p.has("-t", "--target"):
			c.add(Moderate, "R14 project install", c.name+" "+verb+" into a virtual environment")
		default:
			c.add(High, "R13 package manager", c.name+" "+verb+" outside a virtual environment")
		}
	default:
		c.add(Moderate, "R14 workspace change", c.name+" "+verb)
	}
}

func hNpm(c *call) {
	args := c.args()
	global := hasArg(args, "-g", "--global", "--location=global")
	verb, idx := firstSub(args)
	switch verb {
	case "", "ls", "list", "ll", "la", "view", "info", "show", "outdated", "search", "whoami", "help", "--version", "-v", "audit", "why", "explain", "doctor", "root", "prefix", "bin", "pm":
		switch verb {
		case "outdated", "view", "info", "show", "search", "audit", "whoami", "doctor":
			// These ask the registry (R11).
			c.add(Moderate, "R11 network", c.name+" "+verb+" asks the registry")
			return
		}
		if verb == "pm" {
			c.add(Moderate, "R14 project code", c.name+" pm")
			return
		}
		if verb == "" && c.name == "yarn" {
			c.add(Moderate, "R14 project install", "yarn install")
			return
		}
		c.add(Safe, "R15 read-only", c.name+" "+verb)
	case "config":
		if idx+1 < len(args) && (args[idx+1].s == "get" || args[idx+1].s == "list" || args[idx+1].s == "ls") {
			c.add(Safe, "R15 read-only", c.name+" config")
			return
		}
		c.add(Moderate, "R14 workspace change", c.name+" config")
	case "publish", "unpublish", "deprecate", "owner", "token", "adduser", "login":
		c.add(High, "R11 upload", c.name+" "+verb)
	case "exec", "x", "dlx", "create", "init":
		if c.name == "bun" && verb == "x" || c.name == "pnpm" && verb == "dlx" || verb == "create" {
			c.add(High, "R20 unknown executable", c.name+" "+verb+" runs a downloaded package")
			return
		}
		c.add(Moderate, "R14 project code", c.name+" "+verb)
	case "global":
		c.add(High, "R13 package manager", c.name+" global install")
	default:
		if global {
			c.add(High, "R13 package manager", c.name+" "+verb+" -g")
			return
		}
		if c.name == "bun" && !slices.Contains([]string{"install", "i", "add", "remove", "rm", "run", "test", "build", "update", "link", "pm"}, verb) {
			// bun FILE runs a script.
			c.runScriptFile(args[idx], args[idx+1:])
			return
		}
		c.add(Moderate, "R14 project code", c.name+" "+verb)
	}
}

func hGo(c *call) {
	verb, idx := firstSub(c.args())
	switch verb {
	case "version", "env", "list", "doc", "help", "":
		if verb == "env" && hasArg(c.args(), "-w", "-u") {
			c.add(Moderate, "R14 workspace change", "go env -w")
			return
		}
		c.add(Safe, "R15 read-only", "go "+verb)
	case "install":
		c.add(High, "R13 package manager", "go install")
	case "run":
		c.add(Moderate, "R14 project code", "go run")
		for _, a := range c.args()[idx+1:] {
			if strings.Contains(a.s, "@") {
				c.add(High, "R20 unknown executable", "go run of a downloaded module "+a.s)
			}
		}
	default:
		c.add(Moderate, "R14 project code", "go "+verb)
	}
}

func hCargo(c *call) {
	verb, _ := firstSub(c.args())
	switch verb {
	case "install", "publish", "uninstall", "login", "owner", "yank":
		c.add(High, "R13 package manager", "cargo "+verb)
	case "", "version", "--version", "tree", "metadata", "search", "help", "locate-project", "read-manifest", "pkgid", "verify-project":
		c.add(Safe, "R15 read-only", "cargo "+verb)
	default:
		c.add(Moderate, "R14 project code", "cargo "+verb)
	}
}

func hGem(c *call) {
	verb, _ := firstSub(c.args())
	switch verb {
	case "list", "search", "info", "specification", "contents", "env", "help", "which", "query", "":
		c.add(Safe, "R15 read-only", "gem "+verb)
	default:
		c.add(High, "R13 package manager", "gem "+verb)
	}
}

func hMake(c *call) {
	p := getopt(c.args(), "CfIjlWoE", []string{"--directory", "--file", "--makefile", "--include-dir", "--jobs", "--load-average", "--what-if", "--old-file", "--eval"}, true)
	for _, t := range p.pos {
		if t.s == "install" || t.s == "uninstall" || strings.HasPrefix(t.s, "install-") {
			c.add(High, "R13 package manager", c.name+" "+t.s)
			return
		}
		if k, v, ok := strings.Cut(t.s, "="); ok && (k == "SHELL" || k == ".SHELLFLAGS") {
			c.script(v, t.fl, c.name+" "+k)
		}
	}
	if p.has("-n", "--dry-run", "--just-print", "-q", "--question", "-p", "--print-data-base") {
		c.add(Safe, "R15 read-only", c.name+" dry run")
		return
	}
	c.add(Moderate, "R14 project code", c.name)
	sc := c.sc
	if d, ok := p.val("-C", "--directory"); ok {
		c.sc = c.sc.clone()
		c.sc.cwd = c.sc.resolvePath(d.s)
	}
	if mf, content, ok := c.writtenMakefile(p.vals("-f", "--file", "--makefile")); ok {
		c.makeRecipes(mf, content)
	}
	c.sc = sc
}

func hMount(c *call) {
	p := getopt(c.args(), "tOoLUTN", []string{"--types", "--options", "--label", "--uuid", "--fstab", "--namespace", "--target", "--source"}, true)
	if len(p.pos) == 0 && !p.has("-a", "--all", "--bind", "--rbind", "--move") {
		c.add(Safe, "R15 read-only", "mount lists mounts")
		return
	}
	c.add(High, "R13 elevated operation", "mount")
}

func hIP(c *call) {
	args := fieldStrings(c.args())
	var words []string
	for i := 0; i < len(args); i++ {
		if strings.HasPrefix(args[i], "-") {
			if args[i] == "-n" || args[i] == "-netns" || args[i] == "-b" || args[i] == "-batch" {
				i++
			}
			continue
		}
		words = append(words, args[i])
	}
	if len(words) >= 3 && words[0] == "netns" && words[1] == "exec" {
		c.add(High, "R13 elevated operation", "ip netns exec")
		if i := slices.Index(args, "exec"); i >= 0 && i+2 < len(args) {
			c.run(c.args()[i+2:])
		}
		return
	}
	if len(words) <= 1 || slices.Contains([]string{"show", "list", "ls", "get", "help", "monitor"}, words[1]) {
		c.add(Safe, "R15 read-only", "ip "+strings.Join(words, " "))
		return
	}
	c.add(High, "R13 network configuration", "ip "+strings.Join(words, " "))
}

func hIfconfig(c *call) {
	pos := getopt(c.args(), "", nil, true).pos
	limit := 1
	if c.name == "route" || c.name == "arp" {
		limit = 0
	}
	if len(pos) <= limit {
		c.add(Safe, "R15 read-only", c.name)
		return
	}
	c.add(High, "R13 network configuration", c.name)
}

func hFirewall(c *call) {
	args := fieldStrings(c.args())
	joined := " " + strings.Join(args, " ") + " "
	switch c.name {
	case "ufw":
		verb, _ := firstSub(c.args())
		switch verb {
		case "status", "show", "app", "version", "":
			c.add(Safe, "R15 read-only", "ufw "+verb)
		case "disable", "reset":
			c.add(Dangerous, "R10 security control", "ufw "+verb)
		default:
			c.add(High, "R13 firewall", "ufw "+verb)
		}
		return
	case "nft":
		switch {
		case strings.Contains(joined, " flush ") || strings.Contains(joined, " delete table ") || strings.Contains(joined, " -f /dev/null"):
			c.add(Dangerous, "R10 security control", "nft flushes the ruleset")
		case strings.Contains(joined, " list "):
			c.add(Safe, "R15 read-only", "nft list")
		default:
			c.add(High, "R13 firewall", "nft")
		}
		return
	case "firewall-cmd":
		switch {
		case strings.Contains(joined, "--panic-on") || strings.Contains(joined, "--set-default-zone=trusted") || strings.Contains(joined, "--set-default-zone trusted"):
			c.add(Dangerous, "R10 security control", "firewall-cmd")
		case strings.Contains(joined, "--list") || strings.Contains(joined, "--get") || strings.Contains(joined, "--state") || strings.Contains(joined, "--query"):
			c.add(Safe, "R15 read-only", "firewall-cmd query")
		default:
			c.add(High, "R13 firewall", "firewall-cmd")
		}
		return
	case "pfctl":
		if strings.Contains(joined, " -d ") || strings.Contains(joined, " -F ") {
			c.add(Dangerous, "R10 security control", "pfctl")
			return
		}
	}
	switch {
	case hasShortFlag(c.args(), "FX") || strings.Contains(joined, "--flush") || strings.Contains(joined, "--delete-chain") ||
		(strings.Contains(joined, " -P ") || strings.Contains(joined, "--policy")) && strings.Contains(joined, "ACCEPT"):
		c.add(Dangerous, "R10 security control", c.name+" flushes or opens the firewall")
	case hasShortFlag(c.args(), "LS") && !hasShortFlag(c.args(), "AIDRN") || strings.Contains(joined, "--list"):
		c.add(Safe, "R15 read-only", c.name+" -L")
	default:
		c.add(High, "R13 firewall", c.name)
	}
}

func hSetenforce(c *call) {
	if hasArg(c.args(), "0", "Permissive", "permissive") {
		c.add(Dangerous, "R10 security control", "setenforce 0")
		return
	}
	c.add(High, "R13 elevated operation", "setenforce")
}

func hHostname(c *call) {
	pos := getopt(c.args(), "F", []string{"--file"}, true).pos
	if len(pos) == 0 && !hasArg(c.args(), "-F", "--file", "-b", "--boot") {
		c.add(Safe, "R15 read-only", "hostname")
		return
	}
	c.add(High, "R13 elevated operation", "hostname sets the host name")
}

func hDate(c *call) {
	if hasArg(c.args(), "-s", "--set") || slices.ContainsFunc(c.args(), func(f field) bool { return strings.HasPrefix(f.s, "--set=") }) {
		c.add(High, "R13 elevated operation", "date sets the clock")
		return
	}
	p := getopt(c.args(), "dfrI", []string{"--date", "--file", "--reference"}, true)
	for _, a := range p.pos {
		if !strings.HasPrefix(a.s, "+") {
			c.add(High, "R13 elevated operation", "date sets the clock")
			return
		}
	}
	c.add(Safe, "R15 read-only", "date")
}

func hCtlSetter(c *call) {
	verb, _ := firstSub(c.args())
	if strings.HasPrefix(verb, "set-") || verb == "hostname" && len(c.args()) > 1 {
		c.add(High, "R13 elevated operation", c.name+" "+verb)
		return
	}
	c.add(Safe, "R15 read-only", c.name)
}

func hSysctl(c *call) {
	for _, a := range c.args() {
		if a.s == "-w" || a.s == "--write" || a.s == "-p" || a.s == "--load" || a.s == "--system" || (strings.Contains(a.s, "=") && !strings.HasPrefix(a.s, "-")) {
			c.add(High, "R13 elevated operation", "sysctl writes a kernel setting")
			return
		}
	}
	c.add(Safe, "R15 read-only", "sysctl")
}

func hJournalctl(c *call) {
	for _, a := range c.args() {
		if strings.HasPrefix(a.s, "--vacuum") {
			c.add(Dangerous, "R10 destructive", "journalctl "+a.s)
			return
		}
		if a.s == "--rotate" || a.s == "--flush" || a.s == "--relinquish-var" || a.s == "--setup-keys" {
			c.add(High, "R13 elevated operation", "journalctl "+a.s)
			return
		}
	}
	c.add(Safe, "R15 read-only", "journalctl")
}

func hDmesg(c *call) {
	if hasShortFlag(c.args(), "CcDEn") || hasArg(c.args(), "--clear", "--read-clear", "--console-off", "--console-on", "--console-level") {
		c.add(High, "R13 elevated operation", "dmesg changes the kernel log")
		return
	}
	c.add(Safe, "R15 read-only", "dmesg")
}

func hPasswd(c *call) {
	if hasArg(c.args(), "-d", "--delete") {
		c.add(Forbidden, "R9g privilege backdoor", "passwd -d removes a password")
		return
	}
	if hasArg(c.args(), "-S", "--status") {
		c.add(Safe, "R15 read-only", "passwd -S")
		return
	}
	c.add(High, "R13 accounts", "passwd")
}

func hUseradd(c *call) {
	args := c.args()
	uid0 := false
	for i, a := range args {
		if (a.s == "-u" || a.s == "--uid") && i+1 < len(args) && args[i+1].s == "0" || a.s == "--uid=0" || a.s == "-u0" {
			uid0 = true
		}
		if (a.s == "-G" || a.s == "-aG" || a.s == "--groups" || a.s == "-g" || a.s == "--gid") && i+1 < len(args) {
			for _, g := range strings.Split(args[i+1].s, ",") {
				if g == "root" || g == "0" {
					uid0 = true
				}
			}
		}
	}
	if uid0 {
		c.add(Forbidden, "R9g privilege backdoor", c.name+" gives an account root's id")
		return
	}
	c.add(High, "R13 accounts", c.name)
}

func hUserdel(c *call) {
	if hasShortFlag(c.args(), "rf") || hasArg(c.args(), "--remove", "--remove-home", "--remove-all-files", "--force") {
		c.add(Dangerous, "R10 destructive", c.name+" removes the home directory")
		return
	}
	c.add(High, "R13 accounts", c.name)
}

func hAuditctl(c *call) {
	joined := strings.Join(fieldStrings(c.args()), " ")
	if strings.Contains(joined, "-D") || strings.Contains(joined, "-e 0") {
		c.add(Dangerous, "R10 security control", "auditctl disables auditing")
		return
	}
	if strings.Contains(joined, "-l") || strings.Contains(joined, "-s") {
		c.add(Safe, "R15 read-only", "auditctl -l")
		return
	}
	c.add(High, "R13 elevated operation", "auditctl")
}

func hVisudo(c *call) {
	if hasArg(c.args(), "-c", "--check") {
		c.add(Safe, "R15 read-only", "visudo -c")
		return
	}
	c.add(High, "R13 accounts", "visudo")
}

// gitExecKeys are git config keys whose value git runs as a command (R5).
var gitExecKeys = []string{"core.pager", "core.editor", "core.sshcommand", "core.fsmonitor", "core.askpass", "diff.external",
	"credential.helper", "sequence.editor", "gpg.program", "pager.", "interactive.difffilter", "core.hookspath", "filter.", "merge.", "diff."}

func (c *call) gitConfigValue(key string, val field) {
	k := strings.ToLower(key)
	if strings.HasPrefix(k, "alias.") {
		if body, ok := strings.CutPrefix(val.s, "!"); ok {
			c.script(body, val.fl, "git alias "+key)
		}
		return
	}
	if k == "core.hookspath" {
		c.add(High, "R13 persistence", "git core.hooksPath")
		if !hasMarker(val.s) {
			c.a.hooksDirs = append(c.a.hooksDirs, c.sc.resolvePath(val.s)...)
		}
		return
	}
	for _, ek := range gitExecKeys {
		if k == ek || strings.HasSuffix(ek, ".") && strings.HasPrefix(k, ek) && (strings.HasSuffix(k, ".command") || strings.HasSuffix(k, ".clean") ||
			strings.HasSuffix(k, ".smudge") || strings.HasSuffix(k, ".process") || strings.HasSuffix(k, ".driver") || strings.HasSuffix(k, ".textconv") || ek == "pager.") {
			if k == "credential.helper" && !strings.HasPrefix(val.s, "!") {
				c.add(Moderate, "R14 workspace change", "git credential helper")
				return
			}
			c.script(strings.TrimPrefix(val.s, "!"), val.fl, "git "+key)
			return
		}
	}
}

var gitSafe = []string{"status", "log", "diff", "show", "blame", "shortlog", "describe", "rev-parse", "rev-list", "ls-files",
	"ls-tree", "cat-file", "grep", "whatchanged", "help", "version", "check-ignore", "check-attr", "for-each-ref", "name-rev", "var",
	"cherry", "count-objects", "show-ref", "merge-base", "diff-tree", "diff-files", "diff-index", "range-diff", "verify-commit",
	"verify-tag", "show-branch", "reflog", "annotate", "fsck", "check-ref-format", "instaweb-status", "bugreport", "config-list", "format-patch", "request-pull", "archive", "bundle", "notes", "worktree-list", "lfs", "submodule-status"}

func hGit(c *call) {
	args := c.args()
	sc := c.sc
	c.gitEnvConfig()
	i := 0
	for ; i < len(args); i++ {
		s := args[i].s
		switch {
		case s == "-C" && i+1 < len(args):
			sc = sc.clone()
			sc.cwd = sc.resolvePath(args[i+1].s)
			i++
		case s == "-c" && i+1 < len(args):
			k, v, _ := strings.Cut(args[i+1].s, "=")
			c.gitConfigValue(k, field{s: v, fl: args[i+1].fl})
			i++
		case strings.HasPrefix(s, "--config-env="):
			c.gitConfigEnv(field{s: strings.TrimPrefix(s, "--config-env="), fl: args[i].fl})
		case s == "--config-env" && i+1 < len(args):
			c.gitConfigEnv(args[i+1])
			i++
		case (s == "--git-dir" || s == "--work-tree" || s == "--namespace") && i+1 < len(args):
			i++
		case strings.HasPrefix(s, "--exec-path="):
			c.add(High, "R13 environment hijack", "git --exec-path chooses where git's own commands come from")
		case strings.HasPrefix(s, "-"):
		default:
			goto sub
		}
	}
sub:
	if i >= len(args) {
		c.add(Safe, "R15 read-only", "git")
		return
	}
	verb := args[i].s
	rest := args[i+1:]
	rs := fieldStrings(rest)
	c.hiddenOptions("git "+verb, rest)
	c.gitStagesSecret(sc, verb, rest)
	switch {
	case verb == "bisect" && len(rs) > 1 && rs[0] == "run":
		c.run(rest[1:])
	case verb == "submodule" && len(rs) > 1 && rs[0] == "foreach":
		j := 1
		for j < len(rs) && strings.HasPrefix(rs[j], "-") {
			j++
		}
		if j < len(rest) {
			text, fl := joinFields(rest[j:])
			c.script(text, fl, "git submodule foreach")
		}
	}
	for _, a := range rest {
		if v, ok := strings.CutPrefix(a.s, "--output="); ok {
			c.a.write(sc, field{s: v, fl: a.fl}, truncateWrite, stream{}, "git --output")
		}
		if v, ok := strings.CutPrefix(a.s, "--upload-pack="); ok {
			c.script(v, a.fl, "git --upload-pack")
		}
		if v, ok := strings.CutPrefix(a.s, "--receive-pack="); ok {
			c.script(v, a.fl, "git --receive-pack")
		}
		if v, ok := strings.CutPrefix(a.s, "ext::"); ok {
			c.script(v, a.fl, "git ext:: transport")
		}
	}
	switch verb {
	case "branch":
		switch {
		case hasArg(rest, "-D") || hasArg(rest, "--delete") && hasArg(rest, "--force", "-f"):
			c.add(High, "R13 git branch -D", "git branch -D")
		case len(rest) == 0 || hasArg(rest, "-a", "-r", "-l", "--list", "-v", "-vv", "--show-current", "--contains", "--merged", "--no-merged", "--all", "--remotes"):
			c.add(Safe, "R15 read-only", "git branch listing")
		default:
			c.add(Moderate, "R14 git write", "git branch")
		}
	case "tag":
		if len(rest) == 0 || hasArg(rest, "-l", "--list", "-n", "--contains", "--points-at") {
			c.add(Safe, "R15 read-only", "git tag -l")
		} else {
			c.add(Moderate, "R14 git write", "git tag")
		}
	case "stash":
		switch {
		case len(rest) > 0 && (rs[0] == "list" || rs[0] == "show"):
			c.add(Safe, "R15 read-only", "git stash "+rs[0])
		case len(rest) > 0 && (rs[0] == "drop" || rs[0] == "clear"):
			c.add(High, "R13 git stash drop", "git stash "+rs[0]+" loses work")
		default:
			c.add(Moderate, "R14 git write", "git stash")
		}
	case "remote":
		if len(rest) == 0 || rs[0] == "-v" || rs[0] == "show" || rs[0] == "get-url" || rs[0] == "--verbose" {
			c.add(Safe, "R15 read-only", "git remote -v")
		} else {
			c.add(Moderate, "R14 git write", "git remote")
		}
	case "config":
		c.gitConfig(rest)
	case "reset":
		c.add(Moderate, "R14 git write", "git reset")
		if hasArg(rest, "--hard", "--merge") {
			c.add(Dangerous, "R10 git destroys work", "git reset --hard")
		}
	case "clean":
		c.add(Moderate, "R14 git write", "git clean")
		if hasShortFlag(rest, "f") || hasArg(rest, "--force") {
			if hasShortFlag(rest, "n") || hasArg(rest, "--dry-run") {
				c.add(Safe, "R15 read-only", "git clean -n")
			} else {
				c.add(Dangerous, "R10 git destroys work", "git clean -f")
			}
		}
	case "checkout":
		c.add(Moderate, "R14 git write", "git checkout")
		if hasArg(rest, "--", ".", "-f", "--force", "--theirs", "--ours", "-p", "--patch") || slices.ContainsFunc(rest, func(f field) bool { return f.s == "." || f.s == "*" || f.s == ":/" }) {
			c.add(Dangerous, "R10 git destroys work", "git checkout discards local changes")
		}
	case "restore":
		c.add(Moderate, "R14 git write", "git restore")
		if !hasArg(rest, "--staged", "-S") || hasArg(rest, "--worktree", "-W") {
			c.add(Dangerous, "R10 git destroys work", "git restore discards local changes")
		}
	case "switch":
		c.add(Moderate, "R14 git write", "git switch")
		if hasArg(rest, "--discard-changes", "-f", "--force", "-C") {
			c.add(Dangerous, "R10 git destroys work", "git switch --discard-changes")
		}
	case "push":
		c.add(Moderate, "R11 network", "git push")
		if c.a.secretStaged {
			c.add(Dangerous, "R11 secret exfiltration", "git push sends secret material committed in this line")
		}
		if hasArg(rest, "--dry-run") || hasShortFlag(rest, "n") {
			// Only says what it would push.
			break
		}
		for _, r := range rest {
			if r.s == "--force" || r.s == "-f" || strings.HasPrefix(r.s, "--force-with-lease") || r.s == "--force-if-includes" || r.s == "--mirror" ||
				r.s == "--delete" || r.s == "-d" || r.s == "--prune" || (strings.HasPrefix(r.s, "+") && len(r.s) > 1) || strings.HasPrefix(r.s, ":") && len(r.s) > 1 ||
				(len(r.s) > 1 && r.s[0] == '-' && r.s[1] != '-' && strings.Contains(r.s, "f")) {
				c.add(Dangerous, "R10 git destroys work", "git push "+r.s)
			}
		}
	case "fetch", "pull", "clone", "ls-remote", "submodule":
		c.add(Moderate, "R11 network", "git "+verb)
		if verb == "clone" || verb == "fetch" || verb == "pull" {
			for j, a := range rest {
				if (a.s == "-c" || a.s == "--config") && j+1 < len(rest) {
					k, v, _ := strings.Cut(rest[j+1].s, "=")
					c.gitConfigValue(k, field{s: v, fl: rest[j+1].fl})
				}
				if (a.s == "-u" || a.s == "--upload-pack") && j+1 < len(rest) {
					c.script(rest[j+1].s, rest[j+1].fl, "git --upload-pack")
				}
			}
		}
	case "send-email", "daemon", "instaweb":
		c.add(High, "R11 upload", "git "+verb)
	case "filter-branch", "filter-repo":
		c.add(Moderate, "R14 git write", "git "+verb)
		c.add(Dangerous, "R10 git destroys work", "git "+verb+" rewrites history")
	case "update-ref":
		c.add(Moderate, "R14 git write", "git update-ref")
		if hasArg(rest, "-d") {
			c.add(High, "R13 git branch -D", "git update-ref -d")
		}
	case "gc", "prune":
		c.add(Moderate, "R14 git write", "git "+verb)
		if slices.ContainsFunc(rest, func(f field) bool { return strings.HasPrefix(f.s, "--prune=now") || f.s == "--expire=now" }) || verb == "prune" {
			c.add(High, "R13 git gc", "git "+verb+" drops unreachable objects")
		}
	case "worktree":
		if len(rs) > 0 && rs[0] == "list" {
			c.add(Safe, "R15 read-only", "git worktree list")
		} else {
			c.add(Moderate, "R14 git write", "git worktree")
		}
		if len(rs) > 0 && rs[0] == "remove" && hasArg(rest, "--force", "-f") {
			c.add(Dangerous, "R10 git destroys work", "git worktree remove --force")
		}
	case "rm":
		c.add(Moderate, "R14 git write", "git rm")
		if hasShortFlag(rest, "f") || hasArg(rest, "--force") {
			c.add(High, "R13 delete", "git rm -f")
		}
	case "add", "commit", "merge", "rebase", "cherry-pick", "revert", "mv", "init", "am", "apply", "bisect", "notes", "sparse-checkout",
		"maintenance", "replace", "rerere", "mergetool", "difftool", "citool", "gui", "commit-tree", "read-tree", "write-tree", "hash-object", "update-index", "symbolic-ref":
		c.add(Moderate, "R14 git write", "git "+verb)
	default:
		if slices.Contains(gitSafe, verb) {
			c.add(Safe, "R15 read-only", "git "+verb)
		} else {
			c.add(High, "R20 unknown executable", "git "+verb+" is an alias or an external git command")
		}
	}
	c.runGitHooks(verb)
	if verb == "log" || verb == "show" || verb == "diff" || verb == "grep" {
		for _, a := range rest {
			if strings.HasPrefix(a.s, "--ext-diff") || strings.HasPrefix(a.s, "--textconv") {
				c.add(Moderate, "R14 project code", "git runs configured diff drivers")
			}
		}
	}
}

func (c *call) gitConfig(rest []field) {
	global := hasArg(rest, "--global", "--system")
	system := hasArg(rest, "--system")
	var pos []field
	for i := 0; i < len(rest); i++ {
		s := rest[i].s
		if s == "-f" || s == "--file" || s == "--blob" || s == "--type" || s == "--default" {
			i++
			continue
		}
		if strings.HasPrefix(s, "-") {
			if s == "--get" || s == "--get-all" || s == "--get-regexp" || s == "--list" || s == "-l" || s == "--show-origin" || s == "--name-only" {
				c.add(Safe, "R15 read-only", "git config "+s)
				return
			}
			continue
		}
		pos = append(pos, rest[i])
	}
	if len(pos) > 0 && (pos[0].s == "get" || pos[0].s == "list") {
		c.add(Safe, "R15 read-only", "git config "+pos[0].s)
		return
	}
	if len(pos) > 0 && pos[0].s == "set" {
		pos = pos[1:]
	}
	if len(pos) < 2 {
		c.add(Safe, "R15 read-only", "git config read")
		return
	}
	c.add(Moderate, "R14 git write", "git config")
	c.gitConfigValue(pos[0].s, pos[1])
	if system {
		c.add(High, "R13 system write", "git config --system")
	} else if global {
		c.add(Moderate, "R14 workspace change", "git config --global")
	}
}

// dockerRunOpts take a value (docker run/create/exec).
var dockerRunOpts = []string{"-v", "--volume", "--mount", "-e", "--env", "--env-file", "--name", "-p", "--publish", "-w", "--workdir",
	"-u", "--user", "--entrypoint", "--network", "--net", "-l", "--label", "-h", "--hostname", "--device", "--cap-add", "--cap-drop",
	"--security-opt", "-m", "--memory", "--cpus", "--restart", "--platform", "--pid", "--ipc", "--uts", "--userns", "--add-host", "--dns",
	"--log-driver", "--log-opt", "--tmpfs", "--ulimit", "--gpus", "--shm-size", "--cidfile", "--stop-signal", "--health-cmd", "--pull", "-a", "--attach",
	"--group-add", "--link", "--volumes-from", "--runtime", "--init-path", "--detach-keys", "--expose", "--mac-address", "--ip", "--label-file"}

func hDocker(c *call) {
	args := c.args()
	i := 0
	for ; i < len(args); i++ {
		s := args[i].s
		if s == "-H" || s == "--host" || s == "--context" || s == "-c" || s == "--config" || s == "--log-level" || s == "-l" {
			i++
			continue
		}
		if !strings.HasPrefix(s, "-") {
			break
		}
	}
	if i >= len(args) {
		c.add(Safe, "R15 read-only", c.name)
		return
	}
	verb := args[i].s
	rest := args[i+1:]
	// Management commands: docker container rm → rm.
	if slices.Contains([]string{"container", "image", "volume", "network", "system", "builder", "buildx", "compose", "context", "plugin", "secret", "service", "stack", "node", "swarm", "trust", "manifest"}, verb) && len(rest) > 0 {
		group := verb
		verb = rest[0].s
		rest = rest[1:]
		switch group {
		case "compose":
			c.composeVerb(verb, rest)
			return
		case "volume":
			if verb == "rm" || verb == "prune" || verb == "remove" {
				c.add(Dangerous, "R10 destructive", c.name+" volume "+verb)
				return
			}
		case "system", "image", "network", "builder", "buildx", "container":
			if verb == "prune" {
				c.add(Dangerous, "R10 destructive", c.name+" "+group+" prune")
				return
			}
		}
		if group == "image" && (verb == "ls" || verb == "list" || verb == "inspect" || verb == "history") || group == "system" && (verb == "df" || verb == "info" || verb == "events") ||
			verb == "ls" || verb == "list" || verb == "inspect" {
			c.add(Safe, "R15 read-only", c.name+" "+group+" "+verb)
			return
		}
	}
	switch verb {
	case "ps", "images", "logs", "inspect", "version", "info", "stats", "top", "port", "diff", "history", "events", "search", "ls":
		c.add(Safe, "R15 read-only", c.name+" "+verb)
		if verb == "search" {
			c.add(Moderate, "R11 network", c.name+" search")
		}
	case "kill":
		c.add(Forbidden, "R7 process termination", c.name+" kill")
	case "build", "buildx", "tag", "login", "logout", "save", "load", "import", "commit", "cp":
		c.add(Moderate, "R14 workspace change", c.name+" "+verb)
	case "pull":
		c.add(Moderate, "R11 network", c.name+" pull")
	case "push":
		c.add(High, "R11 upload", c.name+" push")
	case "rm", "rmi":
		if hasShortFlag(rest, "f") || hasArg(rest, "--force") || hasShortFlag(rest, "v") || hasArg(rest, "--volumes") {
			c.add(Dangerous, "R10 destructive", c.name+" "+verb+" -f")
			return
		}
		c.add(High, "R13 container lifecycle", c.name+" "+verb)
	case "prune":
		c.add(Dangerous, "R10 destructive", c.name+" prune")
	case "run", "create", "exec":
		c.containerRun(verb, rest)
	default:
		c.add(High, "R13 container lifecycle", c.name+" "+verb)
	}
}

// containerRun classifies docker run/create/exec: high, and the inner
// command acts on the host when the host root or devices are mounted (R5).
func (c *call) containerRun(verb string, rest []field) {
	c.add(High, "R13 container lifecycle", c.name+" "+verb)
	hostRoot := ""
	hostLike := false
	i := 0
	for ; i < len(rest); i++ {
		s := rest[i].s
		if !strings.HasPrefix(s, "-") {
			break
		}
		name, val, hasEq := strings.Cut(s, "=")
		if !hasEq && slices.Contains(dockerRunOpts, name) && i+1 < len(rest) {
			i++
			val = rest[i].s
		}
		switch name {
		case "-v", "--volume":
			src, dst, _ := strings.Cut(val, ":")
			dst, _, _ = strings.Cut(dst, ":")
			if src == "/" {
				hostRoot = dst
			} else if src == "/dev" || src == "/etc" || src == "/var/run/docker.sock" || src == "/run/docker.sock" {
				hostLike = true
			}
		case "--mount":
			if strings.Contains(val, "source=/,") || strings.Contains(val, "src=/,") || strings.HasSuffix(val, "source=/") {
				hostRoot = "/host"
				for _, kv := range strings.Split(val, ",") {
					if d, ok := strings.CutPrefix(kv, "target="); ok {
						hostRoot = d
					} else if d, ok := strings.CutPrefix(kv, "dst="); ok {
						hostRoot = d
					}
				}
			}
		case "--privileged", "--device", "--pid":
			if name != "--pid" || val == "host" {
				hostLike = true
			}
		case "--entrypoint":
			if val != "" {
				defer c.run([]field{{s: val}})
			}
		}
	}
	if hostRoot != "" || hostLike {
		c.add(High, "R5 container on host", c.name+" "+verb+" can act on the host")
	}
	// docker exec CONTAINER CMD; docker run IMAGE CMD.
	if i+1 >= len(rest) {
		return
	}
	inner := rest[i+1:]
	sc := c.sc.clone()
	switch {
	case hostRoot != "":
		sc.container = false
		mapped := make([]field, len(inner))
		for j, a := range inner {
			mapped[j] = a
			if hostRoot != "/" && (a.s == hostRoot || strings.HasPrefix(a.s, hostRoot+"/")) {
				mapped[j].s = "/" + strings.TrimPrefix(strings.TrimPrefix(a.s, hostRoot), "/")
			}
		}
		inner = mapped
	case hostLike:
	default:
		sc.container = true
	}
	c.a.runArgv(sc, inner, nil, ttyStream(), callOpts{})
}

func hCompose(c *call) {
	verb, idx := firstSub(c.args())
	var rest []field
	if idx >= 0 {
		rest = c.args()[idx+1:]
	}
	c.composeVerb(verb, rest)
}

func (c *call) composeVerb(verb string, rest []field) {
	switch verb {
	case "ps", "logs", "config", "ls", "images", "top", "version", "port", "events":
		c.add(Safe, "R15 read-only", "compose "+verb)
	case "kill":
		c.add(Forbidden, "R7 process termination", "compose kill")
	case "down":
		if hasArg(rest, "-v", "--volumes", "--rmi") {
			c.add(Dangerous, "R10 destructive", "compose down -v deletes volumes")
			return
		}
		c.add(High, "R13 container lifecycle", "compose down")
	case "rm":
		if hasShortFlag(rest, "fv") || hasArg(rest, "--force", "--volumes") {
			c.add(Dangerous, "R10 destructive", "compose rm -f")
			return
		}
		c.add(High, "R13 container lifecycle", "compose rm")
	case "build", "pull":
		c.add(Moderate, "R14 workspace change", "compose "+verb)
	default:
		c.add(High, "R13 container lifecycle", "compose "+verb)
	}
}

func hKubectl(c *call) {
	args := c.args()
	p := getopt(args, "nlocfs", []string{"--namespace", "--selector", "--output", "--context", "--cluster", "--kubeconfig", "--filename", "--server", "--user", "--token", "--container", "-f"}, true)
	verb := p.firstWord()
	var obj string
	if len(p.pos) > 1 {
		obj = p.pos[1].s
	}
	if slices.ContainsFunc(args, func(f field) bool {
		return f.s == "--dry-run" || strings.HasPrefix(f.s, "--dry-run=") && f.s != "--dry-run=none"
	}) {
		c.add(Safe, "R15 read-only", "kubectl "+verb+" --dry-run changes nothing")
		return
	}
	switch verb {
	case "get", "describe", "logs", "top", "version", "explain", "api-resources", "api-versions", "cluster-info", "auth", "diff", "events", "wait", "":
		c.add(Safe, "R15 read-only", "kubectl "+verb)
	case "config":
		if obj == "view" || obj == "get-contexts" || obj == "current-context" || obj == "get-clusters" {
			c.add(Safe, "R15 read-only", "kubectl config "+obj)
			return
		}
		c.add(Moderate, "R14 workspace change", "kubectl config "+obj)
	case "delete":
		kind := strings.ToLower(obj)
		switch {
		case kind == "namespace" || kind == "ns" || kind == "namespaces" || strings.HasPrefix(kind, "namespace/") || strings.HasPrefix(kind, "ns/") || p.has("--all", "-A", "--all-namespaces"):
			c.add(Dangerous, "R10 cluster resources", "kubectl delete "+obj)
		case kind == "pod" || kind == "pods" || kind == "po" || strings.HasPrefix(kind, "pod/") || strings.HasPrefix(kind, "po/"):
			c.add(High, "R13 container lifecycle", "kubectl delete pod")
		default:
			c.add(Dangerous, "R10 cluster resources", "kubectl delete "+obj)
		}
	case "exec", "attach", "debug", "run":
		c.add(High, "R13 container lifecycle", "kubectl "+verb)
		if i := slices.IndexFunc(args, func(f field) bool { return f.s == "--" }); i >= 0 && i+1 < len(args) {
			sc := c.sc.clone()
			sc.container = true
			c.a.runArgv(sc, args[i+1:], nil, ttyStream(), callOpts{})
		}
	case "drain", "cordon", "uncordon", "taint":
		c.add(High, "R13 container lifecycle", "kubectl "+verb)
	default:
		c.add(High, "R13 container lifecycle", "kubectl "+verb)
	}
}

func hHelm(c *call) {
	verb, _ := firstSub(c.args())
	if (verb == "install" || verb == "upgrade") && slices.ContainsFunc(c.args(), func(f field) bool {
		return f.s == "--dry-run" || strings.HasPrefix(f.s, "--dry-run=")
	}) {
		c.add(Safe, "R15 read-only", "helm "+verb+" --dry-run changes nothing")
		return
	}
	switch verb {
	case "list", "ls", "status", "get", "history", "show", "search", "template", "version", "env", "lint", "dependency", "verify", "":
		c.add(Safe, "R15 read-only", "helm "+verb)
	case "uninstall", "delete", "del", "un":
		c.add(Dangerous, "R10 cluster resources", "helm "+verb)
	case "repo":
		c.add(Moderate, "R11 network", "helm repo")
	default:
		c.add(High, "R13 container lifecycle", "helm "+verb)
	}
}

func hTerraform(c *call) {
	verb, idx := firstSub(c.args())
	var rest []field
	if idx >= 0 {
		rest = c.args()[idx+1:]
	}
	switch verb {
	case "destroy":
		c.add(Dangerous, "R10 cloud resources", c.name+" destroy")
	case "apply":
		if hasArg(rest, "-destroy", "--destroy") {
			c.add(Dangerous, "R10 cloud resources", c.name+" apply -destroy")
			return
		}
		c.add(High, "R13 infrastructure change", c.name+" apply")
	case "state":
		if len(rest) > 0 && (rest[0].s == "rm" || rest[0].s == "push" || rest[0].s == "replace-provider") {
			c.add(Dangerous, "R10 cloud resources", c.name+" state "+rest[0].s)
			return
		}
		c.add(Moderate, "R11 network", c.name+" state")
	case "plan", "init", "refresh", "output", "providers", "get", "graph", "show", "console":
		c.add(Moderate, "R11 network", c.name+" "+verb)
	case "validate", "fmt", "version", "":
		c.add(Safe, "R15 read-only", c.name+" "+verb)
	default:
		c.add(High, "R13 infrastructure change", c.name+" "+verb)
	}
}

var rxCloudDelete = regexp.MustCompile(`^(delete|remove|destroy|terminate|rb|rm|purge|deregister|drop)`)

func hCloud(c *call) {
	args := fieldStrings(getopt(c.args(), "", []string{"--profile", "--region", "--project", "--output", "--zone", "--subscription", "--resource-group", "-g"}, true).pos)
	joined := " " + strings.Join(fieldStrings(c.args()), " ") + " "
	destructive, readOnly, upload := false, false, false
	for _, a := range args {
		switch {
		case rxCloudDelete.MatchString(a) || strings.Contains(a, "terminate-") || strings.Contains(a, "delete-"):
			destructive = true
		case strings.HasPrefix(a, "describe") || strings.HasPrefix(a, "list") || strings.HasPrefix(a, "get-") || a == "get" || a == "ls" || a == "show" || a == "whoami" || a == "info" || a == "--version" || a == "version":
			readOnly = true
		case a == "cp" || a == "sync" || a == "mv" || a == "rsync":
			upload = true
		}
	}
	switch {
	case destructive && (strings.Contains(joined, " --recursive ") || strings.Contains(joined, " -r ") || strings.Contains(joined, " --force ") || !strings.Contains(joined, " s3 rm ")):
		c.add(Dangerous, "R10 cloud resources", c.name+" deletes resources")
	case destructive:
		c.add(High, "R13 delete", c.name+" deletes an object")
	case upload:
		c.add(High, "R11 upload", c.name+" copies data")
		if c.secret {
			c.add(Dangerous, "R11 secret exfiltration", c.name+" uploads secret material")
		}
	case readOnly:
		c.add(Moderate, "R11 network", c.name+" query")
	default:
		c.add(High, "R13 infrastructure change", c.name)
	}
}

var rxDestructiveSQL = regexp.MustCompile(`(?i)\b(drop\s+(database|table|schema|user|role|index|collection)|truncate\s+(table\s+)?\w|flushall|flushdb|dropdatabase\s*\(|\.drop\s*\(|delete\s+from\s+\w+\s*;|delete\s+from\s+\w+\s*$)`)

func hDB(c *call) {
	c.readsStdin()
	c.add(Moderate, "R11 network", c.name+" database client")
	texts := []string{c.in.text}
	for _, a := range c.args() {
		texts = append(texts, a.s)
	}
	c.dbShellEscapes()
	for _, t := range texts {
		if m := rxDestructiveSQL.FindString(t); m != "" {
			c.add(Dangerous, "R10 destructive", c.name+" "+strings.ToUpper(strings.Join(strings.Fields(m), " ")))
			return
		}
	}
	if c.name == "redis-cli" {
		for _, a := range c.args() {
			if strings.EqualFold(a.s, "flushall") || strings.EqualFold(a.s, "flushdb") {
				c.add(Dangerous, "R10 destructive", "redis-cli "+strings.ToUpper(a.s))
			}
		}
	}
}

// gitStagesSecret notes git add or commit taking secret material: a secret
// file named, a file this line filled with secrets, or everything (-A, .,
// commit -a) while the workspace holds such a file. A push later in the
// line sends it off the host (R11).
func (c *call) gitStagesSecret(sc *scope, verb string, rest []field) {
	if verb != "add" && verb != "commit" && verb != "stash" {
		return
	}
	for _, a := range rest {
		if a.s == "-A" || a.s == "--all" || a.s == "." || a.s == ":/" || verb == "commit" && (a.s == "-a" || strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "--") && strings.Contains(a.s, "a") && !strings.Contains(a.s, "m")) {
			if c.a.secretInWorkspace() {
				c.a.secretStaged = true
			}
			continue
		}
		if strings.HasPrefix(a.s, "-") {
			continue
		}
		for _, p := range sc.resolvePath(a.s) {
			if isSecretPath(p) || c.a.written[p].flags&fSecret != 0 {
				c.a.secretStaged = true
			}
		}
	}
}
