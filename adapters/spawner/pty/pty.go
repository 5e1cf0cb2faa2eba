// Package pty implements ports.Spawner with github.com/creack/pty: the child
// leads a new session whose controlling terminal is a fresh pseudoterminal,
// and the daemon reads and writes the master side.
package pty

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

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/adapters/spawner/internal/gone"
	"github.com/shellgate/shellgate/adapters/spawner/internal/proc"
	"github.com/shellgate/shellgate/ports"
)

// Default window size when a spec leaves Cols or Rows at zero.
const (
	DefaultCols = 80
	DefaultRows = 24
)

// Spawner starts processes under a pseudoterminal. The zero value is ready
// to use.
type Spawner struct {
	prepare func(*exec.Cmd)
}

var _ ports.Spawner = (*Spawner)(nil)

// New returns a pty spawner.
func New() *Spawner { return &Spawner{} }

// NewPrepared returns a pty spawner that hands each command to prepare just
// before it starts, with its session attributes set, so that a confining
// spawner (adapters/spawner/sandbox) can add namespaces and descriptors.
// prepare must leave the standard streams alone.
func NewPrepared(prepare func(*exec.Cmd)) *Spawner { return &Spawner{prepare: prepare} }

// Spawn starts spec.Program in a new session on a new pty of spec.Cols x
// spec.Rows (80x24 where zero). ctx only bounds the start. spec.Env is the
// child's complete environment (nil means an empty one); set TERM in it, the
// spawner adds nothing. A spec asking for pipes is refused: that is the pipe
// spawner's job.
func (s *Spawner) Spawn(ctx context.Context, spec ports.SpawnSpec) (ports.Process, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, fmt.Errorf("pty: spawn %q: %w", spec.Program, err)
	}
	if spec.Confine != nil {
		return nil, fmt.Errorf("pty: spawn %q: %w; wrap the spawner in adapters/spawner/sandbox", spec.Program, ports.ErrCannotConfine)
	}
	if !spec.PTY {
		return nil, fmt.Errorf("pty: spawn %q: the spec asks for pipes; use the pipe spawner", spec.Program)
	}
	cols, rows := spec.Cols, spec.Rows
	if cols == 0 {
		cols = DefaultCols
	}
	if rows == 0 {
		rows = DefaultRows
	}

	cmd := proc.Command(spec)
	// A new session makes the child's pid its process group id, and the pty
	// (its stdin, fd 0) its controlling terminal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if s.prepare != nil {
		s.prepare(cmd)
	}
	// creack/pty hands the child the terminal's *os.File for every stream and
	// closes it after the start, as proc.Reap requires.
	var blocking *os.File
	err := proc.Start(cmd, func() (err error) {
		blocking, err = pty.StartWithAttrs(cmd, &pty.Winsize{Cols: cols, Rows: rows}, cmd.SysProcAttr)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("pty: spawn %q in %q: %w", spec.Program, spec.Dir, err)
	}
	child := proc.Reap("pty", cmd)
	master, err := pollable(blocking)
	if err != nil {
		// The child is running but unreachable; end it rather than leak it.
		_ = child.Signal(unix.SIGKILL)
		child.Wait()
		return nil, fmt.Errorf("pty: spawn %q: %w", spec.Program, err)
	}
	return &process{Child: child, master: master, out: proc.NewLentReader(master, isEIO), in: proc.NewTryWriter(master)}, nil
}

// pollable swaps f for a non-blocking descriptor of the same pty master.
// creack/pty calls Fd() while opening the master, which puts it in blocking
// mode for good; a blocking Read would then survive Close and pin its
// goroutine until the child writes or exits. The non-blocking copy goes
// through Go's poller, so Close interrupts a pending Read.
func pollable(f *os.File) (*os.File, error) {
	defer func() { _ = f.Close() }()
	var (
		fd    int
		dupEr error
	)
	raw, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	if err := raw.Control(func(old uintptr) {
		fd, dupEr = unix.FcntlInt(old, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return nil, err
	}
	if dupEr != nil {
		return nil, fmt.Errorf("dup pty master: %w", dupEr)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("pty master non-blocking: %w", err)
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// process is one child under a pty. The embedded Child gives Wait, Pid
// (also the session id) and Signal (to the child's process group).
type process struct {
	*proc.Child
	master *os.File
	out    *proc.LentReader // the pump's reads of master
	in     *proc.TryWriter  // typed input's writes to master

	closeOnce sync.Once
	closeErr  error
}

// Read returns what the child wrote to the terminal. The master reports EIO
// once every holder of the pty's other end has closed it; that is the end of
// output, so it reads as io.EOF.
func (p *process) Read(b []byte) (int, error) {
	n, err := p.master.Read(b)
	if errors.Is(err, syscall.EIO) {
		err = io.EOF
	}
	return n, err
}

// Write types b into the terminal.
func (p *process) Write(b []byte) (int, error) {
	n, err := p.master.Write(b)
	return n, gone.Wrap(err)
}

var _ ports.InputTrier = (*process)(nil)

// TryWrite types what of b the terminal's input buffer takes now.
func (p *process) TryWrite(b []byte) (int, error) {
	n, err := p.in.TryWrite(b)
	return n, gone.Wrap(err)
}

// CloseInput types the terminal's end-of-file character (normally ^D). A pty
// has no input stream to close; this is what a person would do, and it ends
// the input of a program reading lines (canonical mode) at the start of a
// line. A program that put the terminal in raw mode just receives the byte.
// It never waits: when the terminal's input buffer is full (the program is
// not reading) the character is not typed and an error says so.
func (p *process) CloseInput() error {
	eof := byte(4)
	raw, err := p.master.SyscallConn()
	if err != nil {
		return err
	}
	// The master reports the termios of the terminal's other end.
	_ = raw.Control(func(fd uintptr) {
		if t, err := unix.IoctlGetTermios(int(fd), getTermios); err == nil && t.Cc[unix.VEOF] != 0 {
			eof = t.Cc[unix.VEOF]
		}
	})
	n, err := p.in.TryWrite([]byte{eof})
	if err == nil && n == 0 {
		err = errInputFull
	}
	return err
}

var errInputFull = errors.New("pty: the terminal's input is full (its program is not reading); end of input not typed")

// Resize sets the window size; the kernel sends SIGWINCH to the terminal's
// foreground process group.
func (p *process) Resize(cols, rows uint16) error {
	raw, err := p.master.SyscallConn()
	if err != nil {
		return err
	}
	var ioErr error
	// Not pty.Setsize: it goes through Fd(), which would make the master
	// blocking again (see pollable).
	if err := raw.Control(func(fd uintptr) {
		ioErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Col: cols, Row: rows})
	}); err != nil {
		return err
	}
	if ioErr != nil {
		return fmt.Errorf("pty: resize to %dx%d: %w", cols, rows, ioErr)
	}
	return nil
}

// IsPTY is true.
func (p *process) IsPTY() bool { return true }

// Close closes the master. If the child still runs, the kernel hangs up its
// terminal (SIGHUP to the foreground group); Close itself signals nothing.
func (p *process) Close() error {
	p.closeOnce.Do(func() {
		p.out.Closing()
		p.closeErr = p.master.Close()
	})
	return p.closeErr
}

// ReadLent reads output into a buffer borrowed only once there is output,
// so an idle terminal holds none.
func (p *process) ReadLent(lend func() []byte, giveBack func([]byte)) ([]byte, int, error) {
	return p.out.ReadLent(lend, giveBack)
}

var _ ports.QuietParker = (*process)(nil)

// ReadLentQuiet is ReadLent that gives up with ports.ErrQuiet once nothing
// has come for quiet.
func (p *process) ReadLentQuiet(quiet time.Duration, lend func() []byte, giveBack func([]byte)) ([]byte, int, error) {
	return p.out.ReadLentQuiet(quiet, lend, giveBack)
}

// AwaitOutput calls ready once there is output, its end, or a Close.
func (p *process) AwaitOutput(ready func()) { p.out.AwaitOutput(ready) }

func isEIO(err error) bool { return errors.Is(err, syscall.EIO) }
