// Package proc is what the pipe and pty spawners share about a child once it
// is started: reaping it the moment it exits, without an OS thread held for
// it while it runs; the exit status, normalised once into a code and a signal
// name; and signals, which go to the child's whole process group.
package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/adapters/spawner/internal/childsig"
	"github.com/shellgate/shellgate/adapters/spawner/internal/gone"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

// Command returns the unstarted command for spec: its argv, working
// directory and complete environment. It also makes sure the signals a
// terminal relies on reach the child with their default action (see
// childsig).
func Command(spec ports.SpawnSpec) *exec.Cmd {
	childsig.Restore()
	cmd := exec.Command(spec.Program, spec.Args...)
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env
	if cmd.Env == nil {
		// A nil Env would hand the child the daemon's own environment.
		cmd.Env = []string{}
	}
	return cmd
}

// Child is a started child, reaped in the background as soon as it exits. It
// provides the methods of ports.Process that do not depend on how the child's
// streams are connected. A nil *Child stands for a child that never started:
// it has no pid and refuses signals.
type Child struct {
	who     string // the spawner, for errors: "pipe" or "pty"
	process *os.Process
	done    chan struct{}
	status  terminal.ExitStatus
}

// Reap takes over cmd, just started by the spawner called who, and reaps
// it when it exits. Every standard stream of cmd must be an *os.File, so
// that os/exec runs no copying goroutines; then the process is all the
// reaping needs, and the exec.Cmd (with its argv and environment) is left
// to the garbage collector while the child runs.
//
// Where the kernel has pidfds, one shared goroutine waits for the exits of
// all children without holding an OS thread (see watchExit). Elsewhere each
// child has a goroutine of its own, blocked in wait(2) on a thread of its
// own until the exit.
func Reap(who string, cmd *exec.Cmd) *Child {
	c := &Child{who: who, process: cmd.Process, done: make(chan struct{})}
	if !watchExit(c) {
		go c.collect()
	}
	return c
}

// collect reaps the child and tells every waiter how it ended. It returns
// at once when the child has exited, and blocks its thread until then
// otherwise.
func (c *Child) collect() {
	// The error only repeats what the missing state says.
	state, _ := c.process.Wait()
	c.status = Status(state)
	close(c.done)
}

// Wait returns the exit status once the child has exited (not necessarily
// after its output has drained). It is safe from any number of goroutines.
func (c *Child) Wait() terminal.ExitStatus {
	<-c.done
	return c.status
}

// Pid is the child's pid, which is also its process group id; 0 if it
// never started.
func (c *Child) Pid() int {
	if c == nil || c.process == nil {
		return 0
	}
	return c.process.Pid
}

// Signal sends sig to the child's process group. Once the group is empty it
// returns an error that wraps os.ErrProcessDone; without a pid it returns
// ports.ErrNoProcess itself.
func (c *Child) Signal(sig syscall.Signal) error {
	pid := c.Pid()
	if pid <= 0 {
		// kill(-0) would signal the daemon's own process group.
		return ports.ErrNoProcess
	}
	err := unix.Kill(-pid, sig)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ESRCH):
		return fmt.Errorf("%s: %s to process group %d: %w", c.who, SignalName(sig), pid, os.ErrProcessDone)
	default:
		return fmt.Errorf("%s: %s to process group %d: %w", c.who, SignalName(sig), pid, err)
	}
}

// Interrupt sends SIGINT to the child's group.
func (c *Child) Interrupt() error { return gone.Wrap(c.Signal(unix.SIGINT)) }

// Terminate sends SIGTERM to the child's group.
func (c *Child) Terminate() error { return gone.Wrap(c.Signal(unix.SIGTERM)) }

// Kill sends SIGKILL to the child's group.
func (c *Child) Kill() error { return gone.Wrap(c.Signal(unix.SIGKILL)) }

// Status normalises how a child ended; a nil state is a child that never
// ran.
func Status(state *os.ProcessState) terminal.ExitStatus {
	if state == nil {
		return terminal.CouldNotStart()
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return terminal.KilledBy(SignalName(ws.Signal()))
	}
	return terminal.ExitedWith(state.ExitCode())
}

// SignalName is the conventional name of sig, such as "SIGINT".
func SignalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	// Real-time signals have no name in x/sys.
	return "SIG" + strconv.Itoa(int(sig))
}
