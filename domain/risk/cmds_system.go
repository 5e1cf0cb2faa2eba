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
	reg(hDB, "psql", "mysql", "mariadb", "sqlite3", "redis-cli", "mongo", "mongosh", "cqlsh", "clickhouse-client", "sqlcmd", "duckdb")
	reg(levelHandler(Dangerous, "R10 destructive"), "dropdb", "dropuser")
	reg(hVisudo, "visudo")
	reg(hPrintenv, "printenv", "set")
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
	if args := c.args(); c.name == "set" && len(args) > 0 {
		// set -- ARGS and set ARGS (after options) set $1 ….
		for i, a := range args {
			if a.s == "--" || !strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "+") {
				if a.s == "--" {
					i++
				}
				c.sc.params = fieldStrings(args[i:])
				c.a.sensitive = true
				return
			}
			if a.s == "-o" || a.s == "+o" {
				return
			}
		}
		return
	}
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
