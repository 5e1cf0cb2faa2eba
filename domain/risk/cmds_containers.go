package risk

import (
	"slices"
	"strings"
)

// registerContainerHandlers registers container and cluster tools (R10, R13, R15).
func registerContainerHandlers(reg func(func(*call), ...string)) {
	reg(hDocker, "docker", "podman", "nerdctl")
	reg(hCompose, "docker-compose", "podman-compose")
	reg(hKubectl, "kubectl", "oc", "k")
	reg(hHelm, "helm")
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
