package proc

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// WaitReadable parks until f has something for Read — data, the end of it,
// or an error — without a buffer and without a thread: the poller wakes it.
// f must be non-blocking (in Go's poller).
func WaitReadable(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var pollErr error
	err = rc.Read(func(fd uintptr) bool {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, 0)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil {
				pollErr = err
				return true
			}
			// Anything but "nothing yet" (readable, hang-up, error) is for
			// Read to report.
			return n > 0
		}
	})
	return errors.Join(err, pollErr)
}
