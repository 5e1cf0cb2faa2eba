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
	"sync"
	"syscall"
	"time"

	"github.com/shellgate/shellgate/adapters/spawner/internal/gone"
	"github.com/shellgate/shellgate/adapters/spawner/internal/proc"
	"github.com/shellgate/shellgate/ports"
)

// Spawner starts processes on pipes. The zero value is ready to use.
type Spawner struct {
	prepare func(*exec.Cmd)
}

var _ ports.Spawner = (*Spawner)(nil)

// New returns a pipe spawner.
func New() *Spawner { return &Spawner{} }

// NewPrepared returns a pipe spawner that hands each command to prepare just
// before it starts, with its streams and process group set, so that a
// confining spawner (adapters/spawner/sandbox) can add namespaces and
// descriptors. prepare must leave the standard streams alone.
func NewPrepared(prepare func(*exec.Cmd)) *Spawner { return &Spawner{prepare: prepare} }

// Spawn starts spec.Program in a process group of its own. ctx only bounds
// the start: once running, the process lives until it exits or is signalled,
// however long the caller's context lasts. spec.Env is the child's complete
// environment (nil means an empty one, never the daemon's). A spec asking for
// a pty is refused: that is the pty spawner's job.
func (s *Spawner) Spawn(ctx context.Context, spec ports.SpawnSpec) (ports.Process, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, fmt.Errorf("pipe: spawn %q: %w", spec.Program, err)
	}
	if spec.Confine != nil {
		return nil, fmt.Errorf("pipe: spawn %q: %w; wrap the spawner in adapters/spawner/sandbox", spec.Program, ports.ErrCannotConfine)
	}
	if spec.PTY {
		return nil, fmt.Errorf("pipe: spawn %q: the spec asks for a pty; use the pty spawner", spec.Program)
	}

	cmd := proc.Command(spec)
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
	// goroutines of its own, as proc.Reap requires.
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
	if s.prepare != nil {
		s.prepare(cmd)
	}

	if err := proc.Start(cmd, cmd.Start); err != nil {
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

	return &process{Child: proc.Reap("pipe", cmd), stdin: inW, in: proc.NewTryWriter(inW), out: outR, lent: proc.NewLentReader(outR, nil), errOut: errR}, nil
}

// process is one child on pipes. The embedded Child gives Wait, Pid and
// Signal (to the child's process group).
type process struct {
	*proc.Child
	stdin *os.File
	in    *proc.TryWriter // the writes to stdin that never wait
	out   *os.File
	lent  *proc.LentReader // the pump's reads of out
	// errOut is standard error when the spec kept it apart; nil otherwise.
	errOut *os.File

	closeInputOnce sync.Once
	closeInputErr  error
	closeOnce      sync.Once
	closeErr       error

	mu         sync.Mutex
	cols, rows uint16
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
func (p *process) Write(b []byte) (int, error) {
	n, err := p.stdin.Write(b)
	return n, gone.Wrap(err)
}

var _ ports.InputTrier = (*process)(nil)

// TryWrite sends what of b the input pipe takes now.
func (p *process) TryWrite(b []byte) (int, error) {
	n, err := p.in.TryWrite(b)
	return n, gone.Wrap(err)
}

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
		p.lent.Closing()
		p.closeErr = errors.Join(inErr, p.out.Close(), errErr)
	})
	return p.closeErr
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

// ReadLent reads output into a buffer borrowed only once there is output,
// so an idle terminal holds none.
func (p *process) ReadLent(lend func() []byte, giveBack func([]byte)) ([]byte, int, error) {
	return p.lent.ReadLent(lend, giveBack)
}

var _ ports.QuietParker = (*process)(nil)

// ReadLentQuiet is ReadLent that gives up with ports.ErrQuiet once nothing
// has come for quiet.
func (p *process) ReadLentQuiet(quiet time.Duration, lend func() []byte, giveBack func([]byte)) ([]byte, int, error) {
	return p.lent.ReadLentQuiet(quiet, lend, giveBack)
}

// AwaitOutput calls ready once there is output, its end, or a Close.
func (p *process) AwaitOutput(ready func()) { p.lent.AwaitOutput(ready) }
