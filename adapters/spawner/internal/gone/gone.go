// Package gone says, in the core's terms, that a child can no longer take
// input or signals: every spawner's errors for an exited child (EPIPE on a
// pipe, EIO on a pty, ESRCH or os.ErrProcessDone for a signal, a closed
// input) become errors that also match ports.ErrProcessGone, so that the
// terminal host never reads errno values.
package gone

import (
	"errors"
	"os"
	"syscall"

	"github.com/shellgate/shellgate/ports"
)

// Wrap is err, also matching ports.ErrProcessGone when it says the child
// has exited or its input is closed; any other error, and nil, pass
// unchanged. The message stays the spawner's own.
func Wrap(err error) error {
	if err == nil || errors.Is(err, ports.ErrProcessGone) {
		return err
	}
	for _, target := range []error{syscall.EPIPE, syscall.EIO, syscall.ESRCH, os.ErrProcessDone, os.ErrClosed} {
		if errors.Is(err, target) {
			return &goneError{err}
		}
	}
	return err
}

// Mark is err, also matching ports.ErrProcessGone, for a spawner that
// knows from elsewhere that its child has gone (nil stays nil).
func Mark(err error) error {
	if err == nil || errors.Is(err, ports.ErrProcessGone) {
		return err
	}
	return &goneError{err}
}

// goneError is a spawner's error that is also ports.ErrProcessGone.
type goneError struct{ err error }

// Error is the spawner's own message.
func (e *goneError) Error() string { return e.err.Error() }

// Unwrap lets errors.Is find both the spawner's error and ErrProcessGone.
func (e *goneError) Unwrap() []error { return []error{e.err, ports.ErrProcessGone} }
