// Package shellinit installs shellgate's shell integration into an
// interactive bash or zsh: small startup scripts, embedded here, that make
// the shell print the marks domain/shellmarks reads (OSC 133 boundaries,
// OSC 633;E command lines, OSC 7 directories) while the user's own startup
// files still run as they would without it.
//
// bash is started with --rcfile pointing at shellgate's script, which reads
// ~/.bashrc (or, for a login shell, the profiles) first. zsh is started with
// ZDOTDIR pointing at shellgate's directory, whose files read the user's
// from their own ZDOTDIR (or HOME) and hand ZDOTDIR back before the prompt.
package shellinit

import (
	"bytes"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/shellgate/shellgate/ports"
)

// NonceEnv is the environment variable a caller may set to a random value
// for the shell's 633;E command lines to carry; the scripts take it out of
// the environment so programs run from the shell never see it. Give the
// same value to shellmarks.NewTracker.
const NonceEnv = "SHELLGATE_NONCE"

// Environment variables the scripts read once and unset.
const (
	bashStartupEnv = "SHELLGATE_BASH_STARTUP"
	userZdotdirEnv = "SHELLGATE_USER_ZDOTDIR"
)

//go:embed scripts/bash.sh scripts/zshenv.zsh scripts/zprofile.zsh scripts/zshrc.zsh
var scripts embed.FS

// installed maps each embedded script to where it is written under dir.
var installed = []struct{ src, dst string }{
	{"scripts/bash.sh", "bash/shellgate.bash"},
	{"scripts/zshenv.zsh", "zsh/.zshenv"},
	{"scripts/zprofile.zsh", "zsh/.zprofile"},
	{"scripts/zshrc.zsh", "zsh/.zshrc"},
}

// Prepare rewrites the spawn of program with args and env so the shell
// reports command boundaries, writing the scripts into dir (created 0700 if
// missing) when they are not there yet. It applies to an interactive bash or
// zsh, recognised by program's base name, whose arguments it understands;
// for anything else — another shell, a -c command, a script, the user's own
// --rcfile or --norc — ok is false and args and env come back unchanged.
// env is never modified in place.
func Prepare(dir, program string, args, env []string) (newArgs, newEnv []string, ok bool, err error) {
	rewrite := rewriterFor(program)
	if rewrite == nil {
		return args, env, false, nil
	}
	a, e, ok := rewrite(dir, args, env)
	if !ok {
		return args, env, false, nil
	}
	if err := install(dir); err != nil {
		return args, env, false, err
	}
	return a, e, true, nil
}

// rewriterFor is the argument rewrite for an interactive shell named by
// program's base name, or nil for a shell this package has no scripts for.
func rewriterFor(program string) func(dir string, args, env []string) ([]string, []string, bool) {
	switch filepath.Base(program) {
	case "bash":
		return rewriteBash
	case "zsh":
		return rewriteZsh
	}
	return nil
}

// PrepareRemote is Prepare for a shell on another machine: the scripts
// come back as files (ports.SpawnSpec.Files) and the rewritten arguments
// and environment name their directory as ports.FilesDir. The bash script
// and zsh's .zshrc, the last of each shell's startup files shellgate
// provides, first remove that directory, so nothing is left on the host.
func PrepareRemote(program string, args, env []string) (newArgs, newEnv []string, files map[string]string, ok bool) {
	rewrite := rewriterFor(program)
	if rewrite == nil {
		return args, env, nil, false
	}
	a, e, ok := rewrite(ports.FilesDir, args, env)
	if !ok {
		return args, env, nil, false
	}
	files = map[string]string{}
	for _, f := range installed {
		body, err := scripts.ReadFile(f.src)
		if err != nil {
			return args, env, nil, false
		}
		switch f.dst {
		case "bash/shellgate.bash":
			// bash has read the whole file before it runs a line of it.
			body = append([]byte("command rm -rf -- \"${BASH_SOURCE[0]%/bash/shellgate.bash}\"\n"), body...)
		case "zsh/.zshrc":
			// zsh reads on from the open file; the directory is done with.
			body = append([]byte("command rm -rf -- \"${__shellgate_dir%/zsh}\"\n"), body...)
		}
		files[f.dst] = string(body)
	}
	return a, e, files, true
}

// install writes the scripts under dir unless they are already there as
// embedded. Each is written to a temporary file and renamed, so a shell
// starting meanwhile reads the old script or the new one, never half.
func install(dir string) error {
	for _, sub := range []string{"", "bash", "zsh"} {
		d := filepath.Join(dir, sub)
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("shell integration directory: %w", err)
		}
		info, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("shell integration directory: %w", err)
		}
		// Every shell runs these scripts: a directory others may write to
		// would let them run code in every terminal.
		if info.Mode().Perm()&0o022 != 0 {
			return fmt.Errorf("shell integration directory %s is writable by group or others (mode %v); make it 0700", d, info.Mode().Perm())
		}
	}
	for _, f := range installed {
		want, err := scripts.ReadFile(f.src)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, f.dst)
		if have, err := os.ReadFile(dst); err == nil && bytes.Equal(have, want) {
			continue
		}
		if err := writeAtomic(dst, want); err != nil {
			return fmt.Errorf("write shell integration script: %w", err)
		}
	}
	return nil
}

func writeAtomic(dst string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// rewriteBash puts --rcfile first (bash wants long options before short
// ones) and drops a login flag, since a login shell ignores --rcfile; the
// script reads the profiles instead.
func rewriteBash(dir string, args, env []string) ([]string, []string, bool) {
	out := []string{"--rcfile", filepath.Join(dir, "bash", "shellgate.bash")}
	login, noProfile := false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--login":
			login = true
		case a == "--noprofile":
			noProfile = true
			out = append(out, a)
		case a == "--noediting" || a == "--verbose":
			out = append(out, a)
		case a == "--" || a == "-":
			if i+1 < len(args) {
				return nil, nil, false // a script follows
			}
		case strings.HasPrefix(a, "--"):
			// --norc, --rcfile, --init-file, --posix, --restricted, -c's
			// friends and anything unknown: the caller's choice, left alone.
			return nil, nil, false
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			kept, takesArg, isLogin, ok := shortBashOptions(a)
			if !ok {
				return nil, nil, false
			}
			login = login || isLogin
			if kept != "" {
				out = append(out, kept)
			}
			if takesArg {
				if i+1 >= len(args) {
					return nil, nil, false
				}
				i++
				out = append(out, args[i])
			}
		default:
			return nil, nil, false // a script file: not interactive
		}
	}
	startup := "rc"
	switch {
	case login && noProfile:
		startup = "none"
	case login:
		startup = "login"
	}
	return out, setEnv(env, map[string]*string{bashStartupEnv: &startup}), true
}

// shortBashOptions reads one cluster such as -il or +o: it returns the
// cluster without l, whether its last letter (o or O) takes the next
// argument, whether it asked for a login shell, and false for the options
// that make bash non-interactive or restricted (c, s, r, D).
func shortBashOptions(a string) (kept string, takesArg, login, ok bool) {
	letters := make([]byte, 0, len(a))
	for i := 1; i < len(a); i++ {
		switch c := a[i]; c {
		case 'c', 's', 'r', 'D':
			return "", false, false, false
		case 'l':
			if a[0] == '-' {
				login = true
				continue
			}
			letters = append(letters, c)
		case 'o', 'O':
			if i != len(a)-1 {
				return "", false, false, false
			}
			takesArg = true
			letters = append(letters, c)
		default:
			letters = append(letters, c)
		}
	}
	if len(letters) == 0 {
		return "", takesArg, login, true
	}
	return string(a[0]) + string(letters), takesArg, login, true
}

// rewriteZsh leaves the arguments as they are — zsh reads its startup
// files from ZDOTDIR, login shell or not — and points ZDOTDIR at ours,
// remembering the user's.
func rewriteZsh(dir string, args, env []string) ([]string, []string, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--login" || a == "--interactive":
		case a == "--" || a == "-":
			if i+1 < len(args) {
				return nil, nil, false
			}
		case strings.HasPrefix(a, "--"):
			// --no-rcs, --no-globalrcs and the rest: left to the caller.
			return nil, nil, false
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 'c', 's', 'f', 'b':
					// -f is --no-rcs; -b ends the options.
					return nil, nil, false
				case 'o':
					if j != len(a)-1 || i+1 >= len(args) {
						return nil, nil, false
					}
					i++
				}
			}
		default:
			return nil, nil, false // a script file
		}
	}
	ours := filepath.Join(dir, "zsh")
	var user *string
	if v, ok := lookupEnv(env, "ZDOTDIR"); ok {
		user = &v
	}
	return slices.Clone(args), setEnv(env, map[string]*string{"ZDOTDIR": &ours, userZdotdirEnv: user}), true
}

// setEnv returns a copy of env with each key set to its value, or removed
// when the value is nil.
func setEnv(env []string, vars map[string]*string) []string {
	out := make([]string, 0, len(env)+len(vars))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, replaced := vars[k]; !replaced {
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	slices.Sort(keys) // a stable order, for tests and for people reading ps
	for _, k := range keys {
		if v := vars[k]; v != nil {
			out = append(out, k+"="+*v)
		}
	}
	return out
}

// lookupEnv finds key in env; the last entry wins, as for exec.
func lookupEnv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}
