// Package fake is an in-memory ports.Spawner: scripted processes for unit
// tests and for embedders who want terminals without real programs. Nothing
// here starts an OS process or touches the file system.
//
// A test scripts a process in one of two ways. It can Register a Program for
// a program name, which runs in its own goroutine as the child. Or it can
// leave the name unregistered and drive the process itself: take it with
// Spawner.Next and call Emit, Input, Exit and so on.
//
// An unregistered program starts (it is never "not found" unless FailWhen
// says so), prints nothing and runs until the test ends it with Exit or Die,
// or a signal that would end a real process arrives. It starts no goroutine.
//
// Fidelity, and where it stops: output is one unbounded in-memory stream, so
// Emit never blocks; there is no line discipline under a fake pty (no echo,
// no \n to \r\n, no ^C to SIGINT); the process group is modelled by
// HoldOutput, which stands for a background job that keeps the output open
// after the process exits until it is released or the group is signalled.
package fake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/adapters/spawner/internal/gone"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

// FirstPid is the pid of the first process a Spawner starts; later ones count
// up from it. Fake pids are never signalled for real.
const FirstPid = 10000

// Default window size of a process whose spec leaves Cols or Rows at zero (as
// the pty spawner does).
const (
	DefaultCols = 80
	DefaultRows = 24
)

// ErrExited is returned by the child-side waits (WaitInput, NextSignal) once
// the process has ended and nothing more can arrive.
var ErrExited = errors.New("fake: the process has exited")

// Program scripts a fake program. It runs in its own goroutine once the
// process has started, acting as the child, and the process exits with the
// status it returns. If the process ends first (a signal, Exit or Die), the
// returned status is ignored; a Program should watch p.Done() (or use the
// child-side calls, which return once the process ends) so its goroutine
// does not outlive the process.
type Program func(p *Process) terminal.ExitStatus

// Size is a window size.
type Size struct {
	Cols, Rows uint16
}

// Spawner is the fake ports.Spawner. Its zero value is not usable; call New.
type Spawner struct {
	mu       sync.Mutex
	programs map[string]Program
	failures []failure
	spawned  []*Process
	taken    int
	nextPid  int
	changed  chan struct{}
}

type failure struct {
	match func(ports.SpawnSpec) bool
	err   error
}

var _ ports.Spawner = (*Spawner)(nil)

// New returns a fake spawner with no programs registered.
func New() *Spawner {
	return &Spawner{programs: map[string]Program{}, nextPid: FirstPid, changed: make(chan struct{})}
}

// Register scripts the program called name: a spec matches when its Program
// equals name, or else when its base name does ("/bin/sh" matches "sh"). A
// nil prog removes the script.
func (s *Spawner) Register(name string, prog Program) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prog == nil {
		delete(s.programs, name)
		return
	}
	s.programs[name] = prog
}

// FailWhen makes Spawn return err, starting nothing, for every spec that
// match accepts. Rules are tried in the order they were added.
func (s *Spawner) FailWhen(match func(ports.SpawnSpec) bool, err error) {
	if err == nil {
		err = errors.New("fake: spawn refused")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, failure{match: match, err: err})
}

// Spawn starts a fake process for spec, or fails as FailWhen says, or with
// the context's error when ctx is already done.
func (s *Spawner) Spawn(ctx context.Context, spec ports.SpawnSpec) (ports.Process, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, fmt.Errorf("fake: spawn %q: %w", spec.Program, err)
	}
	spec.Args = slices.Clone(spec.Args)
	spec.Env = slices.Clone(spec.Env)

	s.mu.Lock()
	for _, f := range s.failures {
		if f.match(spec) {
			s.mu.Unlock()
			return nil, fmt.Errorf("fake: spawn %q in %q: %w", spec.Program, spec.Dir, f.err)
		}
	}
	prog, ok := s.programs[spec.Program]
	if !ok {
		prog = s.programs[filepath.Base(spec.Program)]
	}
	p := newProcess(spec, s.nextPid)
	s.nextPid++
	s.spawned = append(s.spawned, p)
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()

	if prog != nil {
		go func() { p.exit(prog(p)) }()
	}
	return p, nil
}

// Next returns the oldest spawned process that Next has not returned yet,
// waiting for one until ctx is done.
func (s *Spawner) Next(ctx context.Context) (*Process, error) {
	for {
		s.mu.Lock()
		if s.taken < len(s.spawned) {
			p := s.spawned[s.taken]
			s.taken++
			s.mu.Unlock()
			return p, nil
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("fake: waiting for a spawn: %w", context.Cause(ctx))
		}
	}
}

// Processes returns every process spawned so far, oldest first.
func (s *Spawner) Processes() []*Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.spawned)
}

// Process is one fake process. It is the ports.Process the code under test
// holds (Read, Write, Signal …) and, through the remaining methods, the
// child's side that a test or a Program drives (Emit, ReadInput, Exit …).
type Process struct {
	spec ports.SpawnSpec
	pid  int
	done chan struct{}

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change, to wake waiters

	out       []byte // emitted, not yet read
	errOut    []byte // emitted to a separate stderr, not yet read
	holds     int    // background jobs keeping the output open
	outClosed bool   // no writer left: Read drains out, then io.EOF
	closed    bool   // the holder called Close

	in       []byte // everything ever written
	inRead   int    // how much of in the child has read
	inClosed bool

	exited bool
	status terminal.ExitStatus

	size      Size
	resizes   []Size
	signals   []syscall.Signal
	sigRead   int
	trapped   map[syscall.Signal]bool
	closeOnce sync.Once
}

var _ ports.Process = (*Process)(nil)

func newProcess(spec ports.SpawnSpec, pid int) *Process {
	size := Size{Cols: spec.Cols, Rows: spec.Rows}
	if size.Cols == 0 {
		size.Cols = DefaultCols
	}
	if size.Rows == 0 {
		size.Rows = DefaultRows
	}
	return &Process{
		spec:    spec,
		pid:     pid,
		done:    make(chan struct{}),
		changed: make(chan struct{}),
		size:    size,
		trapped: map[syscall.Signal]bool{},
	}
}

// --- the ports.Process side ---

// Read returns emitted output, blocking until there is some; io.EOF once the
// process has exited, every HoldOutput is released and all was read.
func (p *Process) Read(b []byte) (int, error) { return p.readStream(b, &p.out) }

// readStream takes what is emitted on one stream (out or errOut), blocking
// until there is some; io.EOF once the process has exited, every
// HoldOutput is released and all was read.
func (p *Process) readStream(b []byte, stream *[]byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for {
		p.mu.Lock()
		switch {
		case p.closed:
			p.mu.Unlock()
			return 0, os.ErrClosed
		case len(*stream) > 0:
			n := copy(b, *stream)
			*stream = (*stream)[n:]
			p.mu.Unlock()
			return n, nil
		case p.outClosed:
			p.mu.Unlock()
			return 0, io.EOF
		}
		changed := p.changed
		p.mu.Unlock()
		<-changed
	}
}

var _ ports.StderrSource = (*Process)(nil)

// Stderr returns the child's standard error when the spec asked for
// SeparateStderr on pipes; nil otherwise (EmitStderr then goes to Read's
// stream, as a real pipe or pty would merge it).
func (p *Process) Stderr() io.Reader {
	if !p.separate() {
		return nil
	}
	return stderrReader{p}
}

func (p *Process) separate() bool { return p.spec.SeparateStderr && !p.spec.PTY }

// stderrReader reads the separate standard error stream; like Read it
// returns io.EOF once the process has exited and nothing holds the output.
type stderrReader struct{ p *Process }

func (r stderrReader) Read(b []byte) (int, error) { return r.p.readStream(b, &r.p.errOut) }

// Write appends b to the child's input. It fails once input is closed, and
// once the process has exited (EPIPE on pipes, EIO on a pty, as for real),
// with errors that match ports.ErrProcessGone.
func (p *Process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed || p.inClosed:
		return 0, gone.Wrap(os.ErrClosed)
	case p.exited:
		if p.spec.PTY {
			return 0, gone.Wrap(syscall.EIO)
		}
		return 0, gone.Wrap(syscall.EPIPE)
	}
	p.in = append(p.in, b...)
	p.notifyLocked()
	return len(b), nil
}

var _ ports.InputTrier = (*Process)(nil)

// TryWrite is Write: the fake's input has no bound, so it always takes all.
func (p *Process) TryWrite(b []byte) (int, error) { return p.Write(b) }

// CloseInput ends the child's input: ReadInput returns io.EOF once it has
// read everything. Later calls do nothing.
func (p *Process) CloseInput() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inClosed = true
	p.notifyLocked()
	return nil
}

// Resize records the new size (on pipes too, so tests can see it); under a
// pty it also delivers SIGWINCH, which a fake process ignores unless it
// waits for it with NextSignal.
func (p *Process) Resize(cols, rows uint16) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return os.ErrClosed
	}
	p.size = Size{Cols: cols, Rows: rows}
	p.resizes = append(p.resizes, p.size)
	if p.spec.PTY && !p.exited {
		p.signals = append(p.signals, syscall.SIGWINCH)
	}
	p.notifyLocked()
	return nil
}

// Signal delivers sig to the process and its group. A signal whose default
// action ends a real process (SIGINT, SIGTERM, SIGKILL, SIGHUP …) ends the
// fake one with 128 and the signal's name unless Trap caught it, and in any
// case releases every HoldOutput, as the rest of the group dies of it. SIGWINCH, SIGCHLD,
// SIGURG, SIGCONT and the stop signals are only recorded. Once the process
// has exited and nothing holds its output, the error wraps os.ErrProcessDone.
func (p *Process) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited && p.holds == 0 {
		return fmt.Errorf("fake: %s to process group %d: %w", signalName(sig), p.pid, os.ErrProcessDone)
	}
	if sig == 0 {
		return nil
	}
	if !p.exited {
		p.signals = append(p.signals, sig)
	}
	if terminates(sig) {
		// The HoldOutput holders stand for the rest of the group, which has
		// no traps of its own.
		p.holds = 0
		if !p.trapped[sig] {
			p.exitLocked(terminal.KilledBy(signalName(sig)))
		}
		p.closeOutputIfDoneLocked()
	}
	p.notifyLocked()
	return nil
}

// Interrupt is Signal(SIGINT), its error matching ports.ErrProcessGone
// once the process has gone.
func (p *Process) Interrupt() error { return gone.Wrap(p.Signal(syscall.SIGINT)) }

// Terminate is Signal(SIGTERM), as Interrupt.
func (p *Process) Terminate() error { return gone.Wrap(p.Signal(syscall.SIGTERM)) }

// Kill is Signal(SIGKILL), as Interrupt.
func (p *Process) Kill() error { return gone.Wrap(p.Signal(syscall.SIGKILL)) }

// Wait blocks until the process has exited and returns its status.
func (p *Process) Wait() terminal.ExitStatus {
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

// Pid is the fake pid (FirstPid and up); never 0.
func (p *Process) Pid() int { return p.pid }

// IsPTY reports what the spec asked for.
func (p *Process) IsPTY() bool { return p.spec.PTY }

// Close releases the process: Read and Write fail from now on and the
// child's input ends. It does not end the process.
func (p *Process) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.notifyLocked()
	return nil
}

// --- the child's side ---

// Spec returns the spec the process was spawned with.
func (p *Process) Spec() ports.SpawnSpec {
	spec := p.spec
	spec.Args = slices.Clone(spec.Args)
	spec.Env = slices.Clone(spec.Env)
	return spec
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Unread is how many bytes of emitted output the holder has not read yet:
// what a real process would find waiting in its pipe (or be blocked on).
func (p *Process) Unread() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.out) + len(p.errOut)
}

// Emit writes s to the process's output. It fails once the output is closed
// (the process exited with nothing holding it) or the holder closed the
// process.
func (p *Process) Emit(s string) error { return p.emit(&p.out, s) }

// EmitStderr writes s to the process's standard error: a stream of its own
// when the spec asked for SeparateStderr on pipes, otherwise the same
// stream as Emit. It fails as Emit does.
func (p *Process) EmitStderr(s string) error {
	if !p.separate() {
		return p.Emit(s)
	}
	return p.emit(&p.errOut, s)
}

// emit appends s to one of the process's output streams.
func (p *Process) emit(stream *[]byte, s string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return syscall.EPIPE
	case p.outClosed:
		return errors.New("fake: emit after the output closed")
	}
	*stream = append(*stream, s...)
	p.notifyLocked()
	return nil
}

// HoldOutput stands for a background job holding the output open: Read does
// not return io.EOF until release is called (once is enough) or a signal that
// ends the group arrives, even after the process exits.
func (p *Process) HoldOutput() (release func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.outClosed {
		return func() {}
	}
	p.holds++
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.holds > 0 {
				p.holds--
			}
			p.closeOutputIfDoneLocked()
			p.notifyLocked()
		})
	}
}

// ReadInput reads what was written to the process, as the child reads its
// stdin: it blocks until there is input, and returns io.EOF once input is
// closed and drained, or the process has ended or been closed.
func (p *Process) ReadInput(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for {
		p.mu.Lock()
		if p.inRead < len(p.in) {
			n := copy(b, p.in[p.inRead:])
			p.inRead += n
			p.mu.Unlock()
			return n, nil
		}
		if p.inClosed || p.exited || p.closed {
			p.mu.Unlock()
			return 0, io.EOF
		}
		changed := p.changed
		p.mu.Unlock()
		<-changed
	}
}

// Input returns everything written to the process so far, read or not.
func (p *Process) Input() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return string(p.in)
}

// WaitInput waits until the input written so far contains want. It returns
// ErrExited if the process ends first, or the context's error.
func (p *Process) WaitInput(ctx context.Context, want string) error {
	for {
		p.mu.Lock()
		if strings.Contains(string(p.in), want) {
			p.mu.Unlock()
			return nil
		}
		exited, changed := p.exited, p.changed
		p.mu.Unlock()
		if exited {
			return fmt.Errorf("fake: waiting for input %q: %w", want, ErrExited)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("fake: waiting for input %q: %w", want, context.Cause(ctx))
		}
	}
}

// InputClosed reports whether CloseInput (or Close) was called.
func (p *Process) InputClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inClosed || p.closed
}

// Size returns the current window size.
func (p *Process) Size() Size {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.size
}

// Resizes returns every size passed to Resize, oldest first.
func (p *Process) Resizes() []Size {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.resizes)
}

// Signals returns every signal delivered while the process ran (trapped,
// ignored and fatal alike), oldest first.
func (p *Process) Signals() []syscall.Signal {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.signals)
}

// NextSignal returns the oldest delivered signal that NextSignal has not
// returned yet, waiting for one. It returns ErrExited once the process has
// ended and every signal was returned, or the context's error.
func (p *Process) NextSignal(ctx context.Context) (syscall.Signal, error) {
	for {
		p.mu.Lock()
		if p.sigRead < len(p.signals) {
			sig := p.signals[p.sigRead]
			p.sigRead++
			p.mu.Unlock()
			return sig, nil
		}
		exited, changed := p.exited, p.changed
		p.mu.Unlock()
		if exited {
			return 0, ErrExited
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return 0, fmt.Errorf("fake: waiting for a signal: %w", context.Cause(ctx))
		}
	}
}

// Trap makes sigs no longer end the process: they are only recorded, for
// NextSignal. It panics for SIGKILL and SIGSTOP, which no process can catch.
func (p *Process) Trap(sigs ...syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, sig := range sigs {
		if sig == syscall.SIGKILL || sig == syscall.SIGSTOP {
			panic(fmt.Sprintf("fake: %s cannot be trapped", signalName(sig)))
		}
		p.trapped[sig] = true
	}
}

// Exit ends the process with code, as if it had called exit(code). It does
// nothing if the process has already ended.
func (p *Process) Exit(code int) { p.exit(terminal.ExitedWith(code)) }

// Die ends the process as if sig had killed it (128 and the signal's name),
// without signalling its group: HoldOutput holders live on. It does nothing
// if the process has already ended.
func (p *Process) Die(sig syscall.Signal) { p.exit(terminal.KilledBy(signalName(sig))) }

// Closed reports whether the holder called Close.
func (p *Process) Closed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

func (p *Process) exit(status terminal.ExitStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.exitLocked(status)
	p.closeOutputIfDoneLocked()
	p.notifyLocked()
}

// exitLocked records the first ending only: states move forward once.
func (p *Process) exitLocked(status terminal.ExitStatus) {
	if p.exited {
		return
	}
	p.exited = true
	p.status = status
	p.closeOnce.Do(func() { close(p.done) })
}

func (p *Process) closeOutputIfDoneLocked() {
	if p.exited && p.holds == 0 {
		p.outClosed = true
	}
}

func (p *Process) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// terminates reports whether sig's default action ends a process.
func terminates(sig syscall.Signal) bool {
	switch sig {
	case syscall.SIGWINCH, syscall.SIGCHLD, syscall.SIGURG, syscall.SIGCONT,
		syscall.SIGSTOP, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU:
		return false
	}
	return true
}

func signalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return fmt.Sprintf("SIG%d", int(sig))
}
