package risk

import "strings"

func registerCloudHandlers(reg func(func(*call), ...string)) {
	reg(hGh, "gh")
}

// ghReads are gh verbs that only ask: read-only queries, like kubectl get.
var ghReads = map[string]bool{"view": true, "list": true, "ls": true, "status": true, "diff": true, "checks": true, "watch": true,
	"search": true, "--version": true, "version": true, "help": true, "": true}

// ghFetches copy from the remote into the workspace (network, R11).
var ghFetches = map[string]bool{"clone": true, "checkout": true, "download": true, "browse": true, "sync": false}

// hGh: the GitHub CLI. Queries are read-only (R15); fetching is network
// (R11); anything that acts on the remote with the user's credentials is
// high (R11); deleting remote resources is dangerous (R10).
func hGh(c *call) {
	var words []string
	for _, a := range c.args() {
		if strings.HasPrefix(a.s, "-") {
			continue
		}
		words = append(words, a.s)
		if len(words) == 2 {
			break
		}
	}
	group, verb := "", ""
	if len(words) > 0 {
		group = words[0]
	}
	if len(words) > 1 {
		verb = words[1]
	}
	switch {
	case group == "auth" && verb == "token":
		c.add(High, "R13 secret", "gh auth token prints a credential")
	case group == "auth" && verb == "status", group == "search", group == "status", group == "help", group == "":
		c.add(Safe, "R15 read-only", "gh "+group)
	case group == "api":
		if hasArg(c.args(), "-X", "--method", "-f", "-F", "--field", "--raw-field", "--input") {
			c.add(High, "R11 upload", "gh api sends data to the remote")
			return
		}
		c.add(Safe, "R15 read-only", "gh api query")
	case verb == "delete" || verb == "archive":
		c.add(Dangerous, "R10 remote resources", "gh "+group+" "+verb)
	case group == "extension" && (verb == "install" || verb == "upgrade"):
		c.add(High, "R13 package manager", "gh extension "+verb)
	case group == "codespace" && verb == "ssh":
		c.add(High, "R11 remote session", "gh codespace ssh")
	case ghReads[verb]:
		c.add(Safe, "R15 read-only", "gh "+group+" "+verb)
	case ghFetches[verb]:
		c.add(Moderate, "R11 network", "gh "+group+" "+verb)
	default:
		c.add(High, "R11 upload", "gh "+group+" "+verb+" acts on the remote with the user's credentials")
	}
}
