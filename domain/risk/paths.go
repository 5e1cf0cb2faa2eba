package risk

import (
	"path"
	"regexp"
	"strings"
)

// criticalTops are the top-level directories of R9a.
var criticalTops = []string{"/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/opt",
	"/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/usr", "/var"}

// criticalFiles are the files of R9b (plus everything under /boot).
var criticalFiles = []string{"/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow", "/etc/sudoers"}

// resolvePath turns a target into the paths it may name, one per possible
// working directory (R18). Relative results stay relative to the workspace.
func (s *scope) resolvePath(p string) []string {
	if p == "" {
		return nil
	}
	if strings.HasPrefix(p, "/") {
		if m := rxProcLink.FindStringSubmatch(p); m != nil {
			// /proc/<pid>/root is the root every process here shares, and
			// the shell's own /proc/self/cwd is its working directory: what
			// lies beyond them is the path it names (issue 12, point 5).
			switch {
			case m[2] == "root":
				return []string{cleanPath("/" + m[3])}
			case isSelfPid(m[1]):
				return s.resolvePath("./" + strings.TrimLeft(m[3], "/"))
			}
		}
		return []string{cleanPath(p)}
	}
	out := make([]string, 0, len(s.cwd))
	for _, d := range s.cwd {
		switch {
		case s.remote && d == ".":
			out = append(out, cleanPath(homeDir+"/"+p))
		case d == ".":
			out = append(out, cleanPath(p))
		case hasMarker(d):
			out = append(out, d+"/"+p)
		default:
			out = append(out, cleanPath(d+"/"+p))
		}
	}
	return out
}

// rxProcLink matches the /proc links that lead into the file system:
// /proc/<pid>/root/… and /proc/<pid>/cwd/…, however the slashes are spelt.
var rxProcLink = regexp.MustCompile(`^/+proc/+([^/]+)/+(root|cwd)(?:/+(.*))?$`)

// isSelfPid reports a /proc entry that is the shell itself.
func isSelfPid(s string) bool {
	return s == "self" || s == "thread-self" || s == marker("$") || s == marker("BASHPID")
}

// isOtherProc reports a path under another process's /proc directory (a
// pid, a pattern or a value known only at run time in place of one): its
// memory, environment, arguments and open files are secret material (R13).
func isOtherProc(p string) bool {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return false
	}
	pid, after, ok := strings.Cut(rest, "/")
	if !ok || after == "" || isSelfPid(pid) {
		return false
	}
	return isDigits(pid) || strings.ContainsAny(pid, "*?[") || hasMarker(pid)
}

// cleanPath normalises lexically: //, /./ and /usr/.. (R18). A trailing
// slash does not change what a delete hits, so dropping it is fine.
func cleanPath(p string) string {
	return path.Clean(p)
}

// targetForms gives the forms of a destructive target that R17 evaluates:
// the value itself and, when it holds an unknown part, its empty form.
func targetForms(s string) []string {
	if !hasMarker(s) {
		return []string{s}
	}
	return []string{s, stripMarkers(s)}
}

// isCritical reports a path that R9a protects: /, the top-level system
// directories, home directories, each with /*, and ancestors of the workspace.
func isCritical(p string) bool {
	if p == "" || hasMarker(p) {
		return false
	}
	if !strings.HasPrefix(p, "/") {
		// Relative to the workspace: an ancestor of it may be the home
		// directory or /.
		rest := strings.TrimSuffix(p, "/*")
		rest = strings.TrimSuffix(rest, "/.*")
		if rest == "" {
			return false
		}
		for _, part := range strings.Split(rest, "/") {
			if part != ".." {
				return false
			}
		}
		return true
	}
	if strings.ContainsAny(p, "*?[") {
		return globHitsCritical(p)
	}
	if p == "/" {
		return true
	}
	for _, top := range criticalTops {
		if p == top {
			return true
		}
	}
	// /home/<name> and its contents (~, ~/*).
	if strings.HasPrefix(p, "/home/") {
		rest := strings.TrimPrefix(p, "/home/")
		return !strings.Contains(rest, "/")
	}
	return false
}

// globHitsCritical reports a pattern that could match a critical path, e.g.
// /*, /e*, /???, /home/*/* and ~/* (which expands to /home/user/*).
func globHitsCritical(p string) bool {
	cands := append([]string{"/"}, criticalTops...)
	cands = append(cands, homeDir, "/home/x", homeDir+"/x")
	for _, c := range cands {
		if ok, _ := path.Match(p, c); ok {
			return true
		}
	}
	// A pattern such as /*/* or /home/*/*: anything directly inside a
	// critical directory is critical only for homes; /usr/* etc. are listed.
	dir := path.Dir(p)
	base := path.Base(p)
	if strings.ContainsAny(base, "*?[") && !strings.ContainsAny(dir, "*?[") {
		return isCritical(dir) && (dir == "/" || isTopOrHome(dir))
	}
	if strings.ContainsAny(dir, "*?[") && globHitsCritical(dir) && strings.ContainsAny(base, "*?[") {
		return true
	}
	return false
}

func isTopOrHome(d string) bool {
	for _, top := range criticalTops {
		if d == top {
			return true
		}
	}
	return strings.HasPrefix(d, "/home/") && !strings.Contains(strings.TrimPrefix(d, "/home/"), "/")
}

// isCriticalFile reports R9b files: account databases, sudoers and /boot.
func isCriticalFile(p string) bool {
	if hasMarker(p) {
		return false
	}
	for _, f := range criticalFiles {
		if p == f {
			return true
		}
		if strings.ContainsAny(p, "*?[") {
			if ok, _ := path.Match(p, f); ok {
				return true
			}
		}
	}
	return strings.HasPrefix(p, "/etc/sudoers.d/") || p == "/boot" || strings.HasPrefix(p, "/boot/")
}

type deviceKind int

const (
	notDevice deviceKind = iota
	primaryDisk
	otherDisk
	harmlessDevice
	otherDevice
)

var primaryDisks = []string{"sda", "vda", "xvda", "hda", "nvme0n1", "mmcblk0", "disk0"}

// classifyDevice sorts /dev paths into the primary disk (R9c), other block
// devices (R10) and character devices that are harmless to write.
func classifyDevice(p string) deviceKind {
	if !strings.HasPrefix(p, "/dev/") {
		return notDevice
	}
	name := strings.TrimPrefix(p, "/dev/")
	switch {
	case name == "null" || name == "zero" || name == "stdout" || name == "stderr" || name == "stdin" ||
		name == "tty" || strings.HasPrefix(name, "fd/") || strings.HasPrefix(name, "pts/") || strings.HasPrefix(name, "shm/") ||
		strings.HasPrefix(name, "tcp/") || strings.HasPrefix(name, "udp/") || name == "full" || name == "random" || name == "urandom":
		return harmlessDevice
	case strings.HasPrefix(name, "disk/by-") || strings.HasPrefix(name, "root"):
		// A stable alias may well be the primary disk; nothing tells otherwise.
		return primaryDisk
	}
	for _, d := range primaryDisks {
		if name == d || (strings.HasPrefix(name, d) && isPartitionSuffix(d, strings.TrimPrefix(name, d))) {
			return primaryDisk
		}
	}
	for _, pre := range []string{"sd", "vd", "xvd", "hd", "nvme", "mmcblk", "loop", "md", "dm-", "mapper/", "disk", "mtdblock", "sr", "nbd", "zd", "rbd"} {
		if strings.HasPrefix(name, pre) {
			return otherDisk
		}
	}
	return otherDevice
}

func isPartitionSuffix(disk, suf string) bool {
	if suf == "" {
		return true
	}
	switch {
	case strings.HasPrefix(disk, "nvme") || strings.HasPrefix(disk, "mmcblk"):
		suf = strings.TrimPrefix(suf, "p")
	case disk == "disk0":
		suf = strings.TrimPrefix(suf, "s")
	}
	if suf == "" {
		return false
	}
	for _, r := range suf {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// isTempOrHome reports paths that R13 does not count as system paths.
func isTempOrHome(p string) bool {
	for _, pre := range []string{"/tmp", "/var/tmp", "/dev/shm", homeDir} {
		if p == pre || strings.HasPrefix(p, pre+"/") {
			return true
		}
	}
	return false
}

// isSystemPath reports absolute paths outside the workspace, home and /tmp.
func isSystemPath(p string) bool {
	if !strings.HasPrefix(p, "/") || hasMarker(p) {
		return false
	}
	return !isTempOrHome(p)
}

// isPersistencePath reports files that make something run later (R13).
func isPersistencePath(p string) bool {
	base := path.Base(p)
	switch base {
	case ".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zprofile", ".zshenv", ".zlogin",
		".kshrc", ".cshrc", ".tcshrc", "config.fish", "authorized_keys", "authorized_keys2", ".xinitrc", ".xprofile", "rc.local", ".bash_logout":
		return true
	}
	for _, pre := range []string{homeDir + "/.config/systemd/", homeDir + "/.config/autostart", "/etc/cron", "/var/spool/cron",
		"/etc/systemd/", "/lib/systemd/", "/usr/lib/systemd/", "/etc/init.d/", "/etc/profile", "/etc/bash.bashrc", "/etc/ld.so.preload",
		homeDir + "/.ssh/rc", "/etc/rc", "/etc/xdg/autostart", "/etc/update-motd.d", homeDir + "/.git/hooks", homeDir + "/.local/share/systemd"} {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	return strings.Contains(p, "/.git/hooks/")
}

// isSecretPath reports files whose content is secret material (R11, R13).
func isSecretPath(p string) bool {
	if isOtherProc(p) {
		return true
	}
	if hasMarker(p) {
		return false
	}
	base := path.Base(p)
	switch {
	case base == ".ssh" || base == ".aws" || base == ".gnupg" || base == ".password-store" || base == ".kube" || base == ".docker" && strings.HasPrefix(p, homeDir):
		return true
	case strings.HasPrefix(base, "id_") && !strings.HasSuffix(base, ".pub") && strings.Contains(p, ".ssh"):
		return true
	case base == ".env" || strings.HasPrefix(base, ".env.") && base != ".env.example" && base != ".env.sample" && base != ".env.template":
		return true
	case p == "/etc/shadow" || p == "/etc/gshadow" || p == "/etc/sudoers" || strings.HasPrefix(p, "/etc/ssh/ssh_host_") && !strings.HasSuffix(p, ".pub"):
		return true
	case strings.HasSuffix(p, "/.aws/credentials") || strings.HasSuffix(p, "/.aws/config") || strings.HasSuffix(p, "/.netrc") ||
		strings.HasSuffix(p, "/.git-credentials") || strings.HasSuffix(p, "/.pgpass") || strings.HasSuffix(p, "/.docker/config.json") ||
		strings.HasSuffix(p, "/.kube/config") || strings.HasSuffix(p, "/.npmrc") || strings.HasSuffix(p, "/.pypirc") ||
		strings.Contains(p, "/.gnupg/private-keys") || strings.Contains(p, "/.config/gcloud/") || strings.HasSuffix(p, "/.vault-token") ||
		strings.Contains(p, "/.azure/"):
		return true
	case strings.HasPrefix(p, "/proc/") && strings.HasSuffix(p, "/environ"):
		return true
	case strings.HasSuffix(base, ".pem") || strings.HasSuffix(base, ".key") || strings.HasSuffix(base, ".p12") || strings.HasSuffix(base, ".pfx"):
		return !strings.HasSuffix(base, ".pub.pem")
	case strings.HasPrefix(p, homeDir+"/.ssh/") && base != "known_hosts" && base != "config" && !strings.HasSuffix(base, ".pub"):
		return true
	}
	return false
}

// looksLikePath reports an argument that names a file rather than a value.
func looksLikePath(s string) bool {
	return strings.HasPrefix(s, "/") || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") ||
		strings.HasPrefix(s, "~") || strings.Contains(s, "/")
}
