package proc

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// epollSet is an epoll instance whose own descriptor is in Go's poller:
// one goroutine parked in wait, holding no thread, stands for every
// descriptor in the set. It is never closed.
type epollSet struct {
	fd   int
	file *os.File        // fd, in Go's poller
	rc   syscall.RawConn // file's, to wait for readiness
}

func newEpollSet(name string) (*epollSet, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	// Non-blocking, so that NewFile puts it in Go's poller.
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return nil, err
	}
	file := os.NewFile(uintptr(fd), name)
	rc, err := file.SyscallConn()
	if err != nil {
		_ = file.Close()
		return nil, err
	}
	return &epollSet{fd: fd, file: file, rc: rc}, nil
}

func (s *epollSet) add(fd int, events uint32) error {
	return unix.EpollCtl(s.fd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: events, Fd: int32(fd)})
}

func (s *epollSet) remove(fd int) { _ = unix.EpollCtl(s.fd, unix.EPOLL_CTL_DEL, fd, nil) }

// wait parks until the set has events and fills events with them. Go's
// poller sees the set edge-triggered, but each wait asks the set before
// it parks, so events left over from a full batch come with the next.
// A read deadline on file ends a wait with os.ErrDeadlineExceeded.
func (s *epollSet) wait(events []unix.EpollEvent) (int, error) {
	var n int
	var waitErr error
	err := s.rc.Read(func(fd uintptr) bool {
		for {
			n, waitErr = unix.EpollWait(int(fd), events, 0)
			if !errors.Is(waitErr, unix.EINTR) {
				return waitErr != nil || n > 0
			}
		}
	})
	return n, errors.Join(err, waitErr)
}
