package terminal

import "fmt"

// Exit codes with a fixed meaning.
const (
	// ExitSignaled is the code of a process killed by a signal. The wire has
	// no room for the signal, so it travels beside the code (ExitStatus.Signal).
	ExitSignaled = 128
	// ExitCannotStart is the code of a process that could not be started.
	ExitCannotStart = 127
)

// ExitStatus is how a terminal's process ended, normalised once.
type ExitStatus struct {
	// Code is the exit code: the process's own, 128 when a signal killed it,
	// 127 when it never started.
	Code int
	// Signal names the signal that killed the process ("SIGINT"); empty when
	// the process exited on its own.
	Signal string
}

// ExitedWith is a process that exited on its own with code.
func ExitedWith(code int) ExitStatus { return ExitStatus{Code: code} }

// KilledBy is a process that a signal ended; name is like "SIGKILL".
func KilledBy(name string) ExitStatus { return ExitStatus{Code: ExitSignaled, Signal: name} }

// CouldNotStart is a process that never ran.
func CouldNotStart() ExitStatus { return ExitStatus{Code: ExitCannotStart} }

// String reads like "exit 3" or "exit 128 (SIGINT)".
func (e ExitStatus) String() string {
	if e.Signal != "" {
		return fmt.Sprintf("exit %d (%s)", e.Code, e.Signal)
	}
	return fmt.Sprintf("exit %d", e.Code)
}
