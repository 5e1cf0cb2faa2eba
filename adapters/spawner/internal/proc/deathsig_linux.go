package proc

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// The kernel sends a child's parent-death signal when the thread that
// forked it ends, not when the process does (prctl(2); golang/go#27505).
// The Go runtime ends a thread whenever a goroutine locked to it returns
// without unlocking, which any library may do, so a child forked from an
// ordinary goroutine could be killed at a random moment. Every child is
// therefore forked on one thread kept for that alone: its goroutine locks
// it and never returns, so the thread ends only with the daemon.

type startRequest struct {
	start func() error
	done  chan error
}

var (
	spawnOnce sync.Once
	spawnReqs chan startRequest
)

func spawnThread() {
	runtime.LockOSThread() // never unlocked: the thread must outlive every child
	for r := range spawnReqs {
		r.done <- r.start()
	}
}

// Start sets cmd to be killed (SIGKILL) when the daemon dies, however it
// dies, and runs start — which must fork cmd, e.g. cmd.Start — on the
// spawning thread. A sandboxed command's first process is process 1 of its
// PID namespace, so its death takes everything inside with it; a process
// that leaves a person's terminal's session (setsid) is not a child and is
// not covered here.
func Start(cmd *exec.Cmd, start func() error) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	spawnOnce.Do(func() {
		spawnReqs = make(chan startRequest)
		go spawnThread()
	})
	r := startRequest{start: start, done: make(chan error, 1)}
	spawnReqs <- r
	return <-r.done
}
