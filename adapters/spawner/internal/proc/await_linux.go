package proc

import (
	"errors"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// outputWatch waits for output on the descriptors of quiet readers, all of
// them on one goroutine parked on an epoll set. A descriptor is watched
// once (one-shot) and leaves the set when it fires or is cancelled. The
// goroutine runs only while something is watched.
type outputWatch struct {
	mu      sync.Mutex
	set     *epollSet // nil until first used
	broken  bool      // no epoll set could be made: nothing is watched
	waiting map[int32]func()
	running bool
}

var watch outputWatch

// canWatch says whether descriptors can be watched here.
const canWatch = true

// add watches fd and calls ready once when it is readable or hung up, or
// when cancel(fd) comes first. It reports false, watching nothing, when
// fd cannot be watched.
func (w *outputWatch) add(fd int32, ready func()) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.set == nil && !w.broken {
		set, err := newEpollSet("output watch")
		// A deadline is how cancel wakes the loop: the set must have one.
		if err == nil && set.file.SetReadDeadline(time.Time{}) == nil {
			w.set, w.waiting = set, map[int32]func(){}
		} else {
			w.broken = true
		}
	}
	if w.broken || w.set.add(int(fd), unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLONESHOT) != nil {
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
	delete(w.waiting, fd)
	w.set.remove(int(fd))
	if len(w.waiting) == 0 {
		// Wake the loop so it ends: nothing is left for it to wait for.
		_ = w.set.file.SetReadDeadline(time.Unix(1, 0))
	}
	return ready
}

// loop hands each descriptor that fires to its ready, until none is
// watched.
func (w *outputWatch) loop() {
	var events [64]unix.EpollEvent
	var fired []func()
	for {
		w.mu.Lock()
		if len(w.waiting) == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		_ = w.set.file.SetReadDeadline(time.Time{})
		w.mu.Unlock()
		n, err := w.set.wait(events[:])
		w.mu.Lock()
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			// The set itself failed (it is never closed): every reader
			// gets its ready, reads again and learns where it is.
			for fd, ready := range w.waiting {
				w.set.remove(int(fd))
				fired = append(fired, ready)
			}
			clear(w.waiting)
		}
		for _, ev := range events[:n] {
			if ready := w.waiting[ev.Fd]; ready != nil {
				delete(w.waiting, ev.Fd)
				w.set.remove(int(ev.Fd))
				fired = append(fired, ready)
			}
		}
		w.mu.Unlock()
		for i, ready := range fired {
			ready()
			fired[i] = nil
		}
		fired = fired[:0]
	}
}
