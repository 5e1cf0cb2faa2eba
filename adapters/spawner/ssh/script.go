package ssh

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/shellgate/shellgate/ports"
)

// An SSH server runs an `exec` request's command with the remote user's
// login shell (`$SHELL -c COMMAND`) in an environment of its own making; it
// has no working directory, argv or environment of the client's. So the
// command sent is a small POSIX sh script that puts those in place, checks
// that the program exists, reports the shell's pid (which the program then
// inherits through exec) on one line marked with a nonce, and execs the
// program. The spawner reads that line before it hands the process out, so
// a missing directory or program is a failed Spawn, as it is locally.

// envName is a variable name a POSIX shell can export.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// startScript is the command line sent for spec. marker starts the one
// line the script reports on: "<marker> ok <pid>" or "<marker> error <why>".
func startScript(spec ports.SpawnSpec, marker string) (string, error) {
	var b strings.Builder
	fail := func(why string) string {
		return fmt.Sprintf("{ printf '%%s error %%s\\n' %s %s; exit 127; }", quote(marker), quote(why))
	}
	if len(spec.Files) > 0 {
		// A directory only this user can read, for the files (the shell
		// integration's scripts, which remove it once read).
		fmt.Fprintf(&b, "umask 077; d=$(mktemp -d \"${TMPDIR:-/tmp}/shellgate.XXXXXXXX\") || %s\n", fail("no private directory could be made in ${TMPDIR:-/tmp}"))
		for _, name := range slices.Sorted(maps.Keys(spec.Files)) {
			if name == "" || path.IsAbs(name) || strings.Contains(path.Clean(name), "..") {
				return "", fmt.Errorf("file %q is not a relative path inside the spawn's directory", name)
			}
			if dir := path.Dir(name); dir != "." {
				fmt.Fprintf(&b, "mkdir -p \"$d\"/%s\n", quote(dir))
			}
			fmt.Fprintf(&b, "printf '%%s' %s >\"$d\"/%s || %s\n", quote(spec.Files[name]), quote(name), fail("could not write "+name))
		}
	}
	if spec.Dir != "" {
		fmt.Fprintf(&b, "cd -- %s 2>/dev/null || %s\n", quote(spec.Dir), fail("no directory "+spec.Dir+" there (or it is not searchable)"))
	}
	for _, kv := range spec.Env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || !envName.MatchString(name) {
			return "", fmt.Errorf("environment entry %q cannot be set by a remote shell; use NAME=value with a name of letters, digits and _", kv)
		}
		fmt.Fprintf(&b, "export %s\n", word(kv))
	}
	program := quote(spec.Program)
	if spec.Program == "" {
		// No program: the remote user's own shell, as ssh(1) would start.
		program = `"${SHELL:-/bin/sh}"`
	}
	fmt.Fprintf(&b, "command -v -- %s >/dev/null 2>&1 || %s\n", program, fail("no program "+spec.Program+" there (not found on the remote PATH)"))
	if !spec.PTY && !spec.SeparateStderr {
		// One stream, merged where it is written, as on a local pipe.
		b.WriteString("exec 2>&1\n")
	}
	fmt.Fprintf(&b, "printf '%%s ok %%d\\n' %s \"$$\"\n", quote(marker))
	b.WriteString("exec " + program)
	for _, a := range spec.Args {
		b.WriteString(" " + word(a))
	}
	b.WriteString("\n")
	return b.String(), nil
}

// word is quote, with ports.FilesDir standing for the files' directory.
func word(s string) string {
	parts := strings.Split(s, ports.FilesDir)
	for i, p := range parts {
		parts[i] = quote(p)
	}
	return strings.Join(parts, `"$d"`)
}

// quote makes s one word for a POSIX shell.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
