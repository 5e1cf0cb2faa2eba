package proc

import (
	"errors"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// watchExit hands c to the shared reaper and reports whether it took it.
// It declines, and c needs a blocking wait of its own, where pidfds or
// waitid on them are missing (before Linux 5.4) or forbidden (seccomp).
func watchExit(c *Child) bool {
	r := sharedReaper()
	return r != nil && r.watch(c)
}

var sharedReaper = sync.OnceValue(newReaper)

// reaper waits for the exits of many children at once: each child's pidfd,
// which becomes readable when the child exits, is in an epoll set, and the
// epoll descriptor itself is in Go's poller. So one goroutine, parked
// without a thread, stands for every running child; it runs only while
// there is a child to wait for.
//
// A pidfd is opened with pidfd_open rather than asked of clone
// (SysProcAttr.PidFD): os/exec keeps a duplicate of that one for its own
// waitid, and the two would share one open file description (and its
// flags). A pidfd of our own cannot be mistaken for another process: the
// child stays a zombie, its pid taken, until collect reaps it.
type reaper struct {
	set *epollSet

	mu       sync.Mutex
	children map[int]*Child // by pidfd
	running  bool           // the goroutine of run is on its way
	broken   bool           // epoll failed: every child waits on its own
}

// newReaper returns a reaper, or nil when this kernel cannot do what it
// needs.
func newReaper() *reaper {
	// waitid knows P_PIDFD where it answers ECHILD for a pidfd of this very
	// process, which is nobody's child here.
	self, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return nil
	}
	defer func() { _ = unix.Close(self) }()
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PIDFD, self, &info, unix.WEXITED|unix.WNOHANG, nil); !errors.Is(err, unix.ECHILD) {
		return nil
	}

	set, err := newEpollSet("reaper epoll")
	if err != nil {
		return nil
	}
	return &reaper{set: set, children: map[int]*Child{}}
}

// watch adds c to the set; false means c must wait on its own.
func (r *reaper) watch(c *Child) bool {
	pidfd, err := unix.PidfdOpen(c.process.Pid, 0)
	if err != nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.broken || r.set.add(pidfd, unix.EPOLLIN) != nil {
		_ = unix.Close(pidfd)
		return false
	}
	r.children[pidfd] = c
	if !r.running {
		r.running = true
		go r.run()
	}
	return true
}

// run reaps children as their pidfds turn readable, until none is left.
func (r *reaper) run() {
	var events [16]unix.EpollEvent
	for {
		n, err := r.set.wait(events[:])
		if err != nil {
			r.abandon()
			return
		}
		for _, ev := range events[:n] {
			r.reap(int(ev.Fd))
		}
		if r.idle() {
			return
		}
	}
}

// reap collects the child behind pidfd if it has exited.
func (r *reaper) reap(pidfd int) {
	// WNOHANG makes this a question, never a wait; WNOWAIT leaves the child
	// for collect. Linux sets si_signo (to SIGCHLD) only for a child that
	// has exited.
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PIDFD, pidfd, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	if errors.Is(err, unix.EINTR) || (err == nil && info.Signo == 0) {
		// Still running: level-triggered, the set asks again.
		return
	}
	r.mu.Lock()
	c := r.children[pidfd]
	delete(r.children, pidfd)
	r.set.remove(pidfd)
	_ = unix.Close(pidfd)
	r.mu.Unlock()
	if c == nil {
		return
	}
	if err != nil {
		// The kernel cannot say; a wait of its own can.
		go c.collect()
		return
	}
	c.collect()
}

// idle ends the goroutine of run when no child is left; a later watch
// starts another.
func (r *reaper) idle() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.children) > 0 {
		return false
	}
	r.running = false
	return true
}

// abandon gives every child a blocking wait of its own when the epoll set
// no longer works, and makes later children do the same.
func (r *reaper) abandon() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.broken, r.running = true, false
	for pidfd, c := range r.children {
		r.set.remove(pidfd)
		_ = unix.Close(pidfd)
		go c.collect()
	}
	clear(r.children)
}
