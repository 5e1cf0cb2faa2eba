package proc

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/adapters/internal/nbio"
	"github.com/shellgate/shellgate/ports"
)

// LentReader reads a non-blocking file in Go's poller into buffers borrowed
// only once there is something to read: while nothing is, the poller parks
// the caller holding no buffer and no thread. One goroutine reads it at a
// time: the state of the read under way lives in the reader itself, so a
// read allocates nothing.
type LentReader struct {
	f    *os.File
	rc   syscall.RawConn // nil when f could not give one; ReadLent says why
	err  error
	mode nbio.Mode
	eof  func(error) bool

	// A quiet reader's watch (AwaitOutput), and whether f is closing.
	mu      sync.Mutex
	watched int32 // f's descriptor while it may be watched; -1 when not
	closing bool

	readFd func(fd uintptr) bool // r.read, made once

	// The read under way.
	lend     func() []byte
	giveBack func([]byte)
	buf      []byte
	n        int
	readErr  error
}

// readOnMin is the least a read must have brought for the next to be
// tried at once: a flood fills its reads (a pty's hold up to 4 KiB), a
// keystroke's echo does not, and asking the kernel again for it would only
// cost a read that finds nothing.
const readOnMin = 1 << 10

// NewLentReader reads f; eof maps an error the kind of file uses for the
// end of output (a pty's EIO) to io.EOF, and may be nil.
// Its reads are raw system calls (package nbio) when f is non-blocking.
func NewLentReader(f *os.File, eof func(error) bool) *LentReader {
	r := &LentReader{f: f, eof: eof, watched: -1}
	r.rc, r.mode, r.err = nbio.Of(f) // fails only for a file already closed
	r.readFd = r.read
	return r
}

// ReadLent reads into a buffer taken with lend once there is output, and
// reads on into it while reads come back full and it has room: a pty hands
// out at most 4 KiB a read, and each read that reached the viewers on its
// own cost a wake-up and a socket write. A short read ends the call, so a
// keystroke's echo costs one read and leaves at once.
func (r *LentReader) ReadLent(lend func() []byte, giveBack func([]byte)) ([]byte, int, error) {
	if r.err != nil {
		return nil, 0, r.err
	}
	r.lend, r.giveBack = lend, giveBack
	err := r.rc.Read(r.readFd)
	buf, n := r.buf, r.n
	if err == nil {
		err = r.readErr
	}
	r.lend, r.giveBack, r.buf, r.n, r.readErr = nil, nil, nil, 0, nil
	switch {
	case err == nil && n == 0:
		err = io.EOF
	case err != nil && r.eof != nil && r.eof(err):
		err = io.EOF
	}
	if err != nil {
		if buf != nil {
			giveBack(buf)
		}
		// Data and an error together cannot come from read(2); keep it simple.
		return nil, 0, err
	}
	return buf, n, nil
}

// ReadLentQuiet is ReadLent that gives up, with ports.ErrQuiet and no
// buffer, once quiet has passed with nothing to read; AwaitOutput then
// waits without a goroutine. Where descriptors cannot be watched (not
// Linux) or f is outside the poller, it is ReadLent. A reader uses one of
// the two: a read that gave up leaves f's deadline behind.
func (r *LentReader) ReadLentQuiet(quiet time.Duration, lend func() []byte, giveBack func([]byte)) ([]byte, int, error) {
	timed := canWatch && quiet > 0 && r.err == nil && r.f.SetReadDeadline(time.Now().Add(quiet)) == nil
	buf, n, err := r.ReadLent(lend, giveBack)
	if timed && errors.Is(err, os.ErrDeadlineExceeded) {
		return nil, 0, ports.ErrQuiet
	}
	return buf, n, err
}

// AwaitOutput calls ready once f has output to read or has hung up, or
// once Closing is called; at once when f cannot be watched. Nothing waits
// on a goroutine of its own meanwhile: one goroutine watches every quiet
// reader's file.
func (r *LentReader) AwaitOutput(ready func()) {
	r.mu.Lock()
	watching := false
	if !r.closing && r.rc != nil {
		_ = r.rc.Control(func(fd uintptr) {
			if watching = watch.add(int32(fd), ready); watching {
				r.watched = int32(fd)
			}
		})
	}
	r.mu.Unlock()
	if !watching {
		ready()
	}
}

// Closing must be called before f is closed: it ends a watch under way,
// calling its ready, and refuses new ones (they call ready at once).
func (r *LentReader) Closing() {
	r.mu.Lock()
	r.closing = true
	fd := r.watched
	r.watched = -1
	r.mu.Unlock()
	if fd < 0 {
		return
	}
	if ready := watch.cancel(fd); ready != nil {
		ready()
	}
}

// read is one turn of the poller's read: false parks the reader until fd
// is readable.
func (r *LentReader) read(fd uintptr) bool {
	b := r.lend()
	var n int
	var readErr error
	for {
		n, readErr = r.mode.Read(fd, b)
		if !errors.Is(readErr, unix.EINTR) {
			break
		}
	}
	if errors.Is(readErr, unix.EAGAIN) {
		r.giveBack(b)
		return false // nothing yet: park until the poller says
	}
	r.buf = b
	for k := n; readErr == nil && k >= readOnMin && n < len(b); {
		var err error
		k, err = r.mode.Read(fd, b[n:])
		if errors.Is(err, unix.EINTR) {
			k = readOnMin
			continue
		}
		if err != nil || k <= 0 {
			break // EAGAIN, or an end the next call reports
		}
		n += k
	}
	r.n, r.readErr = n, readErr
	return true
}
