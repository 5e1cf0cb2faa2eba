package proc

import (
	"errors"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// outputWatch waits for output on the descriptors of quiet processes, all
// of them on one goroutine: a private epoll instance, itself waited for in
// Go's poller. A descriptor is watched once (one-shot) and leaves the set
// when it fires or is cancelled. The goroutine runs only while something
// is watched.
type outputWatch struct {
	mu      sync.Mutex
	ep      *os.File // nil until first used, or when epoll failed
	rc      syscall.RawConn
	broken  error
	waiting map[int32]func()
	running bool
}

var watch outputWatch

// canWatch says whether descriptors can be watched here.
const canWatch = true

// add watches fd and calls ready once when it is readable or hung up, or
// when cancel(fd) comes first. It reports false, watching nothing, when
// the descriptor cannot be watched.
func (w *outputWatch) add(fd int32, ready func()) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ep == nil && w.broken == nil {
		w.broken = w.open()
	}
	if w.broken != nil {
		return false
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: fd}
	var ctlErr error
	if err := w.rc.Control(func(ep uintptr) { ctlErr = unix.EpollCtl(int(ep), unix.EPOLL_CTL_ADD, int(fd), &ev) }); err != nil || ctlErr != nil {
		return false
	}
	w.waiting[fd] = ready
	if !w.running {
		w.running = true
		go w.loop()
	}
	return true
}

// cancel stops watching fd, if it still is, and returns its ready to call.
// It must come before fd is closed: the set is keyed by descriptor number.
func (w *outputWatch) cancel(fd int32) func() {
	w.mu.Lock()
	defer w.mu.Unlock()
	ready := w.waiting[fd]
	if ready == nil {
		return nil
	}
	w.removeLocked(fd)
	if len(w.waiting) == 0 {
		// Wake the loop so it ends: nothing is left for it to wait for.
		_ = w.ep.SetReadDeadline(time.Unix(1, 0))
	}
	return ready
}

func (w *outputWatch) removeLocked(fd int32) {
	delete(w.waiting, fd)
	_ = w.rc.Control(func(ep uintptr) { _ = unix.EpollCtl(int(ep), unix.EPOLL_CTL_DEL, int(fd), nil) })
}

func (w *outputWatch) open() error {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	if err := unix.SetNonblock(ep, true); err != nil {
		_ = unix.Close(ep)
		return err
	}
	f := os.NewFile(uintptr(ep), "output-watch")
	rc, err := f.SyscallConn()
	if err == nil {
		// A deadline is how cancel wakes the loop; a file outside the
		// poller has none.
		err = f.SetReadDeadline(time.Time{})
	}
	if err != nil {
		_ = f.Close()
		return err
	}
	w.ep, w.rc, w.waiting = f, rc, make(map[int32]func())
	return nil
}

// loop hands each descriptor that fires to its ready, until none is
// watched.
func (w *outputWatch) loop() {
	events := make([]unix.EpollEvent, 64)
	var fired []func()
	for {
		w.mu.Lock()
		if len(w.waiting) == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		_ = w.ep.SetReadDeadline(time.Time{})
		w.mu.Unlock()
		err := w.rc.Read(func(ep uintptr) bool {
			// Go's poller reports the epoll instance edge-triggered: take
			// every event there is before waiting again.
			for {
				n, err := unix.EpollWait(int(ep), events, 0)
				if errors.Is(err, unix.EINTR) {
					continue
				}
				if n <= 0 {
					break
				}
				w.mu.Lock()
				for _, ev := range events[:n] {
					if ready := w.waiting[ev.Fd]; ready != nil {
						w.removeLocked(ev.Fd)
						fired = append(fired, ready)
					}
				}
				w.mu.Unlock()
				if n < len(events) {
					break
				}
			}
			return len(fired) > 0
		})
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			// The instance itself failed (it is never closed): give every
			// waiter its ready, so each reads again and learns where it is.
			w.mu.Lock()
			for fd, ready := range w.waiting {
				w.removeLocked(fd)
				fired = append(fired, ready)
			}
			w.mu.Unlock()
		}
		for i, ready := range fired {
			ready()
			fired[i] = nil
		}
		fired = fired[:0]
	}
}
