package contract

import (
	"context"
	"io"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

// Proc is a process started by Start. One goroutine reads its output to the
// end and one waits for it, so every wait is on an event with a deadline, and
// the test's cleanup can always end both goroutines.
type Proc struct {
	ports.Process
	t       *testing.T
	timeout time.Duration

	mu      sync.Mutex
	out     []byte
	readErr error // why the reader stopped; io.EOF is the good ending
	changed chan struct{}

	readDone chan struct{}
	exited   chan struct{}
	status   terminal.ExitStatus
}

// Start spawns spec on a fresh spawner from h (with spec.PTY set to h.PTY)
// and arranges for the process, its group and both helper goroutines to be
// gone when the test ends: whatever still runs then is killed, and for a
// Real harness any survivor in the process group fails the test.
func Start(t *testing.T, h Harness, spec ports.SpawnSpec) *Proc {
	t.Helper()
	spec.PTY = h.PTY
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout())
	defer cancel()
	process, err := h.New(t).Spawn(ctx, spec)
	require.NoError(t, err, "spawn %q %q", spec.Program, spec.Args)
	require.NotNil(t, process)

	p := &Proc{
		Process:  process,
		t:        t,
		timeout:  h.timeout(),
		changed:  make(chan struct{}),
		readDone: make(chan struct{}),
		exited:   make(chan struct{}),
	}
	pid := process.Pid()
	t.Cleanup(func() {
		p.end()
		if h.Real && pid > 0 {
			RequireGroupGone(t, pid, p.timeout)
		}
	})
	go p.read()
	go p.wait()
	return p
}

func (p *Proc) read() {
	defer close(p.readDone)
	buf := make([]byte, 32*1024)
	for {
		n, err := p.Process.Read(buf)
		p.mu.Lock()
		p.out = append(p.out, buf[:n]...)
		if err != nil {
			p.readErr = err
		}
		close(p.changed)
		p.changed = make(chan struct{})
		p.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (p *Proc) wait() {
	p.status = p.Process.Wait()
	close(p.exited)
}

// end makes sure nothing outlives the test: the process is killed if it still
// runs, its group if something still holds the output, and the reader is
// released by Close.
func (p *Proc) end() {
	t := p.t
	if !isClosed(p.exited) {
		_ = p.Kill()
		if !p.within(p.exited) {
			t.Errorf("process %d still running %v after SIGKILL", p.Pid(), p.timeout)
		}
	}
	if !isClosed(p.readDone) {
		_ = p.Kill()
	}
	_ = p.Close()
	if !p.within(p.readDone) {
		t.Errorf("Read still blocked %v after Close", p.timeout)
	}
}

// Output is the output so far, with a terminal's \r\n read as \n.
func (p *Proc) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.ReplaceAll(string(p.out), "\r\n", "\n")
}

// WaitOutput waits until the output contains want.
func (p *Proc) WaitOutput(want string) {
	p.t.Helper()
	timer := time.NewTimer(p.timeout)
	defer timer.Stop()
	for {
		p.mu.Lock()
		out := strings.ReplaceAll(string(p.out), "\r\n", "\n")
		got, readErr, changed := strings.Contains(out, want), p.readErr, p.changed
		p.mu.Unlock()
		switch {
		case got:
			return
		case readErr != nil:
			p.t.Fatalf("output ended (%v) without %q; got %q", readErr, want, out)
		}
		select {
		case <-changed:
		case <-timer.C:
			p.t.Fatalf("no %q in the output after %v; got %q", want, p.timeout, out)
		}
	}
}

// WaitEOF waits for the end of output and returns all of it.
func (p *Proc) WaitEOF() string {
	p.t.Helper()
	if !p.within(p.readDone) {
		p.t.Fatalf("no end of output after %v; got %q so far", p.timeout, p.Output())
	}
	p.mu.Lock()
	err := p.readErr
	p.mu.Unlock()
	require.ErrorIs(p.t, err, io.EOF, "output must end with io.EOF")
	return p.Output()
}

// WaitExit waits for Wait to return and gives its status.
func (p *Proc) WaitExit() terminal.ExitStatus {
	p.t.Helper()
	if !p.within(p.exited) {
		p.t.Fatalf("process %d did not exit within %v", p.Pid(), p.timeout)
	}
	return p.status
}

// WaitCall runs f (which may block, like Wait) and fails the test if it has
// not returned within the deadline.
func (p *Proc) WaitCall(what string, f func()) {
	p.t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	if !p.within(done) {
		// Ending the process releases f; the cleanup does that.
		p.t.Fatalf("%s did not return within %v", what, p.timeout)
	}
}

func (p *Proc) within(ch <-chan struct{}) bool {
	timer := time.NewTimer(p.timeout)
	defer timer.Stop()
	select {
	case <-ch:
		return true
	case <-timer.C:
		return false
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// signaller is what every spawner's process offers besides ports.Process:
// any signal to its group, for tests of signals the core never sends.
type signaller interface {
	Signal(sig syscall.Signal) error
}

// Signal sends sig to the process's group through its spawner's own
// Signal method; a process without one fails the test.
func (p *Proc) Signal(sig syscall.Signal) error {
	s, ok := p.Process.(signaller)
	if !ok {
		p.t.Fatalf("%T has no Signal(syscall.Signal) method", p.Process)
	}
	return s.Signal(sig)
}
