package risk

import (
	"slices"
	"strings"
)

// registerGitHandlers registers git (risk-policy.md R10, R11, R14, R15).
func registerGitHandlers(reg func(func(*call), ...string)) {
	reg(hGit, "git")
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
	if h, ok := gitVerbs[verb]; ok {
		h(c, gitArgs{sc: sc, verb: verb, rest: rest, rs: rs})
	} else {
		c.add(High, "R20 unknown executable", "git "+verb+" is an alias or an external git command")
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

// gitArgs is one git subcommand being classified: its name, its
// arguments, and the scope git -C chose.
type gitArgs struct {
	sc   *scope
	verb string
	rest []field
	rs   []string
}

// gitVerbs classifies git's subcommands, one entry per name. A name not in
// the table is an alias or an external git-<name> command (R20).
var gitVerbs = map[string]func(*call, gitArgs){
	"branch":           gitVerbBranch,
	"tag":              gitVerbTag,
	"stash":            gitVerbStash,
	"remote":           gitVerbRemote,
	"config":           gitVerbConfig,
	"reset":            gitVerbReset,
	"clean":            gitVerbClean,
	"checkout":         gitVerbCheckout,
	"restore":          gitVerbRestore,
	"switch":           gitVerbSwitch,
	"push":             gitVerbPush,
	"fetch":            gitVerbFetch,
	"pull":             gitVerbFetch,
	"clone":            gitVerbFetch,
	"ls-remote":        gitVerbFetch,
	"submodule":        gitVerbFetch,
	"send-email":       gitVerbSendEmail,
	"daemon":           gitVerbSendEmail,
	"instaweb":         gitVerbSendEmail,
	"filter-branch":    gitVerbFilterBranch,
	"filter-repo":      gitVerbFilterBranch,
	"update-ref":       gitVerbUpdateRef,
	"gc":               gitVerbGc,
	"prune":            gitVerbGc,
	"worktree":         gitVerbWorktree,
	"rm":               gitVerbRm,
	"add":              gitVerbWrite,
	"commit":           gitVerbWrite,
	"merge":            gitVerbWrite,
	"rebase":           gitVerbWrite,
	"cherry-pick":      gitVerbWrite,
	"revert":           gitVerbWrite,
	"mv":               gitVerbWrite,
	"init":             gitVerbWrite,
	"am":               gitVerbWrite,
	"apply":            gitVerbWrite,
	"bisect":           gitVerbWrite,
	"notes":            gitVerbWrite,
	"sparse-checkout":  gitVerbWrite,
	"maintenance":      gitVerbWrite,
	"replace":          gitVerbWrite,
	"rerere":           gitVerbWrite,
	"mergetool":        gitVerbWrite,
	"difftool":         gitVerbWrite,
	"citool":           gitVerbWrite,
	"gui":              gitVerbWrite,
	"commit-tree":      gitVerbWrite,
	"read-tree":        gitVerbWrite,
	"write-tree":       gitVerbWrite,
	"hash-object":      gitVerbWrite,
	"update-index":     gitVerbWrite,
	"symbolic-ref":     gitVerbWrite,
	"status":           gitVerbReadOnly,
	"log":              gitVerbReadOnly,
	"diff":             gitVerbReadOnly,
	"show":             gitVerbReadOnly,
	"blame":            gitVerbReadOnly,
	"shortlog":         gitVerbReadOnly,
	"describe":         gitVerbReadOnly,
	"rev-parse":        gitVerbReadOnly,
	"rev-list":         gitVerbReadOnly,
	"ls-files":         gitVerbReadOnly,
	"ls-tree":          gitVerbReadOnly,
	"cat-file":         gitVerbReadOnly,
	"grep":             gitVerbReadOnly,
	"whatchanged":      gitVerbReadOnly,
	"help":             gitVerbReadOnly,
	"version":          gitVerbReadOnly,
	"check-ignore":     gitVerbReadOnly,
	"check-attr":       gitVerbReadOnly,
	"for-each-ref":     gitVerbReadOnly,
	"name-rev":         gitVerbReadOnly,
	"var":              gitVerbReadOnly,
	"cherry":           gitVerbReadOnly,
	"count-objects":    gitVerbReadOnly,
	"show-ref":         gitVerbReadOnly,
	"merge-base":       gitVerbReadOnly,
	"diff-tree":        gitVerbReadOnly,
	"diff-files":       gitVerbReadOnly,
	"diff-index":       gitVerbReadOnly,
	"range-diff":       gitVerbReadOnly,
	"verify-commit":    gitVerbReadOnly,
	"verify-tag":       gitVerbReadOnly,
	"show-branch":      gitVerbReadOnly,
	"reflog":           gitVerbReadOnly,
	"annotate":         gitVerbReadOnly,
	"fsck":             gitVerbReadOnly,
	"check-ref-format": gitVerbReadOnly,
	"instaweb-status":  gitVerbReadOnly,
	"bugreport":        gitVerbReadOnly,
	"config-list":      gitVerbReadOnly,
	"format-patch":     gitVerbReadOnly,
	"request-pull":     gitVerbReadOnly,
	"archive":          gitVerbReadOnly,
	"bundle":           gitVerbReadOnly,
	"worktree-list":    gitVerbReadOnly,
	"lfs":              gitVerbReadOnly,
	"submodule-status": gitVerbReadOnly,
}

// gitVerbReadOnly: subcommands that only read (R15).
func gitVerbReadOnly(c *call, g gitArgs) {
	c.add(Safe, "R15 read-only", "git "+g.verb)
}

func gitVerbBranch(c *call, g gitArgs) {
	rest := g.rest
	switch {
	case hasArg(rest, "-D") || hasArg(rest, "--delete") && hasArg(rest, "--force", "-f"):
		c.add(High, "R13 git branch -D", "git branch -D")
	case len(rest) == 0 || hasArg(rest, "-a", "-r", "-l", "--list", "-v", "-vv", "--show-current", "--contains", "--merged", "--no-merged", "--all", "--remotes"):
		c.add(Safe, "R15 read-only", "git branch listing")
	default:
		c.add(Moderate, "R14 git write", "git branch")
	}
}

func gitVerbTag(c *call, g gitArgs) {
	rest := g.rest
	if len(rest) == 0 || hasArg(rest, "-l", "--list", "-n", "--contains", "--points-at") {
		c.add(Safe, "R15 read-only", "git tag -l")
	} else {
		c.add(Moderate, "R14 git write", "git tag")
	}
}

func gitVerbStash(c *call, g gitArgs) {
	rest, rs := g.rest, g.rs
	switch {
	case len(rest) > 0 && (rs[0] == "list" || rs[0] == "show"):
		c.add(Safe, "R15 read-only", "git stash "+rs[0])
	case len(rest) > 0 && (rs[0] == "drop" || rs[0] == "clear"):
		c.add(High, "R13 git stash drop", "git stash "+rs[0]+" loses work")
	default:
		c.add(Moderate, "R14 git write", "git stash")
	}
}

func gitVerbRemote(c *call, g gitArgs) {
	rest, rs := g.rest, g.rs
	if len(rest) == 0 || rs[0] == "-v" || rs[0] == "show" || rs[0] == "get-url" || rs[0] == "--verbose" {
		c.add(Safe, "R15 read-only", "git remote -v")
	} else {
		c.add(Moderate, "R14 git write", "git remote")
	}
}

func gitVerbConfig(c *call, g gitArgs) {
	rest := g.rest
	c.gitConfig(rest)
}

func gitVerbReset(c *call, g gitArgs) {
	rest := g.rest
	c.add(Moderate, "R14 git write", "git reset")
	if hasArg(rest, "--hard", "--merge") {
		c.add(Dangerous, "R10 git destroys work", "git reset --hard")
	}
}

func gitVerbClean(c *call, g gitArgs) {
	rest := g.rest
	c.add(Moderate, "R14 git write", "git clean")
	if hasShortFlag(rest, "f") || hasArg(rest, "--force") {
		if hasShortFlag(rest, "n") || hasArg(rest, "--dry-run") {
			c.add(Safe, "R15 read-only", "git clean -n")
		} else {
			c.add(Dangerous, "R10 git destroys work", "git clean -f")
		}
	}
}

func gitVerbCheckout(c *call, g gitArgs) {
	rest := g.rest
	c.add(Moderate, "R14 git write", "git checkout")
	if hasArg(rest, "--", ".", "-f", "--force", "--theirs", "--ours", "-p", "--patch") || slices.ContainsFunc(rest, func(f field) bool { return f.s == "." || f.s == "*" || f.s == ":/" }) {
		c.add(Dangerous, "R10 git destroys work", "git checkout discards local changes")
	}
}

func gitVerbRestore(c *call, g gitArgs) {
	rest := g.rest
	c.add(Moderate, "R14 git write", "git restore")
	if !hasArg(rest, "--staged", "-S") || hasArg(rest, "--worktree", "-W") {
		c.add(Dangerous, "R10 git destroys work", "git restore discards local changes")
	}
}

func gitVerbSwitch(c *call, g gitArgs) {
	rest := g.rest
	c.add(Moderate, "R14 git write", "git switch")
	if hasArg(rest, "--discard-changes", "-f", "--force", "-C") {
		c.add(Dangerous, "R10 git destroys work", "git switch --discard-changes")
	}
}

func gitVerbPush(c *call, g gitArgs) {
	rest := g.rest
	c.add(Moderate, "R11 network", "git push")
	if c.a.secretStaged {
		c.add(Dangerous, "R11 secret exfiltration", "git push sends secret material committed in this line")
	}
	if hasArg(rest, "--dry-run") || hasShortFlag(rest, "n") {
		// Only says what it would push.
		return
	}
	for _, r := range rest {
		if r.s == "--force" || r.s == "-f" || strings.HasPrefix(r.s, "--force-with-lease") || r.s == "--force-if-includes" || r.s == "--mirror" ||
			r.s == "--delete" || r.s == "-d" || r.s == "--prune" || (strings.HasPrefix(r.s, "+") && len(r.s) > 1) || strings.HasPrefix(r.s, ":") && len(r.s) > 1 ||
			(len(r.s) > 1 && r.s[0] == '-' && r.s[1] != '-' && strings.Contains(r.s, "f")) {
			c.add(Dangerous, "R10 git destroys work", "git push "+r.s)
		}
	}
}

func gitVerbFetch(c *call, g gitArgs) {
	verb, rest := g.verb, g.rest
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
}

func gitVerbSendEmail(c *call, g gitArgs) {
	verb := g.verb
	c.add(High, "R11 upload", "git "+verb)
}

func gitVerbFilterBranch(c *call, g gitArgs) {
	verb := g.verb
	c.add(Moderate, "R14 git write", "git "+verb)
	c.add(Dangerous, "R10 git destroys work", "git "+verb+" rewrites history")
}

func gitVerbUpdateRef(c *call, g gitArgs) {
	rest := g.rest
	c.add(Moderate, "R14 git write", "git update-ref")
	if hasArg(rest, "-d") {
		c.add(High, "R13 git branch -D", "git update-ref -d")
	}
}

func gitVerbGc(c *call, g gitArgs) {
	verb, rest := g.verb, g.rest
	c.add(Moderate, "R14 git write", "git "+verb)
	if slices.ContainsFunc(rest, func(f field) bool { return strings.HasPrefix(f.s, "--prune=now") || f.s == "--expire=now" }) || verb == "prune" {
		c.add(High, "R13 git gc", "git "+verb+" drops unreachable objects")
	}
}

func gitVerbWorktree(c *call, g gitArgs) {
	rest, rs := g.rest, g.rs
	if len(rs) > 0 && rs[0] == "list" {
		c.add(Safe, "R15 read-only", "git worktree list")
	} else {
		c.add(Moderate, "R14 git write", "git worktree")
	}
	if len(rs) > 0 && rs[0] == "remove" && hasArg(rest, "--force", "-f") {
		c.add(Dangerous, "R10 git destroys work", "git worktree remove --force")
	}
}

func gitVerbRm(c *call, g gitArgs) {
	rest := g.rest
	c.add(Moderate, "R14 git write", "git rm")
	if hasShortFlag(rest, "f") || hasArg(rest, "--force") {
		c.add(High, "R13 delete", "git rm -f")
	}
}

func gitVerbWrite(c *call, g gitArgs) {
	verb := g.verb
	c.add(Moderate, "R14 git write", "git "+verb)
}
