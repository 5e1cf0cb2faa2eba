package risk

import (
	"regexp"
	"strings"
)

func registerCloudHandlers(reg func(func(*call), ...string)) {
	reg(hGh, "gh")
	reg(hTerraform, "terraform", "tofu", "terragrunt")
	reg(hCloud, "aws", "gcloud", "az", "gsutil", "doctl")
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
