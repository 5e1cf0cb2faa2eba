package risk

import (
	"slices"
	"strings"
)

// registerPackageHandlers registers package managers and build tools (R13, R14).
func registerPackageHandlers(reg func(func(*call), ...string)) {
	reg(hPkgManager, "apt", "apt-get", "aptitude", "dnf", "yum", "microdnf", "zypper", "pacman", "yay", "paru", "apk", "dpkg", "rpm",
		"snap", "flatpak", "brew", "port", "nix-env", "emerge", "pkg", "xbps-install")
	reg(hPip, "pip", "pip3", "pip2", "pipx", "uv")
	reg(hNpm, "npm", "yarn", "pnpm", "bun")
	reg(hGo, "go")
	reg(hCargo, "cargo")
	reg(hGem, "gem")
	reg(hMake, "make", "gmake", "ninja")
	reg(levelHandler(High, "R20 unknown executable"), "npx", "pnpx", "bunx", "uvx")
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
	if p.has("-n", "--dry-run", "--just-print", "-q", "--question", "-p", "--print-data-base") {
		c.add(Safe, "R15 read-only", c.name+" dry run")
		return
	}
	install := false
	for _, t := range p.pos {
		if t.s == "install" || t.s == "uninstall" || strings.HasPrefix(t.s, "install-") {
			c.add(High, "R13 package manager", c.name+" "+t.s)
			install = true
		}
		if k, v, ok := strings.Cut(t.s, "="); ok && (k == "SHELL" || k == ".SHELLFLAGS") {
			c.script(v, t.fl, c.name+" "+k)
		}
	}
	if !install {
		c.add(Moderate, "R14 project code", c.name)
	}
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
