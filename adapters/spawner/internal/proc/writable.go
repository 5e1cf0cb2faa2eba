package proc

import (
	"os"
	"sync"
	"syscall"

	"github.com/shellgate/shellgate/adapters/internal/nbio"
)

// TryWriter writes to a non-blocking file in Go's poller without ever
// waiting. Its writes are raw system calls (package nbio) when the file is
// non-blocking.
type TryWriter struct {
	rc   syscall.RawConn
	err  error // why f gave no rc
	mode nbio.Mode
	name string // f's, for the error once it is closed

	writeFd func(fd uintptr) bool // w.write, made once

	// mu keeps the write under way, so that a write allocates nothing; the
	// descriptor takes one write at a time anyway.
	mu       sync.Mutex
	b        []byte
	written  int
	writeErr error
}

// NewTryWriter writes to f.
func NewTryWriter(f *os.File) *TryWriter {
	w := &TryWriter{name: f.Name()}
	w.rc, w.mode, w.err = nbio.Of(f) // fails only for a file already closed
	w.writeFd = w.write
	return w
}

// TryWrite writes as much of b as the file takes now, and never waits: a
// full pipe or pty buffer gives a short count and no error.
func (w *TryWriter) TryWrite(b []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = b
	err := w.rc.Write(w.writeFd)
	written, writeErr := w.written, w.writeErr
	w.b, w.written, w.writeErr = nil, 0, nil
	if err != nil {
		// The raw descriptor fails only once the file is closed (its poller
		// says "use of closed file"); say it as os.File does.
		return written, &os.PathError{Op: "write", Path: w.name, Err: os.ErrClosed}
	}
	return written, writeErr
}

// write is the poller's write: as much of w.b as fd takes, and never park
// (the caller queues what is left).
func (w *TryWriter) write(fd uintptr) bool {
	w.written, _, w.writeErr = w.mode.WriteFrom(fd, w.b, w.written)
	return true
}
