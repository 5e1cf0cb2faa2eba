package contract

import (
	"os"
	"strconv"
	"testing"

	"github.com/shellgate/shellgate/ports"
)

// Shell returns a Harness for a spawner of real processes, expressing every
// behaviour with sh(1) and standard utilities (cat, sleep, printenv, stty).
// pty says whether the spawner runs processes under a pseudoterminal; only
// then does the child see a window size.
func Shell(newSpawner func(t *testing.T) ports.Spawner, pty bool) Harness {
	h := Harness{
		New:  newSpawner,
		PTY:  pty,
		Real: true,
		Print: func(text string) ports.SpawnSpec {
			return ShellSpec(`printf '%s' "$1"`, text)
		},
		Cat: func() ports.SpawnSpec {
			return ports.SpawnSpec{Program: "cat", Env: ShellEnv()}
		},
		Exit: func(code int) ports.SpawnSpec {
			return ShellSpec(`exit "$1"`, strconv.Itoa(code))
		},
		// sleep is in sh's process group and inherits the output; "wait"
		// keeps sh itself alive (and interruptible) until the signal.
		Block: func() ports.SpawnSpec {
			return ShellSpec(`sleep 1000 & echo ready; wait`)
		},
		PrintEnv: func(name string) ports.SpawnSpec {
			return ShellSpec(`printenv "$1"; exit 0`, name)
		},
		Pwd: func() ports.SpawnSpec {
			return ShellSpec(`pwd -P`)
		},
		MissingDir: func() ports.SpawnSpec {
			spec := ShellSpec(`echo must not run`)
			spec.Dir = "/nonexistent/shellgate-contract"
			return spec
		},
		NotFound: func() ports.SpawnSpec {
			return ports.SpawnSpec{Program: "shellgate-contract-no-such-program", Env: ShellEnv()}
		},
		PrintStreams: func(stdout, stderr string) ports.SpawnSpec {
			return ShellSpec(`printf '%s' "$1"; printf '%s' "$2" >&2`, stdout, stderr)
		},
	}
	if pty {
		h.Size = func() ports.SpawnSpec { return ShellSpec(`read line; stty size`) }
	}
	return h
}

// ShellSpec runs script with sh -c; args become $1, $2 and so on.
func ShellSpec(script string, args ...string) ports.SpawnSpec {
	return ports.SpawnSpec{
		Program: "sh",
		Args:    append([]string{"-c", script, "sh"}, args...),
		Env:     ShellEnv(),
	}
}

// ShellEnv is the small, complete environment the shell harness gives its
// children: enough to find programs, and a terminal type for ptys.
func ShellEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C", "TERM=xterm-256color"}
}
