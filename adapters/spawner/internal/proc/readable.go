package proc

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// ReadLent reads f (non-blocking, in Go's poller) into a buffer taken with
// lend only once there is something to read: while nothing is, the poller
// parks the caller holding no buffer and no thread. eof maps an error the
// kind of file uses for the end of output (a pty's EIO) to io.EOF.
func ReadLent(f *os.File, lend func() []byte, giveBack func([]byte), eof func(error) bool) ([]byte, int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, 0, err
	}
	var (
		buf     []byte
		n       int
		readErr error
	)
	err = rc.Read(func(fd uintptr) bool {
		b := lend()
		for {
			n, readErr = unix.Read(int(fd), b)
			if !errors.Is(readErr, unix.EINTR) {
				break
			}
		}
		if errors.Is(readErr, unix.EAGAIN) {
			giveBack(b)
			return false // nothing yet: park until the poller says
		}
		buf = b
		// Read on while the kernel has more and the buffer has room: a
		// pty hands out at most 4 KiB a read, and each read that reaches
		// a viewer on its own costs a wake-up and a socket write. One
		// more read that finds nothing (EAGAIN) is the price of a burst;
		// a lone keystroke's echo pays it too and still leaves at once.
		for readErr == nil && n > 0 && n < len(b) {
			k, err := unix.Read(int(fd), b[n:])
			if errors.Is(err, unix.EINTR) {
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
	case err != nil && eof != nil && eof(err):
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
