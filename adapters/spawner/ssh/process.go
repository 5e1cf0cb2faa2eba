package ssh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/adapters/spawner/internal/gone"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

// Default window size when a spec leaves Cols or Rows at zero.
const (
	DefaultCols = 80
	DefaultRows = 24
)

// inputBufferBytes bounds the input a process holds for its channel: what
// TryWrite takes beyond what the channel's window lets out at once.
const inputBufferBytes = 64 << 10

// maxPreamble bounds what is read while waiting for the start line (a
// remote login script may print before it).
const maxPreamble = 64 << 10

// ExitLost is the exit code of a process whose host connection was lost
// before it reported how it ended (the code ssh(1) uses for the same).
const ExitLost = 255

// Spawn starts spec.Program on the host, in spec.Dir (the remote user's
// home when empty), with spec.Env set over the environment the SSH server
// gives a session (so SSH_CONNECTION, HOME and the like are the remote
// machine's). The remote login shell must be a POSIX shell (sh, bash, zsh,
// dash, ksh); it runs the start script. ctx bounds the dial and the start.
func (s *Spawner) Spawn(ctx context.Context, spec ports.SpawnSpec) (ports.Process, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, fmt.Errorf("ssh %s: spawn %q: %w", s.cfg.Name, spec.Program, err)
	}
	if spec.Confine != nil {
		return nil, fmt.Errorf("ssh %s: spawn %q: %w; confinement is for this machine only", s.cfg.Name, spec.Program, ports.ErrCannotConfine)
	}
	marker := newMarker()
	script, err := startScript(spec, marker)
	if err != nil {
		return nil, fmt.Errorf("ssh %s: spawn %q: %w", s.cfg.Name, spec.Program, err)
	}
	c, err := s.conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("ssh %s: spawn %q: %w", s.cfg.Name, spec.Program, err)
	}
	ch, reqs, err := s.openSession(ctx, c)
	if err != nil {
		var oe *xssh.OpenChannelError
		if errors.As(err, &oe) {
			return nil, fmt.Errorf("ssh %s: spawn %q: the server refused a new session (%v) on each of %d connections; an OpenSSH server allows MaxSessions (10 by default) per connection, raise it in its sshd_config", s.cfg.Name, spec.Program, oe, MaxConnections)
		}
		return nil, fmt.Errorf("ssh %s: spawn %q: %w", s.cfg.Name, spec.Program, err)
	}
	p := &process{
		spawner: s, ch: ch, pty: spec.PTY, host: s.cfg.Name,
		exited: make(chan struct{}), requestsDone: make(chan struct{}),
	}
	p.inCond = sync.NewCond(&p.inMu)
	s.countSession(1)
	go p.handleRequests(reqs)

	fail := func(err error) (ports.Process, error) {
		_ = ch.Close()
		<-p.requestsDone
		return nil, fmt.Errorf("ssh %s: spawn %q: %w", s.cfg.Name, spec.Program, err)
	}
	// A done ctx closes the channel, which ends any wait below.
	stop := context.AfterFunc(ctx, func() { _ = ch.Close() })
	defer stop()
	if spec.PTY {
		cols, rows := spec.Cols, spec.Rows
		if cols == 0 {
			cols = DefaultCols
		}
		if rows == 0 {
			rows = DefaultRows
		}
		term := "xterm-256color"
		for _, kv := range spec.Env {
			if v, ok := strings.CutPrefix(kv, "TERM="); ok {
				term = v
			}
		}
		p.cols, p.rows = cols, rows
		ok, err := ch.SendRequest("pty-req", true, xssh.Marshal(ptyRequest{
			Term: term, Columns: uint32(cols), Rows: uint32(rows), Modes: ttyModes(),
		}))
		if err != nil || !ok {
			return fail(fmt.Errorf("the server refused a pty (%v)", err))
		}
	}
	ok, err := ch.SendRequest("exec", true, xssh.Marshal(execRequest{Command: script}))
	if err != nil || !ok {
		return fail(fmt.Errorf("the server refused to run a command (%v)", err))
	}
	pid, pre, err := readStart(ch, marker)
	if ctxErr := context.Cause(ctx); ctxErr != nil {
		return fail(fmt.Errorf("%w (%v)", ctxErr, err))
	}
	if err != nil {
		return fail(err)
	}
	p.pid, p.preamble = pid, pre
	if spec.SeparateStderr && !spec.PTY {
		p.stderr = ch.Stderr()
	}
	return p, nil
}

type ptyRequest struct {
	Term          string
	Columns, Rows uint32
	Width, Height uint32
	Modes         string
}

type execRequest struct{ Command string }

type windowChange struct {
	Columns, Rows uint32
	Width, Height uint32
}

type signalRequest struct{ Signal string }

type exitStatus struct{ Status uint32 }

type exitSignal struct {
	Signal     string
	CoreDumped bool
	Error      string
	Lang       string
}

// ttyModes are the modes a local pty starts with that matter to a shell
// (RFC 4254 section 8): echo, canonical input, signals from ^C/^Z/^\, and
// ^D as end of file.
func ttyModes() string {
	modes := []struct {
		op  byte
		val uint32
	}{
		{xssh.VINTR, 3}, {xssh.VQUIT, 28}, {xssh.VERASE, 127}, {xssh.VEOF, 4}, {xssh.VSUSP, 26},
		{xssh.ECHO, 1}, {xssh.ICANON, 1}, {xssh.ISIG, 1}, {xssh.ICRNL, 1}, {xssh.OPOST, 1}, {xssh.ONLCR, 1},
	}
	var b []byte
	for _, m := range modes {
		b = append(b, m.op, byte(m.val>>24), byte(m.val>>16), byte(m.val>>8), byte(m.val))
	}
	return string(append(b, 0)) // TTY_OP_END
}

// readStart reads the channel until the start script's line: "<marker> ok
// <pid>" or "<marker> error <why>". What came before it (a login script's
// output) is returned to be read first.
func readStart(ch io.Reader, marker string) (int, []byte, error) {
	var got []byte
	buf := make([]byte, 4096)
	for {
		if i := bytes.Index(got, []byte(marker+" ")); i >= 0 {
			if j := bytes.IndexByte(got[i:], '\n'); j >= 0 {
				line := strings.TrimRight(string(got[i+len(marker)+1:i+j]), "\r")
				rest := got[i+j+1:]
				pre := append(got[:i:i], rest...)
				verdict, detail, _ := strings.Cut(line, " ")
				if verdict == "ok" {
					pid, err := strconv.Atoi(detail)
					if err != nil || pid <= 0 {
						return 0, nil, fmt.Errorf("the start script reported pid %q", detail)
					}
					return pid, pre, nil
				}
				return 0, nil, errors.New(detail)
			}
		}
		if len(got) > maxPreamble {
			return 0, nil, fmt.Errorf("no start line in the first %d bytes of output: %q", maxPreamble, tail(got))
		}
		n, err := ch.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil && !bytes.Contains(got, []byte(marker+" ")) {
			return 0, nil, fmt.Errorf("the command ended before it started (is the remote login shell a POSIX shell?): %q", tail(got))
		}
	}
}

func tail(b []byte) string {
	if len(b) > 200 {
		b = b[len(b)-200:]
	}
	return string(b)
}

// process is one remote process on its own session channel.
type process struct {
	spawner *Spawner
	ch      xssh.Channel
	pty     bool
	host    string
	pid     int
	stderr  io.Reader

	readMu   sync.Mutex
	preamble []byte
	lostNote []byte // said once after the output of a process whose connection was lost

	inMu      sync.Mutex
	inCond    *sync.Cond
	inBuf     []byte
	inEOF     bool // CloseInput asked for; sent once inBuf is out
	inSending bool // the sender goroutine runs
	inClosed  bool
	inErr     error

	sizeMu     sync.Mutex
	cols, rows uint16

	exited       chan struct{}
	requestsDone chan struct{}
	exitOnce     sync.Once
	status       terminal.ExitStatus

	closeOnce sync.Once
}

// handleRequests takes the server's requests on the channel: the exit
// status or signal. The channel's end without either is a lost connection.
func (p *process) handleRequests(reqs <-chan *xssh.Request) {
	defer close(p.requestsDone)
	defer p.spawner.countSession(-1)
	for r := range reqs {
		switch r.Type {
		case "exit-status":
			var st exitStatus
			if xssh.Unmarshal(r.Payload, &st) == nil {
				p.exit(terminal.ExitedWith(int(st.Status)))
			}
		case "exit-signal":
			var sig exitSignal
			if xssh.Unmarshal(r.Payload, &sig) == nil {
				p.exit(terminal.KilledBy("SIG" + sig.Signal))
			}
		}
		if r.WantReply {
			_ = r.Reply(false, nil)
		}
	}
	// The connection may have gone with the channel: the host is marked
	// down, if so, before the end is told, so that no one is told of the
	// loss while the host still shows as up.
	select {
	case <-p.exited:
		return // it told its end
	default:
	}
	p.spawner.confirmUp()
	p.exitOnce.Do(func() {
		p.status = terminal.ExitedWith(ExitLost)
		p.readMu.Lock()
		why := p.spawner.Health().LastError
		if why == "" {
			why = "the channel closed without an exit status"
		}
		nl := "\n"
		if p.pty {
			nl = "\r\n"
		}
		p.lostNote = []byte(nl + "shellgate: lost the connection to host " + p.host + " (" + why + "); the command's end is unknown" + nl)
		p.readMu.Unlock()
		close(p.exited)
	})
}

func (p *process) exit(st terminal.ExitStatus) {
	p.exitOnce.Do(func() {
		p.status = st
		close(p.exited)
	})
}

// Read returns the process's output: what came before its start line,
// then the channel's data; after a lost connection, a line that says so.
func (p *process) Read(b []byte) (int, error) {
	p.readMu.Lock()
	if len(p.preamble) > 0 {
		n := copy(b, p.preamble)
		p.preamble = p.preamble[n:]
		p.readMu.Unlock()
		return n, nil
	}
	p.readMu.Unlock()
	n, err := p.ch.Read(b)
	if errors.Is(err, io.EOF) && n == 0 {
		// The note is known once the channel's requests have ended, which
		// is no later than its data.
		<-p.requestsDone
		p.readMu.Lock()
		defer p.readMu.Unlock()
		if len(p.lostNote) > 0 {
			n = copy(b, p.lostNote)
			p.lostNote = p.lostNote[n:]
			return n, nil
		}
	}
	return n, err
}

var _ ports.StderrSource = (*process)(nil)

// Stderr is standard error when the spec kept it apart, on pipes.
func (p *process) Stderr() io.Reader { return p.stderr }

var _ ports.InputTrier = (*process)(nil)

// Write sends all of b, waiting while the input buffer is full.
func (p *process) Write(b []byte) (int, error) {
	p.inMu.Lock()
	defer p.inMu.Unlock()
	done := 0
	for done < len(b) {
		if err := p.inputErrLocked(); err != nil {
			return done, p.inputGone(err)
		}
		n := p.enqueueLocked(b[done:])
		done += n
		if n == 0 {
			p.inCond.Wait()
		}
	}
	return done, nil
}

// TryWrite takes what of b the input buffer has room for now.
func (p *process) TryWrite(b []byte) (int, error) {
	p.inMu.Lock()
	defer p.inMu.Unlock()
	if err := p.inputErrLocked(); err != nil {
		return 0, p.inputGone(err)
	}
	return p.enqueueLocked(b), nil
}

// inputGone is an input error in the core's terms: the server closing the
// channel's input (EOF) or the process having exited means it takes no
// more, which matches ports.ErrProcessGone.
func (p *process) inputGone(err error) error {
	if errors.Is(err, io.EOF) || isDone(p.exited) {
		return gone.Mark(err)
	}
	return gone.Wrap(err)
}

func (p *process) inputErrLocked() error {
	switch {
	case p.inErr != nil:
		return p.inErr
	case p.inClosed:
		return os.ErrClosed
	case p.inEOF:
		return errors.New("ssh: the process's input is closed")
	}
	return nil
}

func (p *process) enqueueLocked(b []byte) int {
	n := min(len(b), inputBufferBytes-len(p.inBuf))
	if n <= 0 {
		return 0
	}
	p.inBuf = append(p.inBuf, b[:n]...)
	p.startSenderLocked()
	return n
}

// startSenderLocked starts the goroutine that moves the input buffer into
// the channel, where a write waits on the remote window; it runs only
// while there is something to send.
func (p *process) startSenderLocked() {
	if p.inSending {
		return
	}
	p.inSending = true
	go p.send()
}

func (p *process) send() {
	p.inMu.Lock()
	defer p.inMu.Unlock()
	for {
		switch {
		case p.inErr != nil || p.inClosed:
			p.inBuf = nil
		case len(p.inBuf) > 0:
			chunk := p.inBuf[:min(len(p.inBuf), 32<<10)]
			p.inMu.Unlock()
			n, err := p.ch.Write(chunk)
			p.inMu.Lock()
			p.inBuf = p.inBuf[n:]
			if len(p.inBuf) == 0 {
				p.inBuf = nil
			}
			if err != nil {
				p.inErr = fmt.Errorf("ssh: write to the process: %w", err)
			}
			p.inCond.Broadcast()
			continue
		case p.inEOF:
			if err := p.ch.CloseWrite(); err != nil && p.inErr == nil {
				p.inErr = err
			}
		}
		p.inSending = false
		p.inCond.Broadcast()
		return
	}
}

// CloseInput ends the input once what was written is out; under a pty it
// types ^D instead, as a person would.
func (p *process) CloseInput() error {
	if p.pty {
		n, err := p.TryWrite([]byte{4})
		if err == nil && n == 0 {
			err = errors.New("ssh: the terminal's input is full (its program is not reading); end of input not typed")
		}
		return err
	}
	p.inMu.Lock()
	defer p.inMu.Unlock()
	if p.inEOF || p.inClosed {
		return nil
	}
	p.inEOF = true
	if len(p.inBuf) == 0 && !p.inSending {
		p.startSenderLocked()
	}
	return nil
}

// Resize sends window-change under a pty; on pipes it only records.
func (p *process) Resize(cols, rows uint16) error {
	p.sizeMu.Lock()
	p.cols, p.rows = cols, rows
	p.sizeMu.Unlock()
	if !p.pty {
		return nil
	}
	if _, err := p.ch.SendRequest("window-change", false, xssh.Marshal(windowChange{Columns: uint32(cols), Rows: uint32(rows)})); err != nil {
		return fmt.Errorf("ssh %s: resize to %dx%d: %w", p.host, cols, rows, err)
	}
	return nil
}

// rfcSignals are the signals RFC 4254 lets a `signal` request name.
var rfcSignals = map[syscall.Signal]string{
	unix.SIGABRT: "ABRT", unix.SIGALRM: "ALRM", unix.SIGFPE: "FPE", unix.SIGHUP: "HUP",
	unix.SIGILL: "ILL", unix.SIGINT: "INT", unix.SIGKILL: "KILL", unix.SIGPIPE: "PIPE",
	unix.SIGQUIT: "QUIT", unix.SIGSEGV: "SEGV", unix.SIGTERM: "TERM", unix.SIGUSR1: "USR1",
	unix.SIGUSR2: "USR2",
}

// Signal sends sig to the process's group on the host: a `signal` request
// where the protocol has the signal (OpenSSH delivers it with killpg), else
// kill(1) run over a second session. Where neither works and the signal
// should end the process, the channel is closed (the server then hangs up
// a pty, or closes the pipes) and the error says so.
func (p *process) Signal(sig syscall.Signal) error {
	if isDone(p.exited) {
		return fmt.Errorf("ssh %s: %s to process group %d: %w", p.host, unix.SignalName(sig), p.pid, os.ErrProcessDone)
	}
	if name, ok := rfcSignals[sig]; ok {
		if ok, err := p.ch.SendRequest("signal", true, xssh.Marshal(signalRequest{Signal: name})); err == nil && ok {
			return nil
		}
	}
	err := p.spawner.killGroup(p.pid, sig)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, os.ErrProcessDone):
		return fmt.Errorf("ssh %s: %s to process group %d: %w", p.host, unix.SignalName(sig), p.pid, err)
	}
	if isDone(p.exited) {
		return fmt.Errorf("ssh %s: %s to process group %d: %w", p.host, unix.SignalName(sig), p.pid, os.ErrProcessDone)
	}
	switch sig {
	case unix.SIGKILL, unix.SIGTERM, unix.SIGHUP, unix.SIGINT:
		_ = p.ch.Close()
		return fmt.Errorf("ssh %s: the server took neither a signal request nor kill(1) for %s (%v); the session was closed instead, which ends the process only if it reads its input or terminal", p.host, unix.SignalName(sig), err)
	}
	return fmt.Errorf("ssh %s: %s to process group %d: %w", p.host, unix.SignalName(sig), p.pid, err)
}

// Interrupt sends SIGINT to the group on the host.
func (p *process) Interrupt() error { return gone.Wrap(p.Signal(unix.SIGINT)) }

// Terminate sends SIGTERM to the group on the host.
func (p *process) Terminate() error { return gone.Wrap(p.Signal(unix.SIGTERM)) }

// Kill sends SIGKILL to the group on the host.
func (p *process) Kill() error { return gone.Wrap(p.Signal(unix.SIGKILL)) }

// killGroup runs kill(1) on the host for pgid; os.ErrProcessDone when the
// group is gone.
func (s *Spawner) killGroup(pgid int, sig syscall.Signal) error {
	name := strings.TrimPrefix(unix.SignalName(sig), "SIG")
	if name == "" || pgid <= 0 {
		return fmt.Errorf("no signal name for %d", sig)
	}
	c, err := s.conn(s.life)
	if err != nil {
		return err
	}
	sess, err := c.NewSession()
	if err != nil {
		return err
	}
	defer sess.Close()
	// Exit 3: nothing is left in the group to signal.
	cmd := fmt.Sprintf("kill -s %s -- -%d 2>/dev/null || { kill -0 -- -%d 2>/dev/null && exit 1; exit 3; }", name, pgid, pgid)
	err = sess.Run(cmd)
	var exit *xssh.ExitError
	if errors.As(err, &exit) && exit.ExitStatus() == 3 {
		return os.ErrProcessDone
	}
	return err
}

// Wait returns the exit status once the server reported it (or the
// connection was lost).
func (p *process) Wait() terminal.ExitStatus {
	<-p.exited
	return p.status
}

// Pid is the process's pid on its host (also its process group id there);
// it means nothing on this machine.
func (p *process) Pid() int { return p.pid }

// IsPTY reports whether the process runs under a pty.
func (p *process) IsPTY() bool { return p.pty }

// Close closes the channel; a Read in progress then ends.
func (p *process) Close() error {
	p.closeOnce.Do(func() {
		p.inMu.Lock()
		p.inClosed = true
		p.inCond.Broadcast()
		p.inMu.Unlock()
		_ = p.ch.Close()
	})
	return nil
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
