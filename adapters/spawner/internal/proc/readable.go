package proc

import (
	"errors"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/adapters/internal/nbio"
)

// LentReader reads a non-blocking file in Go's poller into buffers borrowed
// only once there is something to read: while nothing is, the poller parks
// the caller holding no buffer and no thread. One goroutine reads it at a
// time.
type LentReader struct {
	rc   syscall.RawConn // nil when f could not give one; ReadLent says why
	err  error
	mode nbio.Mode
	eof  func(error) bool
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
	r := &LentReader{eof: eof}
	if r.rc, r.err = f.SyscallConn(); r.err == nil {
		r.mode, _ = nbio.ModeOf(r.rc) // one it cannot look at keeps the guarded calls
	}
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
	var (
		buf     []byte
		n       int
		readErr error
	)
	err := r.rc.Read(func(fd uintptr) bool {
		b := lend()
		for {
			n, readErr = r.mode.Read(fd, b)
			if !errors.Is(readErr, unix.EINTR) {
				break
			}
		}
		if errors.Is(readErr, unix.EAGAIN) {
			giveBack(b)
			return false // nothing yet: park until the poller says
		}
		buf = b
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
		return true
	})
	if err == nil {
		err = readErr
	}
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
		if n > 0 {
			// Data and an error together cannot come from read(2); keep it simple.
			n = 0
		}
		return nil, 0, err
	}
	return buf, n, nil
}
