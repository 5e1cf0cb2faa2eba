package risk

import (
	"path"
	"regexp"
	"strings"
)

type writeMode int

const (
	truncateWrite writeMode = iota // >, cp onto, tee, dd of=
	appendWrite                    // >>, tee -a
	modifyWrite                    // sed -i, editors, chmod
)

var (
	rxNopasswd = regexp.MustCompile(`(?i)NOPASSWD`)
	rxUID0     = regexp.MustCompile(`(?m)^[^:\s]+:[^:]*:0:`)
)

// write classifies writing to target (R8 sysrq, R9b/c, R10, R13, R14) and
// returns the highest level it found. Each reason names the target, so a
// handler adds its own generic reason only when that level is below
// moderate (see call.workspaceChange).
func (a *analyzer) write(sc *scope, target field, mode writeMode, content stream, via string) Level {
	return a.measure(func() {
		if content.flags&fDownload != 0 && !hasMarker(target.s) {
			// `curl … > x.sh; bash x.sh` saves and runs downloaded code (R9e).
			a.markDownloaded(sc, target.s)
		}
		if target.fl&fOwnTree != 0 && a.f.own != nil {
			a.addOwn(Forbidden, ownRule, via+" changes a path found at run time under a directory holding the daemon's files")
			return
		}
		for _, form := range targetForms(target.s) {
			if hasMarker(form) {
				if own, ok := a.ownByTail(sc, form); ok {
					a.addOwn(Forbidden, ownRule, via+" changes "+own)
					continue
				}
				a.add(Moderate, "R14 workspace change", via+" to a path known only at run time")
				continue
			}
			for _, p := range sc.resolvePath(form) {
				a.writePath(sc, p, mode, content, via)
				if form == target.s {
					a.recordWrite(p, mode, content, via)
				}
			}
		}
	})
}

// workspaceChange gives a command that changes files its R14 floor. found
// is the highest level its targets reported (see analyzer.write). A target's
// reason already names what changes ("mkdir to foo"), so the bare command
// name is added only when no target reached moderate: there was none, or
// it was /dev/null.
func (c *call) workspaceChange(found Level, detail string) {
	if found < Moderate {
		c.add(Moderate, "R14 workspace change", detail)
	}
}

func (a *analyzer) writePath(sc *scope, p string, mode writeMode, content stream, via string) {
	if hasMarker(p) {
		a.add(Moderate, "R14 workspace change", via+" relative to an unknown directory")
		return
	}
	if sc.container && !strings.HasPrefix(p, "/dev/") {
		a.add(High, "R13 container", via+" inside a container: "+p)
		return
	}
	if own, ok := a.ownPath(sc, p); ok {
		a.addOwn(Forbidden, ownRule, via+" changes "+own)
		return
	}
	switch classifyDevice(p) {
	case harmlessDevice:
		if strings.HasPrefix(p, "/dev/tcp/") || strings.HasPrefix(p, "/dev/udp/") {
			a.events |= evNetSocket | evDevTCP
			a.add(Moderate, "R11 network", "write to "+p)
			if content.flags&fSecret != 0 {
				a.add(Dangerous, "R11 secret exfiltration", "secret material sent to "+p)
			}
		} else {
			a.add(Safe, "R15 read-only", via+" to "+p)
		}
		return
	case primaryDisk:
		a.add(Forbidden, "R9c primary disk", via+" overwrites "+p)
		return
	case otherDisk:
		a.add(Dangerous, "R10 block device", via+" overwrites "+p)
		return
	case otherDevice:
		a.add(High, "R13 system write", via+" to device "+p)
		return
	}
	if p == "/proc/sysrq-trigger" {
		a.add(Forbidden, "R8 power state", "write to /proc/sysrq-trigger")
		return
	}
	text := content.text
	if isCriticalFile(p) {
		switch {
		case rxNopasswd.MatchString(text) && strings.Contains(p, "sudoers"):
			a.add(Forbidden, "R9g privilege backdoor", "NOPASSWD entry written to "+p)
		case strings.HasSuffix(p, "/passwd") && rxUID0.MatchString(text):
			a.add(Forbidden, "R9g privilege backdoor", "uid-0 account written to "+p)
		case mode == appendWrite && !strings.HasPrefix(p, "/boot"):
			a.add(High, "R13 system write", via+" appends to "+p)
		default:
			a.add(Forbidden, "R9b critical file", via+" clobbers "+p)
		}
		return
	}
	if isCritical(p) && mode == modifyWrite {
		a.add(High, "R13 system write", via+" on "+p)
		return
	}
	if strings.Contains(p, "sudoers") && rxNopasswd.MatchString(text) {
		a.add(Forbidden, "R9g privilege backdoor", "NOPASSWD entry written to "+p)
		return
	}
	if isPersistencePath(p) {
		a.add(High, "R13 persistence", via+" to "+p)
		a.persistedPayload(sc, p, content)
		return
	}
	if strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/sys/") {
		a.add(High, "R13 system write", via+" to kernel setting "+p)
		return
	}
	if isSystemPath(p) {
		a.add(High, "R13 system write", via+" to "+p)
		return
	}
	a.add(Moderate, "R14 workspace change", via+" to "+p)
}

// persistedPayload classifies what a persistence file will run later (R9h):
// the jobs of a crontab, the lines of a shell rc file or script, the Exec
// lines of a systemd unit.
func (a *analyzer) persistedPayload(sc *scope, p string, content stream) {
	if content.text == "" || !content.piped && content.flags == 0 {
		return
	}
	switch {
	case strings.HasPrefix(p, "/etc/cron.hourly/") || strings.HasPrefix(p, "/etc/cron.daily/") ||
		strings.HasPrefix(p, "/etc/cron.weekly/") || strings.HasPrefix(p, "/etc/cron.monthly/"):
		a.script(sc, content.text, content.flags, "R9h cron script")
	case strings.Contains(p, "cron"):
		a.crontabText(sc, content)
	case strings.Contains(p, "systemd/") || strings.Contains(p, "autostart"):
		for _, line := range strings.Split(content.text, "\n") {
			k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
			if ok && (strings.HasPrefix(k, "Exec") || k == "Exec") {
				a.script(sc, strings.TrimLeft(v, "-@:+!"), content.flags, "R9h unit "+k)
			}
		}
	case strings.HasSuffix(p, "authorized_keys") || strings.HasSuffix(p, "authorized_keys2"):
	default:
		a.script(sc, content.text, content.flags, "R9h startup file "+p)
	}
}

// crontabText classifies every job line of a crontab (R9h).
func (a *analyzer) crontabText(sc *scope, content stream) {
	for _, line := range strings.Split(content.text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || hasMarker(line) && onlyMarker(line) {
			continue
		}
		fs := strings.Fields(line)
		n := 5
		if strings.HasPrefix(fs[0], "@") {
			n = 1
		} else if strings.Contains(fs[0], "=") {
			continue
		}
		if len(fs) <= n {
			continue
		}
		// /etc/crontab style lines carry a user name before the command.
		if len(fs) > n+1 && fs[n] == "root" {
			n++
		}
		a.script(sc, strings.Join(fs[n:], " "), content.flags, "R9h cron job")
	}
}

// deleteMode is how a deletion treats its target.
type deleteMode int

const (
	plainDelete     deleteMode = iota // rm, unlink: one file, with prompts and errors (R13)
	forcedDelete                      // rm -f: no prompt, no error (R10)
	recursiveDelete                   // rm -r, shred, find -delete, rsync --delete, rmtree (R9a, R10)
)

// destroy classifies removing target (rm, shred, find -delete, rsync
// --delete) with one reason per target, the rule that decides it, and
// returns the highest level it found.
func (a *analyzer) destroy(sc *scope, target field, mode deleteMode, via string) Level {
	return a.measure(func() {
		if target.fl&fOwnTree != 0 && a.f.own != nil {
			a.addOwn(Forbidden, ownRule, via+" of a path found at run time under a directory holding the daemon's files")
			return
		}
		for _, form := range targetForms(target.s) {
			if hasMarker(form) {
				if own, ok := a.ownByTail(sc, form); ok {
					a.addOwn(Forbidden, ownRule, via+" of "+own)
					continue
				}
				if mode >= forcedDelete {
					a.add(Dangerous, "R10 destructive", via+" of a target known only at run time")
				} else {
					a.add(High, "R13 delete", via+" of a target known only at run time")
				}
				continue
			}
			if form == "" {
				continue
			}
			empty := form != target.s
			for _, p := range sc.resolvePath(form) {
				a.destroyPath(sc, p, mode, via, empty)
			}
		}
	})
}

func (a *analyzer) destroyPath(sc *scope, p string, mode deleteMode, via string, emptyForm bool) {
	rule := "R9a critical path"
	if emptyForm {
		rule = "R17 empty expansion"
	}
	ownErr := ""
	if own, ok := a.ownPath(sc, p); ok {
		ownErr = own
	} else if own, ok := a.holdsOwn(sc, p); ok && mode == recursiveDelete {
		ownErr = p + ", which holds " + own
	}
	switch {
	case hasMarker(p):
		if mode >= forcedDelete {
			a.add(Dangerous, "R10 destructive", via+" relative to an unknown directory")
		} else {
			a.add(High, "R13 delete", via+" relative to an unknown directory")
		}
	case sc.container && mode == forcedDelete:
		// rm -f stays R10 inside a container, the verdict it had when hRm
		// added R10 on top of this R13 reason; only the reasons were merged.
		a.add(Dangerous, "R10 destructive", via+" inside a container: "+p)
	case sc.container:
		a.add(High, "R13 container", via+" inside a container: "+p)
	case classifyDevice(p) == primaryDisk:
		a.add(Forbidden, "R9c primary disk", via+" on "+p)
	case mode == recursiveDelete && isCritical(p):
		a.add(Forbidden, rule, via+" of "+p)
	case ownErr != "":
		a.addOwn(Forbidden, ownRule, via+" of "+ownErr)
	case isCriticalFile(p):
		a.add(Forbidden, "R9b critical file", via+" of "+p)
	case mode >= forcedDelete && !emptyForm && a.insideWorkspace(sc, p):
		a.addContained(Dangerous, "R10 destructive", via+" of "+p)
	case mode >= forcedDelete:
		if emptyForm {
			a.add(Dangerous, "R17 empty expansion", via+" of "+p+" when a variable is empty")
		} else {
			a.add(Dangerous, "R10 destructive", via+" of "+p)
		}
	case isSystemPath(p):
		a.add(High, "R13 delete", via+" of system file "+p)
	case a.insideWorkspace(sc, p):
		a.addContained(High, "R13 delete", via+" of "+p+" cannot be undone")
	default:
		a.add(High, "R13 delete", via+" of "+p+" cannot be undone")
	}
}

// insideWorkspace reports a deletion target that lies inside the workspace
// the command runs in, lexically (R21): not the workspace itself, not its
// .git, not a glob that can reach a dot entry, nothing relative to an
// unknown directory or on another host. Symlinks are not followed; a
// sandboxed command cannot write through one to outside anyway.
func (a *analyzer) insideWorkspace(sc *scope, p string) bool {
	ws := a.f.workspace
	if ws == "" || hasMarker(p) || sc.remote || sc.container {
		return false
	}
	rel := p
	if strings.HasPrefix(p, "/") {
		if ws == "/" {
			return false
		}
		r, ok := strings.CutPrefix(p, ws+"/")
		if !ok {
			return false
		}
		rel = r
	}
	rel = path.Clean(rel)
	first, _, _ := strings.Cut(rel, "/")
	switch {
	case rel == "." || rel == "" || first == ".." || first == ".git":
		return false
	case strings.HasPrefix(first, ".") && strings.ContainsAny(first, "*?["):
		return false
	case strings.HasPrefix(first, "[") || strings.HasPrefix(first, "?"):
		return false // a pattern whose first character may be a dot
	}
	return true
}

// readTarget notes reading a file: secrets and raw disks are R13.
func (a *analyzer) readTarget(sc *scope, target field) fflags {
	var fl fflags
	for _, p := range sc.resolvePath(target.s) {
		own, isOwn := a.ownPath(sc, p)
		switch {
		case isOwn:
			a.addOwn(High, "R13 secret", "reads the daemon's own "+own)
			a.secretReads++
			fl |= fSecret
		case isSecretPath(p):
			a.add(High, "R13 secret", "reads "+p)
			a.secretReads++
			fl |= fSecret
		case a.written[p].flags&fSecret != 0:
			// Staged: secret material this line copied or dumped there (R11).
			a.add(High, "R13 secret", "reads "+p+", which this line filled with secret material")
			a.secretReads++
			fl |= fSecret
		case classifyDevice(p) == primaryDisk || classifyDevice(p) == otherDisk:
			a.add(High, "R13 raw disk read", p)
		case strings.HasPrefix(p, "/dev/tcp/") || strings.HasPrefix(p, "/dev/udp/"):
			a.events |= evNetSocket | evDevTCP
			a.add(Moderate, "R11 network", "reads "+p)
		}
	}
	return fl
}

// baseName is the command name bash would look up for s: the last path
// element, or s itself when it has no slash.
func baseName(s string) string {
	if !strings.Contains(s, "/") {
		return s
	}
	b := path.Base(s)
	if b == "/" || b == "." {
		return s
	}
	return b
}
