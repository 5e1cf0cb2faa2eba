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
	"sync/atomic"
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
	// ErrTooManyTerminals: the owner already holds Config.MaxPerOwner
	// terminals.
	ErrTooManyTerminals = errors.New("too many terminals for one person")
	// ErrLowOnFiles: the daemon is too close to its open-file limit to
	// start a terminal for this caller (Config.DescriptorReserve).
	ErrLowOnFiles = errors.New("too close to the open-file limit")
)

// descriptorsPerTerminal is what starting one terminal may open at most:
// its pipes or pty, a pidfd, and the sandbox's sockets and status pipe.
const descriptorsPerTerminal = 8

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
	// ParkAfter is how long a process may write nothing before its pump's
	// goroutine ends, to start again when output comes (where the spawner
	// can say when: ports.QuietParker). An idle terminal then costs no
	// goroutine stack. Zero means DefaultParkAfter; less, never.
	ParkAfter time.Duration
	// Integration, when set, makes an interactive bash or zsh under a pty
	// report its command boundaries. Marks are read from every pty terminal
	// either way; pipes never have any.
	Integration ports.ShellIntegration
	// PassMarks leaves shell-integration marks in pty output as plain
	// output: no command detection. For measuring, and for programs whose
	// output is about such marks.
	PassMarks bool
	// MaxPerOwner refuses a terminal to an owner (Spec.Owner) who already
	// holds this many, exited ones included (their scrollback is still
	// held), unless the start is an admin's (Spec.Reserve); zero or less
	// is no limit.
	MaxPerOwner int
	// Descriptors, when set, is asked before each start how many files the
	// daemon may still open; too few refuses the terminal (ErrLowOnFiles)
	// rather than failing half-way through it.
	Descriptors ports.Descriptors
	// DescriptorReserve is how many of the last open files only a
	// Spec.Reserve caller (an admin) may use, so that an admin can still
	// start a terminal, connect, and dispose of others when everyone
	// else's terminals have used up the rest.
	DescriptorReserve int
	// Screens, when set, keeps a screen model of a pty terminal while its
	// program shows the alternate screen, which its snapshot carries for
	// viewers to draw.
	Screens ports.Screens
	// RemoteShells names the other machines a terminal may run on, each
	// with the shell a terminal opens there ("" for the remote user's login
	// shell). Their terminals get none of the daemon's environment or
	// directory: only the caller's variables and the terminal's own.
	RemoteShells map[string]string
}

// MainHost is the host name of the daemon's own machine.
const MainHost = ports.MainHost

// ErrUnknownHost: the spec names a host the daemon has not configured.
var ErrUnknownHost = errors.New("is not a configured host")

// Defaults.
const (
	DefaultStopGrace      = 5 * time.Second
	DefaultReadBufferSize = 64 << 10
	// DefaultParkAfter is long past a keystroke's echo and the pauses of
	// a burst of output, so a pump parks only once its terminal is idle.
	DefaultParkAfter = time.Second
)

// Host owns every live terminal.
type Host struct {
	cfg     Config
	hub     *hub.Hub
	spawner ports.Spawner
	clock   ports.Clock

	// mu guards the host's terminals and each one's state (Terminal's
	// fields so marked). A change that is announced is made with mu held
	// around the hub's Stage (update), so a subscription, made under mu
	// too, gets a snapshot and exactly the events after it. Lock order:
	// mu, then the hub's.
	mu      sync.Mutex
	terms   map[string]*Terminal
	nextID  uint64
	closing bool

	pumps sync.WaitGroup
	// Pumps that ended their goroutine while their process was quiet, and
	// those woken since (Config.ParkAfter).
	parks, wakes atomic.Int64
	buffers      bufferPool
}

// New returns a host with no terminals.
func New(cfg Config, h *hub.Hub, sp ports.Spawner, clock ports.Clock) *Host {
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = DefaultStopGrace
	}
	if cfg.ParkAfter == 0 {
		cfg.ParkAfter = DefaultParkAfter
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

// update changes the host's state and announces the change as one step:
// fn runs with the host's lock and the hub's held, and what it published
// is delivered once both are released.
func (h *Host) update(fn func(tx hub.Tx)) {
	h.mu.Lock()
	d := h.hub.Stage(fn)
	h.mu.Unlock()
	d.Deliver()
}

// read runs fn with the host's lock held: for looking at the host's state
// without announcing anything.
func (h *Host) read(fn func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fn()
}

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
	// Shell overrides the daemon's shell (a connection's defaultShell); it
	// is this machine's, so another host's terminal ignores it.
	Shell string
	// Host is the machine the terminal runs on: empty or ports.MainHost
	// for this one, else one of Config.RemoteShells.
	Host string
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
	// AwaitViewer holds the process's output unread until the terminal's
	// first subscriber is there: the process runs, and waits in its write
	// once the kernel's buffer is full, so a caller that creates a
	// terminal and then subscribes sees all of its output, however much
	// came in between. The hold ends too when the terminal is disposed of
	// or killed, or the host stops.
	AwaitViewer bool
	// OnOutput, when set, is given every chunk of the process's output as it
	// is read, with the stream it came from, before it reaches the
	// scrollback. On pipes it also keeps standard error apart from standard
	// output (ports.SpawnSpec.SeparateStderr), so the tap can tell them
	// apart; the scrollback and every viewer still get both, interleaved as
	// read. Under a pty, or with a spawner that merges the streams,
	// everything is Stdout. Every call has returned before Done is closed;
	// data is valid only during the call.
	OnOutput func(stream Stream, data []byte)
	// Banner, when set, is the start of the terminal's output, before
	// anything the process writes: in the scrollback and every viewer's
	// snapshot, never given to OnOutput.
	Banner string
	// Owner is the person the terminal counts against (Config.MaxPerOwner);
	// empty counts against nobody (the agent gate's terminals, which it
	// caps itself).
	Owner string
	// Reserve marks an admin's start: it may use Config.DescriptorReserve,
	// and Config.MaxPerOwner does not apply (an admin may raise it anyway,
	// and a repair may take more terminals than a person's share).
	Reserve bool
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
	remoteShell, remote := "", false
	switch spec.Host {
	case "", ports.MainHost:
		spec.Host = ports.MainHost
	default:
		if remoteShell, remote = h.cfg.RemoteShells[spec.Host]; !remote {
			return nil, fmt.Errorf("host %q %w; use one of %s", spec.Host, ErrUnknownHost, strings.Join(h.HostNames(), ", "))
		}
	}
	dir := h.cfg.Dir
	if remote {
		dir = "" // the remote user's home
	}
	if spec.CWD != "" {
		p, err := terminal.PathFromURI(spec.CWD)
		if err != nil {
			return nil, fmt.Errorf("cwd %q is %w", spec.CWD, err)
		}
		dir = p
	}
	shell := spec.Shell
	switch {
	case remote:
		shell = remoteShell
	case shell == "":
		shell = h.cfg.Shell
	}
	title := spec.Name
	if title == "" {
		title = path.Base(shell)
		if remote {
			if shell == "" {
				title = "shell"
			}
			title += "@" + spec.Host
		}
	}
	cols, rows := sizeOr(spec.Cols, terminal.DefaultCols), sizeOr(spec.Rows, terminal.DefaultRows)

	if err := h.checkDescriptors(spec.Reserve); err != nil {
		return nil, err
	}
	t := &Terminal{uri: spec.URI, host: h, owner: spec.Owner, machine: spec.Host, isPty: spec.PTY, tap: spec.OnOutput, done: make(chan struct{})}
	if spec.AwaitViewer {
		t.hold = make(chan struct{})
	}
	var err error
	h.update(func(tx hub.Tx) {
		switch {
		case h.terms[spec.URI] != nil || tx.IsOpen(spec.URI):
			err = fmt.Errorf("%s %w", spec.URI, ErrExists)
		case isReserved(spec.URI):
			err = fmt.Errorf("%s %w", spec.URI, ErrReservedURI)
		case spec.Claim.Validate() != nil:
			err = terminal.ErrNotAClaim
		case h.closing:
			err = ErrClosing
		case spec.Owner != "" && !spec.Reserve && h.cfg.MaxPerOwner > 0 && h.heldBy(spec.Owner) >= h.cfg.MaxPerOwner:
			err = limitErrorf(ErrTooManyTerminals, "%s already holds %d terminals, this host's max_terminals_per_person; dispose of one (disposeTerminal) and try again",
				spec.Owner, h.cfg.MaxPerOwner)
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
		// Nobody can have subscribed to the channel yet: the state alone
		// carries the banner to whoever opens the terminal.
		t.state.Apply(terminal.Data{Data: spec.Banner})
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
	env := h.environment(spec.Env, spec.PTY, cols, rows, remote)
	var files map[string]string
	if spec.PTY {
		t.title = newTitles(t, h.clock)
		nonce := ""
		switch remoteInit, _ := h.cfg.Integration.(ports.RemoteShellIntegration); {
		case spec.Command != "" || h.cfg.Integration == nil:
		case !remote:
			nonce = newNonce()
			withNonce := mergeEnv(env, []string{shellNonceEnv + "=" + nonce})
			if a, e, ok, err := h.cfg.Integration.Prepare(program, args, withNonce); err == nil && ok {
				args, env = a, e
			} else {
				nonce = ""
			}
		case remoteInit != nil:
			// On another machine the scripts travel with the spec.
			nonce = newNonce()
			withNonce := mergeEnv(env, []string{shellNonceEnv + "=" + nonce})
			if a, e, f, ok := remoteInit.PrepareRemote(program, args, withNonce); ok {
				args, env, files = a, e, f
			} else {
				nonce = ""
			}
		}
		if !h.cfg.PassMarks {
			t.marks = newMarkReader(terminal.URIFromPath(dir), nonce)
		}
	}
	proc, spawnErr := h.spawner.Spawn(ctx, ports.SpawnSpec{
		Host: spec.Host, Program: program, Args: args, Dir: dir, PTY: spec.PTY,
		Env:  env,
		Cols: uint16(cols), Rows: uint16(rows),
		SeparateStderr: spec.OnOutput != nil && !spec.PTY,
		Confine:        spec.Confine,
		Files:          files,
	})
	if spawnErr != nil {
		where := dir
		if remote {
			where = spec.Host + ":" + dir
		}
		msg := fmt.Sprintf("shellgate: cannot start %s in %s: %v\n", shell, where, spawnErr)
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
	h.read(func() { gone = t.removed || h.closing })
	if gone {
		_ = proc.Kill()
	}
	go t.pump(h.cfg.ReadBufferSize)
	return t, nil
}

// heldBy counts the terminals owner holds; the host's lock is held.
func (h *Host) heldBy(owner string) int {
	n := 0
	for _, t := range h.terms {
		if t.owner == owner {
			n++
		}
	}
	return n
}

// checkDescriptors refuses a start the daemon has no files left for; only
// an admin's start (reserve) may use the last DescriptorReserve of them.
// The count is read before the start and not held, so two starts at once
// may both pass; the margin per terminal covers a few of those.
func (h *Host) checkDescriptors(reserve bool) error {
	if h.cfg.Descriptors == nil {
		return nil
	}
	free, limit, err := h.cfg.Descriptors.Free()
	if err != nil {
		return nil // not knowing is no reason to refuse; the start will say
	}
	need := descriptorsPerTerminal
	if !reserve {
		need += h.cfg.DescriptorReserve
	}
	if free >= need {
		return nil
	}
	if reserve || free < descriptorsPerTerminal {
		return limitErrorf(ErrLowOnFiles, "the daemon has %d of its %d open files left, too few to start a terminal; dispose of terminals nobody needs, or raise the daemon's open-file limit (ulimit -n)", free, limit)
	}
	return limitErrorf(ErrLowOnFiles, "the daemon has %d of its %d open files left, and keeps the last %d for admins; dispose of terminals you no longer need, or ask an admin to", free, limit, h.cfg.DescriptorReserve)
}

// limitError is a cap's refusal: its message says which cap and what to
// do, and it matches its sentinel with errors.Is.
type limitError struct {
	kind error
	msg  string
}

func limitErrorf(kind error, format string, args ...any) error {
	return &limitError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

func (e *limitError) Error() string { return e.msg }
func (e *limitError) Unwrap() error { return e.kind }

// environment layers the daemon's (on this machine only), then the
// caller's, then the terminal's own TERM, COLUMNS and LINES, which nothing
// may override.
func (h *Host) environment(callers []string, pty bool, cols, rows int, remote bool) []string {
	base := h.cfg.Env
	if remote {
		base = nil
	}
	term := "dumb"
	if pty {
		term = lookupEnv(h.cfg.Env, "TERM")
		if term == "" || term == "dumb" {
			term = "xterm-256color"
		}
	}
	return mergeEnv(base, callers, []string{
		"TERM=" + term, "COLUMNS=" + strconv.Itoa(cols), "LINES=" + strconv.Itoa(rows),
	})
}

// HostNames lists the machines a terminal may run on: main first, then the
// configured hosts sorted.
func (h *Host) HostNames() []string {
	names := make([]string, 0, len(h.cfg.RemoteShells))
	for n := range h.cfg.RemoteShells {
		names = append(names, n)
	}
	sort.Strings(names)
	return append([]string{ports.MainHost}, names...)
}

// Get returns the terminal at uri.
func (h *Host) Get(uri string) (*Terminal, error) {
	var t *Terminal
	h.read(func() { t = h.terms[uri] })
	if t == nil {
		return nil, fmt.Errorf("%w at %s", ErrNotFound, uri)
	}
	return t, nil
}

// Feed sends bytes of the terminal's input stream to its process as they
// are (Terminal.Feed).
func (h *Host) Feed(uri string, offset int64, b []byte, fed Fed) error {
	t, err := h.Get(uri)
	if err != nil {
		return err
	}
	return t.Feed(offset, b, fed)
}

// EndInput ends the terminal's input stream (Terminal.EndInput).
func (h *Host) EndInput(uri string, offset int64, fed Fed) error {
	t, err := h.Get(uri)
	if err != nil {
		return err
	}
	return t.EndInput(offset, fed)
}

// Dispose ends the terminal's whole process group with SIGKILL at once and
// removes it from the list; its channel is gone.
func (h *Host) Dispose(uri string) error {
	t, err := h.remove(uri)
	if err != nil {
		return err
	}
	t.endHold() // the pump reads on to the process's end
	if p := t.process(); p != nil {
		_ = t.input.closeInput(p, t.isPty)
		_ = p.Kill()
	}
	return nil
}

func (h *Host) remove(uri string) (*Terminal, error) {
	var t *Terminal
	h.update(func(tx hub.Tx) {
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
	h.read(func() {
		h.closing = true
		for _, t := range h.terms {
			all = append(all, t)
		}
	})
	for _, t := range all {
		t.endHold()
	}
	signalAll := func(send func(ports.Process) error) {
		for _, t := range all {
			if p := t.process(); p != nil {
				_ = send(p)
			}
		}
	}
	// Every process must drain to its end now, however far behind its
	// viewers are.
	h.hub.StopFlow()
	signalAll(ports.Process.Terminate)
	killer := h.clock.AfterFunc(h.cfg.StopGrace, func() { signalAll(ports.Process.Kill) })
	defer killer.Stop()

	done := make(chan struct{})
	go func() { h.pumps.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		signalAll(ports.Process.Kill)
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
	// Host is the machine the terminal runs on (ports.MainHost for this one).
	Host string
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
	h.read(func() { out = h.list() })
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
		out = append(out, Info{URI: t.uri, Title: t.state.Title, Claim: t.state.Claim, Lifecycle: snap, Host: t.machine})
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
	h.read(func() {
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
