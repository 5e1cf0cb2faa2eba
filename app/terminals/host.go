// Package terminals is the terminal host: it opens shells as channels, pumps
// their output into the hub, routes input, resize, claim, rename and clear,
// and ends them. It knows nothing of JSON or WebSocket.
package terminals

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

// RootChannel is the channel that lists every terminal.
const RootChannel = "ahp-root://"

// Errors a caller maps to its wire.
var (
	// ErrBadURI: the channel is not a terminal URI.
	ErrBadURI = errors.New("is not a terminal URI")
	// ErrExists: a terminal already holds the URI.
	ErrExists = errors.New("already exists")
	// ErrReservedURI: the URI is in a space the host keeps for other channels.
	ErrReservedURI = errors.New("is a name this host keeps for its own channels")
	// ErrNotFound: no terminal at the URI.
	ErrNotFound = errors.New("no terminal")
	// ErrClosing: the host is stopping and starts nothing new.
	ErrClosing = errors.New("This host is closing, so nothing new starts on it")
)

// Config is the host's fixed setting.
type Config struct {
	// Shell is the daemon's shell; empty means $SHELL from Env, else /bin/sh.
	Shell string
	// Env is the daemon's environment, the base of every terminal's.
	Env []string
	// Dir is the host's own directory, used when a terminal names none.
	Dir string
	// ScrollbackLimit bounds each terminal's scrollback in characters.
	ScrollbackLimit int
	// StopGrace is how long Stop waits after SIGTERM before SIGKILL.
	StopGrace time.Duration
	// ReadBufferSize is the pump's read size per terminal.
	ReadBufferSize int
	// Integration, when set, makes an interactive bash or zsh under a pty
	// report its command boundaries. Marks are read from every pty terminal
	// either way; pipes never have any.
	Integration ports.ShellIntegration
	// PassMarks leaves shell-integration marks in pty output as plain
	// output: no command detection. For measuring, and for programs whose
	// output is about such marks.
	PassMarks bool
	// Screens, when set, keeps a screen model of a pty terminal while its
	// program shows the alternate screen, which its snapshot carries for
	// viewers to draw.
	Screens ports.Screens
}

// Defaults.
const (
	DefaultStopGrace      = 5 * time.Second
	DefaultReadBufferSize = 8 << 10
)

// Host owns every live terminal.
type Host struct {
	cfg     Config
	hub     *hub.Hub
	spawner ports.Spawner
	clock   ports.Clock

	// Guarded by the hub's lock (every change goes through hub.Update).
	terms   map[string]*Terminal
	nextID  uint64
	closing bool

	pumps   sync.WaitGroup
	buffers bufferPool
}

// New returns a host with no terminals.
func New(cfg Config, h *hub.Hub, sp ports.Spawner, clock ports.Clock) *Host {
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = DefaultStopGrace
	}
	if cfg.ReadBufferSize <= 0 {
		cfg.ReadBufferSize = DefaultReadBufferSize
	}
	if cfg.Shell == "" {
		cfg.Shell = lookupEnv(cfg.Env, "SHELL")
	}
	if cfg.Shell == "" {
		cfg.Shell = "/bin/sh"
	}
	host := &Host{cfg: cfg, hub: h, spawner: sp, clock: clock, terms: make(map[string]*Terminal)}
	host.buffers.size = cfg.ReadBufferSize
	h.Update(func(tx hub.Tx) { tx.Open(RootChannel) })
	return host
}

// Hub is the hub the host publishes into.
func (h *Host) Hub() *hub.Hub { return h.hub }

// Spec says what terminal to open.
type Spec struct {
	// URI is the channel, chosen by the caller (e.g. "ahp-terminal:/<uuid>").
	URI string
	// Name is the title; empty means the shell's basename.
	Name string
	// CWD is a file: URI or an absolute path; empty means the host's own.
	CWD string
	// Cols and Rows are the initial size; 0 means 80×24.
	Cols, Rows int
	// Claim is the initial owner.
	Claim terminal.Claim
	// Shell overrides the daemon's shell (a connection's defaultShell).
	Shell string
	// Command, when set, runs once and the terminal exits with it. Without
	// Args it is a shell line passed as-is to -c; with Args it names a
	// program and each argument is quoted word by word.
	Command string
	Args    []string
	// Env holds the caller's variables ("K=V"), layered over the daemon's.
	Env []string
	// PTY runs the terminal under a pseudoterminal instead of pipes.
	PTY bool
	// NoInput ends the process's input as soon as it starts (ports.Process
	// CloseInput): a terminal nobody types into, whose program must read
	// end of input at once rather than wait (cat with no file, a [Y/n]
	// prompt). Input dispatched to it later is dropped.
	NoInput bool
	// OnOutput, when set, is given every chunk of the process's output as it
	// is read, with the stream it came from, before it reaches the
	// scrollback. On pipes it also keeps standard error apart from standard
	// output (ports.SpawnSpec.SeparateStderr), so the tap can tell them
	// apart; the scrollback and every viewer still get both, interleaved as
	// read. Under a pty, or with a spawner that merges the streams,
	// everything is Stdout. Every call has returned before Done is closed;
	// data is valid only during the call.
	OnOutput func(stream Stream, data []byte)
	// Confine runs the process confined (ports.SpawnSpec.Confine); a
	// spawner that cannot confine it makes the terminal one that could not
	// start, never an unconfined one.
	Confine *ports.Confinement
}

// Stream says which of a process's outputs a chunk came from.
type Stream int

// The output streams.
const (
	// Stdout is standard output (and everything, when the streams are merged).
	Stdout Stream = iota + 1
	// Stderr is standard error, when it is kept apart.
	Stderr
)

// Create opens a terminal. A directory that does not exist is not an error:
// the terminal starts, its output says why the shell could not, and it exits
// with 127.
func (h *Host) Create(ctx context.Context, spec Spec) (*Terminal, error) {
	if !isTerminalURI(spec.URI) {
		return nil, fmt.Errorf("%s %w", spec.URI, ErrBadURI)
	}
	dir := h.cfg.Dir
	if spec.CWD != "" {
		p, err := terminal.PathFromURI(spec.CWD)
		if err != nil {
			return nil, fmt.Errorf("cwd %q is %w", spec.CWD, err)
		}
		dir = p
	}
	shell := spec.Shell
	if shell == "" {
		shell = h.cfg.Shell
	}
	title := spec.Name
	if title == "" {
		title = path.Base(shell)
	}
	cols, rows := sizeOr(spec.Cols, terminal.DefaultCols), sizeOr(spec.Rows, terminal.DefaultRows)

	t := &Terminal{uri: spec.URI, host: h, isPty: spec.PTY, tap: spec.OnOutput, done: make(chan struct{})}
	var err error
	h.hub.Update(func(tx hub.Tx) {
		switch {
		case h.terms[spec.URI] != nil || tx.IsOpen(spec.URI):
			err = fmt.Errorf("%s %w", spec.URI, ErrExists)
		case isReserved(spec.URI):
			err = fmt.Errorf("%s %w", spec.URI, ErrReservedURI)
		case spec.Claim.Validate() != nil:
			err = terminal.ErrNotAClaim
		case h.closing:
			err = ErrClosing
		}
		if err != nil {
			return
		}
		h.nextID++
		t.id = h.nextID
		t.state = terminal.New(terminal.Options{
			Title: title, CWD: terminal.URIFromPath(dir), Cols: cols, Rows: rows,
			Claim: spec.Claim, IsPty: spec.PTY, ScrollbackLimit: h.cfg.ScrollbackLimit,
		})
		h.terms[spec.URI] = t
		tx.Open(spec.URI)
		h.pumps.Add(1)
		h.publishList(tx)
	})
	if err != nil {
		return nil, err
	}

	program, args := shell, []string(nil)
	if spec.Command != "" {
		line := spec.Command
		if spec.Args != nil {
			line = quoteArgv(append([]string{spec.Command}, spec.Args...))
		}
		args = []string{"-c", line}
	}
	env := h.environment(spec.Env, spec.PTY, cols, rows)
	if spec.PTY {
		t.title = newTitles(t, h.clock)
		nonce := ""
		if spec.Command == "" && h.cfg.Integration != nil {
			nonce = newNonce()
			withNonce := mergeEnv(env, []string{shellNonceEnv + "=" + nonce})
			if a, e, ok, err := h.cfg.Integration.Prepare(program, args, withNonce); err == nil && ok {
				args, env = a, e
			} else {
				nonce = ""
			}
		}
		if !h.cfg.PassMarks {
			t.marks = newMarkReader(terminal.URIFromPath(dir), nonce)
		}
	}
	proc, spawnErr := h.spawner.Spawn(ctx, ports.SpawnSpec{
		Program: program, Args: args, Dir: dir, PTY: spec.PTY,
		Env:  env,
		Cols: uint16(cols), Rows: uint16(rows),
		SeparateStderr: spec.OnOutput != nil && !spec.PTY,
		Confine:        spec.Confine,
	})
	if spawnErr != nil {
		msg := fmt.Sprintf("shellgate: cannot start %s in %s: %v\n", shell, dir, spawnErr)
		if t.tap != nil {
			t.tap(Stderr, []byte(msg))
		}
		t.output(nil, msg)
		t.startErr = spawnErr
		t.finish(terminal.CouldNotStart())
		return t, nil
	}
	if spec.NoInput {
		_ = proc.CloseInput()
	}
	t.mu.Lock()
	t.proc = proc
	t.mu.Unlock()
	// A dispose or stop that ran while the process was starting could not
	// signal it; do it now.
	var gone bool
	h.hub.Update(func(hub.Tx) { gone = t.removed || h.closing })
	if gone {
		_ = proc.Signal(syscall.SIGKILL)
	}
	go t.pump(h.cfg.ReadBufferSize)
	return t, nil
}

// environment layers the daemon's, then the caller's, then the terminal's
// own TERM, COLUMNS and LINES, which nothing may override.
func (h *Host) environment(callers []string, pty bool, cols, rows int) []string {
	term := "dumb"
	if pty {
		term = lookupEnv(h.cfg.Env, "TERM")
		if term == "" || term == "dumb" {
			term = "xterm-256color"
		}
	}
	return mergeEnv(h.cfg.Env, callers, []string{
		"TERM=" + term, "COLUMNS=" + strconv.Itoa(cols), "LINES=" + strconv.Itoa(rows),
	})
}

// Get returns the terminal at uri.
func (h *Host) Get(uri string) (*Terminal, error) {
	var t *Terminal
	h.hub.Update(func(hub.Tx) { t = h.terms[uri] })
	if t == nil {
		return nil, fmt.Errorf("%w at %s", ErrNotFound, uri)
	}
	return t, nil
}

// Dispose ends the terminal's whole process group with SIGKILL at once and
// removes it from the list; its channel is gone.
func (h *Host) Dispose(uri string) error {
	t, err := h.remove(uri)
	if err != nil {
		return err
	}
	if p := t.process(); p != nil {
		_ = t.input.closeInput(p, t.isPty)
		_ = p.Signal(syscall.SIGKILL)
	}
	return nil
}

func (h *Host) remove(uri string) (*Terminal, error) {
	var t *Terminal
	h.hub.Update(func(tx hub.Tx) {
		t = h.terms[uri]
		if t == nil {
			return
		}
		t.removed = true
		t.dropScreenLocked()
		delete(h.terms, uri)
		tx.Close(uri)
		h.publishList(tx)
	})
	if t == nil {
		return nil, fmt.Errorf("%w at %s", ErrNotFound, uri)
	}
	return t, nil
}

// Stop ends every terminal: SIGTERM to each process group, then SIGKILL to
// whatever is left after the grace period, and waits for every pump. When
// ctx ends first it sends SIGKILL at once and closes every process's output,
// so pumps still held open by a process that left its group (setsid) end
// too, and returns ctx's error. Nothing new starts once Stop has begun.
func (h *Host) Stop(ctx context.Context) error {
	var all []*Terminal
	h.hub.Update(func(hub.Tx) {
		h.closing = true
		for _, t := range h.terms {
			all = append(all, t)
		}
	})
	signalAll := func(sig syscall.Signal) {
		for _, t := range all {
			if p := t.process(); p != nil {
				_ = p.Signal(sig)
			}
		}
	}
	// Every process must drain to its end now, however far behind its
	// viewers are.
	h.hub.StopFlow()
	signalAll(syscall.SIGTERM)
	killer := h.clock.AfterFunc(h.cfg.StopGrace, func() { signalAll(syscall.SIGKILL) })
	defer killer.Stop()

	done := make(chan struct{})
	go func() { h.pumps.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		signalAll(syscall.SIGKILL)
		for _, t := range all {
			if p := t.process(); p != nil {
				_ = p.Close()
			}
		}
		<-done
		return ctx.Err()
	}
}

// Info is one terminal's row in the root list.
type Info struct {
	URI       string
	Title     string
	Claim     terminal.Claim
	Lifecycle terminal.Lifecycle
}

// TerminalsChanged replaces the root list.
type TerminalsChanged struct{ Terminals []Info }

// Type is the protocol's action type.
func (TerminalsChanged) Type() string { return "root/terminalsChanged" }

// SupersedesEarlier: each list replaces the one before it, so the replay
// ring keeps only the newest.
func (TerminalsChanged) SupersedesEarlier() bool { return true }

// EncodedSizeHint estimates the list's size on the wire, so queues and the
// replay ring count a long list for what it weighs.
func (c TerminalsChanged) EncodedSizeHint() int {
	n := 0
	for _, t := range c.Terminals {
		n += 120 + len(t.URI) + len(t.Title) + len(t.Claim.ClientID) + len(t.Claim.Session) + len(t.Claim.Chat)
	}
	return n
}

// List returns every terminal, oldest first.
func (h *Host) List() []Info {
	var out []Info
	h.hub.Update(func(hub.Tx) { out = h.list() })
	return out
}

func (h *Host) list() []Info {
	ts := make([]*Terminal, 0, len(h.terms))
	for _, t := range h.terms {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].id < ts[j].id })
	out := make([]Info, 0, len(ts))
	for _, t := range ts {
		snap := t.state.Lifecycle
		out = append(out, Info{URI: t.uri, Title: t.state.Title, Claim: t.state.Claim, Lifecycle: snap})
	}
	return out
}

func (h *Host) publishList(tx hub.Tx) {
	tx.Publish(RootChannel, TerminalsChanged{Terminals: h.list()}, nil, "")
}

// Snapshot returns the terminal's state now.
func (h *Host) Snapshot(uri string) (terminal.Snapshot, error) {
	var snap terminal.Snapshot
	var ok bool
	h.hub.Update(func(hub.Tx) {
		if t := h.terms[uri]; t != nil {
			snap, ok = t.state.Snapshot(), true
		}
	})
	if !ok {
		return snap, fmt.Errorf("%w at %s", ErrNotFound, uri)
	}
	return snap, nil
}

func sizeOr(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// isTerminalURI: a scheme, then something after its slashes.
func isTerminalURI(uri string) bool {
	scheme, rest, ok := strings.Cut(uri, ":")
	return ok && scheme != "" && strings.TrimLeft(rest, "/") != ""
}

// isReserved: URI spaces that name other kinds of channel.
func isReserved(uri string) bool {
	scheme, _, _ := strings.Cut(uri, ":")
	scheme = strings.ToLower(scheme)
	return scheme == "file" || (strings.HasPrefix(scheme, "ahp-") && scheme != "ahp-terminal")
}

// DefaultDirectory is the host's own directory as a file: URI.
func (h *Host) DefaultDirectory() string { return terminal.URIFromPath(h.cfg.Dir) }
