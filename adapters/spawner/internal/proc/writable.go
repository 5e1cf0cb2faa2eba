package proc

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// TryWrite writes as much of b to f (non-blocking, in Go's poller) as f
// takes now, and never waits: a full pipe or pty buffer gives a short count
// and no error.
func TryWrite(f *os.File, b []byte) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	closed := &os.PathError{Op: "write", Path: f.Name(), Err: os.ErrClosed}
	written := 0
	var writeErr error
	err = rc.Write(func(fd uintptr) bool {
		for written < len(b) {
			n, err := unix.Write(int(fd), b[written:])
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
		return written, closed
	}
	return written, writeErr
}
