package risk

import (
	"path"
	"slices"
	"strings"

	"github.com/shellgate/shellgate/domain/shellword"
)

// Config is what the classifier knows about the daemon it guards. The
// daemon's wiring fills it from its own configuration; the classifier reads
// no files to learn it.
type Config struct {
	// OwnPaths are the daemon's own files and directories: its data
	// directory (users file, client credentials, audit log, shell
	// integration), an audit log or config file kept elsewhere, its TLS key.
	// Each covers itself and everything under it. Give absolute paths, and
	// also the symlink-resolved form of any that differs. Reading one, or
	// archiving, copying or searching recursively a directory that holds
	// one, is secret material (R13). Writing, moving, deleting, linking to
	// or changing the mode of one, or removing, moving, linking to or
	// recursively changing the mode of a directory that holds one, is
	// forbidden: R9b, with the daemon's own files added to its list (an
	// agent that can rewrite the users file or the audit log has defeated
	// the gate itself).
	OwnPaths []string
	// Home is the home directory that `~` and `$HOME` stand for in
	// commands; own paths under it are also recognised in that form.
	Home string
	// Workdirs are the absolute directories commands start in (as given,
	// and with symlinks resolved). Relative targets are resolved against
	// them when checking for own paths.
	Workdirs []string
}

// NewWithConfig returns a classifier over exp that also knows the daemon's
// own files (see Config).
func NewWithConfig(exp shellword.Expander, cfg Config) *Classifier {
	c := New(exp)
	c.own = newOwnFiles(cfg)
	return c
}

// ownRule is the reason a change to the daemon's own files gets: R9b's
// critical files, with the daemon's own files added to the list.
const ownRule = "R9b daemon's own file"

// ownFiles is Config prepared for matching.
type ownFiles struct {
	roots    []string // cleaned absolute paths, in their real and ~ forms
	workdirs []string
}

func newOwnFiles(cfg Config) *ownFiles {
	o := &ownFiles{}
	home := ""
	if cfg.Home != "" && strings.HasPrefix(cfg.Home, "/") {
		home = path.Clean(cfg.Home)
	}
	for _, p := range cfg.OwnPaths {
		if !strings.HasPrefix(p, "/") {
			continue
		}
		p = path.Clean(p)
		if p == "/" {
			continue
		}
		o.roots = append(o.roots, p)
		// `~` and $HOME expand to homeDir here, whatever the real home is.
		if home != "" && home != "/" && home != homeDir {
			if rest, ok := strings.CutPrefix(p, home); ok && (rest == "" || rest[0] == '/') {
				o.roots = append(o.roots, homeDir+rest)
			}
		}
	}
	for _, d := range cfg.Workdirs {
		if strings.HasPrefix(d, "/") {
			o.workdirs = append(o.workdirs, path.Clean(d))
		}
	}
	slices.Sort(o.roots)
	o.roots = slices.Compact(o.roots)
	slices.Sort(o.workdirs)
	o.workdirs = slices.Compact(o.workdirs)
	if len(o.roots) == 0 {
		return nil
	}
	return o
}

// absolute gives the absolute forms of a resolved target: itself, or a
// relative one joined to each directory commands may start in.
func (o *ownFiles) absolute(p string) []string {
	if strings.HasPrefix(p, "/") {
		return []string{p}
	}
	out := make([]string, 0, len(o.workdirs))
	for _, d := range o.workdirs {
		out = append(out, path.Join(d, p))
	}
	return out
}

// covers reports an absolute path (or glob) that names an own path or
// something inside one, and which own path that is.
func (o *ownFiles) covers(p string) (string, bool) {
	glob := strings.ContainsAny(p, "*?[")
	for _, r := range o.roots {
		if !glob {
			if p == r || strings.HasPrefix(p, r+"/") {
				return r, true
			}
			continue
		}
		pc, rc := components(p), components(r)
		if len(pc) >= len(rc) && prefixMatches(pc[:len(rc)], rc) {
			return r, true
		}
	}
	return "", false
}

// holds reports an absolute path (or glob) that is a directory above an
// own path: removing it recursively removes the own path too.
func (o *ownFiles) holds(p string) (string, bool) {
	glob := strings.ContainsAny(p, "*?[")
	for _, r := range o.roots {
		if !glob {
			if p == "/" || strings.HasPrefix(r, p+"/") {
				return r, true
			}
			continue
		}
		pc, rc := components(p), components(r)
		if len(pc) < len(rc) && prefixMatches(pc, rc[:len(pc)]) {
			return r, true
		}
	}
	return "", false
}

// is reports an absolute path that is exactly one of the own paths.
func (o *ownFiles) is(p string) (string, bool) {
	if slices.Contains(o.roots, p) {
		return p, true
	}
	return "", false
}

func components(p string) []string {
	return strings.Split(strings.Trim(p, "/"), "/")
}

// prefixMatches matches pattern components against path components, one
// for one.
func prefixMatches(pattern, names []string) bool {
	for i, pat := range pattern {
		if ok, err := path.Match(pat, names[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

// addOwn adds a reason about the daemon's own files.
func (a *analyzer) addOwn(l Level, rule, detail string) {
	a.ownHits++
	a.add(l, rule, detail)
}

// ownCheck applies match to every absolute form of the resolved target p,
// unless commands run on another host or in a container there. It returns
// the absolute form that matched and the own path it matched.
func (a *analyzer) ownCheck(sc *scope, p string, match func(*ownFiles, string) (string, bool)) (abs, own string, ok bool) {
	o := a.f.own
	if o == nil || sc.remote || sc.container || p == "" || hasMarker(p) {
		return "", "", false
	}
	for _, abs := range o.absolute(p) {
		if r, ok := match(o, abs); ok {
			return abs, r, true
		}
	}
	return "", "", false
}

// ownPath reports a resolved target that is, or lies inside, one of the
// daemon's own paths, as an absolute path.
func (a *analyzer) ownPath(sc *scope, p string) (string, bool) {
	abs, _, ok := a.ownCheck(sc, p, (*ownFiles).covers)
	return abs, ok
}

// holdsOwn reports a resolved target that is a directory above one of the
// daemon's own paths, and the own path it holds.
func (a *analyzer) holdsOwn(sc *scope, p string) (string, bool) {
	_, own, ok := a.ownCheck(sc, p, (*ownFiles).holds)
	return own, ok
}

// ownTarget reports a target word (unresolved) that names one of the
// daemon's own paths or lies in one, as an absolute path, or (recursive)
// holds one, with a note saying which.
func (a *analyzer) ownTarget(sc *scope, target string, recursive bool) (string, bool) {
	for _, form := range targetForms(target) {
		for _, r := range sc.resolvePath(form) {
			if p, ok := a.ownPath(sc, r); ok {
				return p, true
			}
			if recursive {
				if own, ok := a.holdsOwn(sc, r); ok {
					return r + ", which holds " + own, true
				}
			}
		}
	}
	return "", false
}

// ownArgument reports an argument of any command that names one of the
// daemon's own paths: a word with a slash (or ~) that lies in one, an
// option's value (--file=…), or a bare name in a directory a cd went to
// (`cd <data dir> && tar c credentials.json`). A bare word resolved against
// the starting directory must be an own path exactly, so that a daemon
// started inside its data directory does not take every word of every
// command for one of its files.
func (a *analyzer) ownArgument(sc *scope, s string) (string, bool) {
	if a.f.own == nil || sc.remote || sc.container {
		return "", false
	}
	if strings.HasPrefix(s, "-") {
		_, v, ok := strings.Cut(s, "=")
		if !ok {
			return "", false
		}
		s = v
	}
	if s == "" {
		return "", false
	}
	if hasMarker(s) {
		return a.ownByTail(sc, s)
	}
	bare := !strings.Contains(s, "/")
	for _, r := range sc.resolvePath(s) {
		match := (*ownFiles).covers
		if bare && !strings.HasPrefix(r, "/") {
			// Still in the directory commands start in, not one a cd chose.
			match = (*ownFiles).is
		}
		if abs, _, ok := a.ownCheck(sc, r, match); ok {
			return abs, true
		}
	}
	return "", false
}

// ownTree reports an argument that is a directory holding one of the
// daemon's own paths, for a command that reads whole trees (see
// readsTrees): `tar c ~/.local` reads the data directory inside it.
func (a *analyzer) ownTree(sc *scope, s string) (string, bool) {
	if a.f.own == nil || sc.remote || sc.container || strings.HasPrefix(s, "-") || s == "" || hasMarker(s) {
		return "", false
	}
	for _, r := range sc.resolvePath(s) {
		if _, own, ok := a.ownCheck(sc, r, (*ownFiles).holds); ok {
			return r + ", which holds the daemon's own " + own, true
		}
	}
	return "", false
}

// readsTrees reports a command that reads the directories it is given
// recursively: archivers and copiers, and searches told to recurse.
func readsTrees(name string, args []field) bool {
	var letters string
	switch name {
	case "7z", "7za", "rg", "ag", "ack", "rclone", "restic", "borg":
		return true
	case "tar", "bsdtar":
		// Creating an archive; tar's first word may lack its dash (czf).
		for i, f := range args {
			if f.s == "--create" || (strings.HasPrefix(f.s, "-") || i == 0) && !strings.HasPrefix(f.s, "--") && strings.Contains(f.s, "c") {
				return true
			}
		}
		return false
	case "zip":
		letters = "r"
	case "rsync":
		letters = "ra"
	case "cp", "scp":
		letters = "rRa"
	case "grep", "egrep", "fgrep", "zgrep":
		letters = "rR"
	default:
		return false
	}
	for _, f := range args {
		switch {
		case f.s == "--recursive" || f.s == "--archive" || f.s == "--dereference-recursive" || f.s == "-d" || f.s == "--directories=recurse":
			return true
		case strings.HasPrefix(f.s, "-") && !strings.HasPrefix(f.s, "--") && strings.ContainsAny(f.s[1:], letters):
			return true
		}
	}
	return false
}

// ownInCode reports a quoted path in interpreter code that names one of
// the daemon's own paths (`open("~/.local/share/shellgate/users.yaml")`).
func (a *analyzer) ownInCode(sc *scope, text string) (string, bool) {
	if a.f.own == nil {
		return "", false
	}
	for _, q := range rxQuotedString.FindAllStringSubmatch(text, -1) {
		s := q[1] + q[2]
		if strings.HasPrefix(s, "~") {
			s = homeDir + s[1:]
		}
		if !looksLikePath(s) {
			continue
		}
		if p, ok := a.ownArgument(sc, s); ok {
			return p, true
		}
	}
	return "", false
}

// tail reports a path whose start is known only at run time and whose
// known rest begins with the last elements of an own path:
// `$XDG_DATA_HOME/shellgate/users.yaml`, `$LOGS/shellgate-audit.log`.
func (o *ownFiles) tail(p string) (string, bool) {
	i := strings.LastIndex(p, string(markClose))
	if i < 0 {
		return "", false
	}
	rest := strings.Trim(p[i+len(string(markClose)):], "/")
	if rest == "" || strings.ContainsRune(rest, markOpen) {
		return "", false
	}
	parts := strings.Split(path.Clean(rest), "/")
	for _, r := range o.roots {
		for j := 1; j <= len(parts); j++ {
			if strings.HasSuffix(r, "/"+strings.Join(parts[:j], "/")) {
				return r, true
			}
		}
	}
	return "", false
}

// ownByTail applies ownFiles.tail to a target known only in part.
func (a *analyzer) ownByTail(sc *scope, p string) (string, bool) {
	if a.f.own == nil || sc.remote || sc.container {
		return "", false
	}
	if r, ok := a.f.own.tail(p); ok {
		return printable(p) + ", which may be " + r, true
	}
	return "", false
}

// finderNames print names of files they find under the directories they
// are given: what they print under a directory holding the daemon's files
// may be one of them (fOwnTree).
var finderNames = map[string]bool{"find": true, "fd": true, "fdfind": true, "ls": true, "tree": true, "locate": true,
	"plocate": true, "mlocate": true, "du": true, "rg": true, "grep": true}

// markOwnTree flags a finder's output when it searches a directory that is
// or holds one of the daemon's own paths (locate searches everything).
func (c *call) markOwnTree() {
	if c.a.f.own == nil || !finderNames[c.name] {
		return
	}
	if c.name == "locate" || c.name == "plocate" || c.name == "mlocate" {
		c.out.flags |= fOwnTree
		return
	}
	for _, f := range c.args() {
		if strings.HasPrefix(f.s, "-") {
			continue
		}
		if _, ok := c.a.ownTarget(c.sc, f.s, true); ok {
			c.out.flags |= fOwnTree
			return
		}
	}
}
