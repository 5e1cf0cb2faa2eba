// Package ports holds the interfaces the core needs from the outside world and
// the plain data types that cross them. Nothing else lives here.
package ports

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/shellgate/shellgate/domain/terminal"
)

// ErrNoProcess is returned by Process's Interrupt, Terminate and Kill when
// the process has no pid to signal (it never started). Signalling group 0
// would hit the daemon itself.
var ErrNoProcess = errors.New("the process has no pid to signal")

// ErrProcessGone is matched (errors.Is) by the error of a write to, or a
// signal for, a process that has already exited or whose input was
// closed: input typed then is dropped, not an error worth reporting. Each
// spawner translates its own errors (EPIPE, EIO, ESRCH…) into it.
var ErrProcessGone = errors.New("the process has exited")

// MainHost is the name that always means this machine.
const MainHost = "main"

// SpawnSpec says what to start and how. Program and Args are the exact argv;
// quoting a caller's command into a shell line is the terminal host's job.
type SpawnSpec struct {
	// Host names the machine the process runs on: empty or MainHost for
	// this one, otherwise a host of the daemon's configuration, reached over
	// SSH. On another machine Dir and Program are that machine's, and Env
	// is set over the environment its SSH server gives a session.
	Host string
	// Program is the executable (a path, or a name resolved through PATH).
	Program string
	// Args are the arguments after the program name.
	Args []string
	// Dir is the working directory; empty means the daemon's own.
	Dir string
	// Env is the complete environment of the child.
	Env []string
	// PTY asks for a pseudoterminal instead of pipes.
	PTY bool
	// Cols and Rows are the initial window size (used under a pty).
	Cols, Rows uint16
	// SeparateStderr keeps the child's standard error apart from its
	// standard output: Read then returns standard output alone and the
	// process hands out standard error through StderrSource. It is honoured
	// on pipes only; under a pty both streams are the terminal and it is
	// ignored.
	SeparateStderr bool
	// Confine, when set, runs the process confined (see Confinement). A
	// spawner that cannot confine refuses the spec with ErrCannotConfine.
	Confine *Confinement
	// Files, for another machine only, are written there (by relative
	// path, mode 0600) into a fresh private directory before the process
	// starts; FilesDir in Args and Env stands for that directory's path.
	// It is how the shell integration's scripts reach a remote shell.
	Files map[string]string
}

// FilesDir stands for the directory SpawnSpec.Files were written to.
const FilesDir = "\x00shellgate-files\x00"

// Spawner starts processes. Every implementation passes the contract suite in
// adapters/spawner/contract.
type Spawner interface {
	// Spawn starts the process. An error means nothing is running: no pid, no
	// output, nothing to wait for.
	Spawn(ctx context.Context, spec SpawnSpec) (Process, error)
}

// Process is one running child and its whole process group.
type Process interface {
	// Read returns merged output (stdout and stderr on pipes, or stdout
	// alone when the spec asked for SeparateStderr; the terminal on a pty).
	// It returns io.EOF once all output has drained, which may be later
	// than the process's own exit when a background job holds the pipe.
	io.Reader
	// Write sends bytes to the child's standard input (or the pty); once
	// the child has exited or its input is closed the error matches
	// ErrProcessGone.
	io.Writer
	// CloseInput closes the child's standard input (under a pty: types its
	// end-of-file character). It never waits on the child.
	CloseInput() error
	// Resize changes the window size. On pipes it records nothing and succeeds.
	Resize(cols, rows uint16) error
	// Interrupt asks the child's whole process group to stop what it is
	// doing, as ^C at a terminal does (SIGINT).
	Interrupt() error
	// Terminate asks the whole group to end (SIGTERM): it may clean up
	// first, or refuse.
	Terminate() error
	// Kill ends the whole group at once (SIGKILL).
	//
	// For all three, a group that has already ended gives an error
	// matching ErrProcessGone, and a process that never started
	// ErrNoProcess.
	Kill() error
	// Wait blocks until the process has exited and returns its status. It is
	// safe to call more than once and from several goroutines.
	Wait() terminal.ExitStatus
	// Pid is the child's pid (and its process group id); 0 if it has none.
	Pid() int
	// IsPTY reports whether the process runs under a pseudoterminal.
	IsPTY() bool
	// Close releases the process's descriptors. Call after Read returned EOF
	// or the process was killed; it does not signal anything.
	Close() error
}

// StderrSource is implemented by a Process that can hand out its standard
// error apart from Read's stream (see SpawnSpec.SeparateStderr).
type StderrSource interface {
	// Stderr returns the child's standard error, read like Read until
	// io.EOF; nil when it is not kept apart, so everything arrives through
	// Read. Close releases it with the rest of the process.
	Stderr() io.Reader
}

// InputTrier is implemented by a Process whose input can be written without
// waiting: TryWrite writes what the child's input takes now (its pipe or
// pty buffer) and returns how much; a full buffer is a short count, not an
// error. A caller holding a connection uses it so that a child that does not
// read its input never holds that connection up.
type InputTrier interface {
	TryWrite(b []byte) (int, error)
}

// BufferLender is implemented by a Process that can read into a buffer it
// borrows only once output is there: ReadLent waits (holding no buffer),
// then takes one with lend, reads into it and returns it with the count; on
// an error no buffer is returned. An idle terminal's reader then holds none.
// It returns io.EOF at the end of output, as Read does.
type BufferLender interface {
	ReadLent(lend func() []byte, giveBack func([]byte)) (buf []byte, n int, err error)
}

// QuietParker is implemented by a BufferLender whose reader need not keep a
// goroutine while the process writes nothing. ReadLentQuiet is ReadLent
// that gives up once quiet has passed with nothing to read, returning
// ErrQuiet and no buffer; AwaitOutput then calls ready once, when there is
// output to read, the output has ended, or the process is being closed.
// ready may run on any goroutine, the caller's included, and must not
// block. The reader's goroutine can end in between, and an idle terminal
// holds no stack. quiet is wall-clock time, kept by the kernel's and the
// runtime's timers.
type QuietParker interface {
	BufferLender
	ReadLentQuiet(quiet time.Duration, lend func() []byte, giveBack func([]byte)) (buf []byte, n int, err error)
	AwaitOutput(ready func())
}

// ErrQuiet is ReadLentQuiet's error when no output came within its quiet
// time.
var ErrQuiet = errors.New("no output within the quiet time")
