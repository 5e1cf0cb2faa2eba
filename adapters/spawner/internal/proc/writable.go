package proc

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/adapters/internal/nbio"
)

// TryWriter writes to a non-blocking file in Go's poller without ever
// waiting. Its writes are raw system calls (package nbio) when the file is
// non-blocking.
type TryWriter struct {
	rc     syscall.RawConn
	err    error // why f gave no rc
	mode   nbio.Mode
	closed error
}

// NewTryWriter writes to f.
func NewTryWriter(f *os.File) *TryWriter {
	w := &TryWriter{closed: &os.PathError{Op: "write", Path: f.Name(), Err: os.ErrClosed}}
	if w.rc, w.err = f.SyscallConn(); w.err == nil {
		w.mode, _ = nbio.ModeOf(w.rc) // one it cannot look at keeps the guarded calls
	}
	return w
}

// TryWrite writes as much of b as the file takes now, and never waits: a
// full pipe or pty buffer gives a short count and no error.
func (w *TryWriter) TryWrite(b []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	written := 0
	var writeErr error
	err := w.rc.Write(func(fd uintptr) bool {
		for written < len(b) {
			n, err := w.mode.Write(fd, b[written:])
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil {
				if !errors.Is(err, unix.EAGAIN) {
					writeErr = err
				}
				break
			}
			written += n
		}
		return true // never park: the caller queues what is left
	})
	if err != nil {
		// The raw descriptor fails only once the file is closed (its poller
		// says "use of closed file"); say it as os.File does.
		return written, w.closed
	}
	return written, writeErr
}
