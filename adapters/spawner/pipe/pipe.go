// Package pipe implements ports.Spawner with os/exec on plain pipes: the
// child leads its own process group, its standard input is a pipe, and its
// standard output and standard error share one pipe, read as one stream —
// or, when the spec asks for SeparateStderr, each has a pipe of its own.
package pipe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/adapters/spawner/internal/childsig"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

// Spawner starts processes on pipes. The zero value is ready to use.
type Spawner struct{}

var _ ports.Spawner = (*Spawner)(nil)

// New returns a pipe spawner.
func New() *Spawner { return &Spawner{} }

// Spawn starts spec.Program in a process group of its own. ctx only bounds
// the start: once running, the process lives until it exits or is signalled,
// however long the caller's context lasts. spec.Env is the child's complete
// environment (nil means an empty one, never the daemon's). A spec asking for
// a pty is refused: that is the pty spawner's job.
func (s *Spawner) Spawn(ctx context.Context, spec ports.SpawnSpec) (ports.Process, error) {
	childsig.Restore()
	if err := context.Cause(ctx); err != nil {
		return nil, fmt.Errorf("pipe: spawn %q: %w", spec.Program, err)
	}
	if spec.PTY {
		return nil, fmt.Errorf("pipe: spawn %q: the spec asks for a pty; use the pty spawner", spec.Program)
	}

	cmd := exec.Command(spec.Program, spec.Args...)
	cmd.Dir = spec.Dir
	cmd.Env = append([]string{}, spec.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}

	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("pipe: spawn %q: stdin pipe: %w", spec.Program, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("pipe: spawn %q: output pipe: %w", spec.Program, err)
	}
	// Handing os/exec *os.File values (and the same one twice) means it
	// passes the descriptors straight to the child and starts no copying
	// goroutines of its own.
	cmd.Stdin = inR
	cmd.Stdout = outW
	cmd.Stderr = outW
	var errR, errW *os.File
	if spec.SeparateStderr {
		if errR, errW, err = os.Pipe(); err != nil {
			closeAll(inR, inW, outR, outW)
			return nil, fmt.Errorf("pipe: spawn %q: stderr pipe: %w", spec.Program, err)
		}
		cmd.Stderr = errW
	}

	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW)
		if errR != nil {
			closeAll(errR, errW)
		}
		return nil, fmt.Errorf("pipe: spawn %q in %q: %w", spec.Program, spec.Dir, err)
	}
	// Only the child (and whatever it starts) may keep these ends open, so
	// that Read sees EOF exactly when the last writer is gone.
	closeAll(inR, outW)
	if errW != nil {
		closeAll(errW)
	}

	p := &process{cmd: cmd, stdin: inW, out: outR, errOut: errR, done: make(chan struct{})}
	go p.reap()
	return p, nil
}

// process is one child on pipes.
type process struct {
	cmd   *exec.Cmd
	stdin *os.File
	out   *os.File
	// errOut is standard error when the spec kept it apart; nil otherwise.
	errOut *os.File

	done   chan struct{}
	status terminal.ExitStatus

	closeInputOnce sync.Once
	closeInputErr  error
	closeOnce      sync.Once
	closeErr       error

	mu         sync.Mutex
	cols, rows uint16
}

func (p *process) reap() {
	// The error only repeats what ProcessState says; there are no copying
	// goroutines whose failure it could report.
	_ = p.cmd.Wait()
	p.status = exitStatus(p.cmd.ProcessState)
	close(p.done)
}

// Read returns the merged stdout and stderr, or stdout alone when stderr
// is kept apart.
func (p *process) Read(b []byte) (int, error) { return p.out.Read(b) }

var _ ports.StderrSource = (*process)(nil)

// Stderr returns standard error when the spec asked for SeparateStderr.
func (p *process) Stderr() io.Reader {
	if p.errOut == nil {
		return nil
	}
	return p.errOut
}

// Write sends b to the child's standard input.
func (p *process) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// CloseInput closes the child's standard input; later calls do nothing.
func (p *process) CloseInput() error {
	p.closeInputOnce.Do(func() { p.closeInputErr = p.stdin.Close() })
	return p.closeInputErr
}

// Resize remembers the size: a child on pipes has no window to resize.
func (p *process) Resize(cols, rows uint16) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cols, p.rows = cols, rows
	return nil
}

// Signal sends sig to the child's process group. Once the group is empty it
// returns an error that wraps os.ErrProcessDone.
func (p *process) Signal(sig syscall.Signal) error {
	return signalGroup(p.Pid(), sig)
}

// Wait returns the exit status once the child has exited (not necessarily
// after its output has drained).
func (p *process) Wait() terminal.ExitStatus {
	<-p.done
	return p.status
}

// Pid is the child's pid, which is also its process group id.
func (p *process) Pid() int {
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// IsPTY is false: this is a child on pipes.
func (p *process) IsPTY() bool { return false }

// Close releases every pipe. A Read in progress returns an error.
func (p *process) Close() error {
	p.closeOnce.Do(func() {
		inErr := p.CloseInput()
		if errors.Is(inErr, os.ErrClosed) {
			inErr = nil
		}
		var errErr error
		if p.errOut != nil {
			errErr = p.errOut.Close()
		}
		p.closeErr = errors.Join(inErr, p.out.Close(), errErr)
	})
	return p.closeErr
}

func signalGroup(pid int, sig syscall.Signal) error {
	if pid <= 0 {
		// kill(-0) would signal the daemon's own process group.
		return ports.ErrNoProcess
	}
	err := unix.Kill(-pid, sig)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ESRCH):
		return fmt.Errorf("pipe: %s to process group %d: %w", signalName(sig), pid, os.ErrProcessDone)
	default:
		return fmt.Errorf("pipe: %s to process group %d: %w", signalName(sig), pid, err)
	}
}

// exitStatus normalises how the child ended, once, for everyone who waits.
func exitStatus(state *os.ProcessState) terminal.ExitStatus {
	if state == nil {
		return terminal.CouldNotStart()
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return terminal.KilledBy(signalName(ws.Signal()))
	}
	return terminal.ExitedWith(state.ExitCode())
}

func signalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	// Real-time signals have no name in x/sys.
	return "SIG" + strconv.Itoa(int(sig))
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}
