package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/shellgate/shellgate/cmd/shellgate/internal/client"
)

// The detach sequence: Ctrl-] (as in telnet) and then d. Ctrl-] twice sends
// one Ctrl-]; Ctrl-] and any other key sends both.
const (
	detachPrefix = 0x1d // Ctrl-]
	detachKey    = 'd'
	detachKeys   = "Ctrl-] then d"
)

// newAttachCmd streams a terminal both ways, like ssh or tmux attach.
func newAttachCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "attach [terminal]",
		Short: "Attach to a terminal (ahp-terminal:/ID or ID); with none, open a new shell",
		Long: `Attach this terminal to one of the daemon's terminals: its scrollback is
written first, and its current screen over it (a program such as vim shows
as it is now), then its live output, and what you type goes to it. The
window size follows this one. With no argument a new shell is opened on a
pseudoterminal.

Detach with ` + detachKeys + `: the terminal keeps running (ls shows it, attach
returns to it). Press Ctrl-] twice to send one Ctrl-]. When the terminal's
process ends, attach ends too, with its exit code. If the daemon drops this
client for falling behind the output (or the connection breaks), attach
reconnects and carries on, with a note on stderr.

On a terminal without a pty (pipes) this side stays line-buffered: lines are
sent on Enter, Ctrl-C interrupts the process, and the detach sequence is
followed by Enter (or press Ctrl-\). SIGTERM or SIGHUP detach as well.`,
		Example: `  shellgate attach
  shellgate attach build
  shellgate attach ahp-terminal:/build`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := resolveRemote(cmd)
			if err != nil {
				return err
			}
			target := ""
			if len(args) == 1 {
				target = client.TerminalURI(args[0])
				if host, _ := cmd.Flags().GetString("host"); host != "" {
					return fmt.Errorf("--host opens a new shell there; an existing terminal (%s) runs where it runs, so give one or the other", args[0])
				}
			}
			return r.scrub(runAttach(cmd, r, target))
		},
	}
	cmd.Flags().String("host", "", "open the new shell on this host of the daemon's hosts: (default: the daemon's own machine)")
	addRemoteFlags(cmd)
	return cmd
}

// attachment is one attach run: the connection, the local terminal and
// what must be undone on the way out.
type attachment struct {
	// connMu guards c, which a resume replaces, and swapped, closed then.
	connMu  sync.Mutex
	c       *client.Client
	swapped chan struct{}

	uri    string
	in     io.Reader
	out    io.Writer
	errOut io.Writer
	inFd   int
	inTTY  bool
	outTTY bool
	sizeFd int // the fd to read the window size from; -1 for none
	isPty  bool

	raw        bool
	restoreMu  sync.Mutex
	oldState   *term.State
	altScreen  bool            // the remote program switched to the alternate screen
	shownNotes map[string]bool // rejection reasons already shown
	lastSize   [2]int          // cols, rows last sent

	// answers drops what the local terminal answers to what attach drew
	// from history (see drawHistory).
	answers answerFence
}

func runAttach(cmd *cobra.Command, r remote, target string) error {
	a := &attachment{in: cmd.InOrStdin(), out: cmd.OutOrStdout(), errOut: cmd.ErrOrStderr(), sizeFd: -1, shownNotes: map[string]bool{}}
	if f, ok := a.in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		a.inFd, a.inTTY = int(f.Fd()), true
		a.sizeFd = a.inFd
	}
	if f, ok := a.out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		a.sizeFd, a.outTTY = int(f.Fd()), true
	}
	// Whatever happens below — a return, a panic on this goroutine — the
	// local terminal is given back as it was.
	defer a.restore()

	// Signals are attach's to interpret (the root's context would end at
	// the first one), so it runs on its own context.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)

	c, _, err := r.dial(ctx, client.RootChannel)
	if err != nil {
		return err
	}
	a.c, a.swapped = c, make(chan struct{})
	defer func() { _ = a.conn().Close() }()
	setup, cancelSetup := context.WithTimeout(ctx, setupPatience)
	defer cancelSetup()

	cols, rows, haveSize := windowSize(a.sizeFd)
	a.uri = target
	if a.uri == "" {
		a.uri = client.TerminalURI(client.RandomID())
		host, _ := cmd.Flags().GetString("host")
		spawn := &client.Spawn{PTY: true, Host: host, AwaitViewer: true}
		if t := os.Getenv("TERM"); t != "" {
			spawn.Env = map[string]string{"TERM": t}
		}
		p := client.CreateParams{Channel: a.uri, Spawn: spawn}
		if haveSize {
			p.Cols, p.Rows = cols, rows
			a.lastSize = [2]int{cols, rows}
		}
		if err := c.CreateTerminal(setup, p); err != nil {
			return err
		}
	}
	snap, err := c.Subscribe(setup, a.uri)
	if err != nil {
		if target == "" {
			// Not worth leaving a shell nobody can reach.
			_ = c.DisposeTerminal(setup, a.uri)
		}
		return err
	}
	state, err := snap.Terminal()
	if err != nil {
		return err
	}
	a.isPty = state.IsPty
	if a.lastSize == [2]int{} {
		a.lastSize = [2]int{state.Cols, state.Rows}
	}
	cancelSetup()

	if a.inTTY && a.isPty {
		if err := a.makeRaw(); err != nil {
			return err
		}
	}
	fmt.Fprintf(a.errOut, "shellgate: attached to %s; detach with %s%s", a.uri, detachKeys, a.newline())
	if err := a.drawHistory(state.Draw()); err != nil {
		return err
	}
	if exited, code := state.Exited(); exited {
		return a.finish(terminalExit(a.uri, code))
	}
	if err := a.followSize(ctx); err != nil {
		return a.finish(ending{err: err})
	}

	detached := make(chan struct{})
	inputDone := make(chan error, 1)
	go a.pumpInput(ctx, detached, inputDone)

	for {
		c := a.conn()
		select {
		case env, ok := <-c.Actions():
			if !ok {
				if end, over := a.resume(ctx, c); over {
					return a.finish(end)
				}
				// A resize the old connection could not send goes now.
				if err := a.followSize(ctx); err != nil {
					return a.finish(ending{err: err})
				}
				continue
			}
			if end, over := a.apply(env); over {
				return a.finish(end)
			}
		case <-detached:
			return a.finish(ending{note: fmt.Sprintf("detached from %s; it keeps running (shellgate attach %s)", a.uri, client.TerminalID(a.uri))})
		case err := <-inputDone:
			// Standard input ended (or failed): keep showing the output
			// until the terminal ends or a signal comes.
			inputDone = nil
			if err != nil {
				a.notice("input stopped: " + err.Error())
			}
		case <-winch:
			if err := a.followSize(ctx); err != nil {
				return a.finish(ending{err: err})
			}
		case sig := <-sigs:
			if sig == os.Interrupt && !a.isRaw() {
				// Line-buffered (pipes): Ctrl-C is for the remote process.
				// On a connection that just ended it is lost, as a key
				// typed into a dropped ssh session is.
				if err := c.Input(ctx, a.uri, "\x03"); err != nil && !ended(c) {
					return a.finish(ending{err: err})
				}
				continue
			}
			return a.finish(ending{
				note: fmt.Sprintf("detached from %s on %v; it keeps running", a.uri, sig),
				err:  exitCodeError(128 + int(sig.(syscall.Signal))),
			})
		}
	}
}

// ending is how an attach run ends: a note for stderr and the error (or
// exit code) to return.
type ending struct {
	note string
	err  error
}

func terminalExit(uri string, code *int) ending {
	if code == nil {
		return ending{note: uri + " exited", err: exitCodeError(1)}
	}
	e := ending{note: fmt.Sprintf("%s exited with code %d", uri, *code)}
	if *code != 0 {
		e.err = exitCodeError(*code)
	}
	return e
}

// conn is the current connection and a channel closed when a resume
// replaces it.
func (a *attachment) conn() *client.Client {
	a.connMu.Lock()
	defer a.connMu.Unlock()
	return a.c
}

func (a *attachment) connAndSwap() (*client.Client, <-chan struct{}) {
	a.connMu.Lock()
	defer a.connMu.Unlock()
	return a.c, a.swapped
}

// resume carries the attachment on over a new connection after c ended:
// the output missed meanwhile is replayed, or, when the daemon no longer
// holds it, the terminal is shown afresh from its snapshot. over says
// attach has ended instead.
func (a *attachment) resume(ctx context.Context, c *client.Client) (ending, bool) {
	lost := connectionLost(c)
	if !client.Resumable(lost) {
		return ending{err: lost}, true
	}
	why := "lost the connection to the daemon"
	if ce := (*client.ConnectionError)(nil); errors.As(lost, &ce) && ce.FellBehind() {
		why = "fell behind the terminal's output and was dropped by the daemon"
	}
	setup, cancel := context.WithTimeout(ctx, setupPatience)
	defer cancel()
	next, res, err := c.Resume(setup)
	if err != nil {
		return ending{err: fmt.Errorf("%w; reconnecting failed: %v", lost, err)}, true
	}
	_ = c.Close()
	a.connMu.Lock()
	a.c = next
	close(a.swapped)
	a.swapped = make(chan struct{})
	a.connMu.Unlock()
	if res.IsMissing(a.uri) {
		return ending{note: a.uri + " was disposed of", err: exitCodeError(1)}, true
	}
	if res.Replay {
		a.notice(why + "; reconnected, nothing missed")
		for _, env := range res.Actions {
			if end, over := a.apply(env); over {
				return end, true
			}
		}
		a.fenceAnswers()
		return ending{}, false
	}
	// The gap is older than the daemon's replay buffer: what the terminal
	// printed meanwhile is lost. On a screen, its retained output is
	// shown again (as a fresh attach would); a file or pipe gets no
	// repeats.
	snap, _ := res.Snapshot(a.uri)
	state, err := snap.Terminal()
	if err != nil {
		return ending{err: err}, true
	}
	if a.outTTY {
		a.notice(why + "; reconnected, but some output was missed: showing the terminal's retained output again")
		if err := a.drawHistory(state.Draw()); err != nil {
			return ending{err: err}, true
		}
	} else {
		a.notice(why + "; reconnected, but some output was missed")
	}
	if root, ok := res.Snapshot(client.RootChannel); ok {
		if list, err := root.Root(); err == nil && !listed(list.Terminals, a.uri) {
			return ending{note: a.uri + " was disposed of", err: exitCodeError(1)}, true
		}
	}
	if exited, code := state.Exited(); exited {
		return terminalExit(a.uri, code), true
	}
	return ending{}, false
}

func listed(ts []client.TerminalInfo, uri string) bool {
	for _, t := range ts {
		if t.Resource == uri {
			return true
		}
	}
	return false
}

// apply handles one envelope; over says the attachment has ended.
func (a *attachment) apply(env client.Envelope) (ending, bool) {
	switch env.Channel {
	case a.uri:
		if env.RejectionReason != "" {
			if !a.shownNotes[env.RejectionReason] {
				a.shownNotes[env.RejectionReason] = true
				a.notice(printable(env.RejectionReason))
			}
			return ending{}, false
		}
		switch env.Action.Type {
		case "terminal/data":
			if err := a.output(env.Action.Data); err != nil {
				return ending{err: err}, true
			}
		case "terminal/exited":
			return terminalExit(a.uri, env.Action.ExitCode), true
		}
	case client.RootChannel:
		if env.Action.Type != "root/terminalsChanged" {
			return ending{}, false
		}
		if listed(env.Action.Terminals, a.uri) {
			return ending{}, false
		}
		// No terminal channel says it was disposed of; only the list does.
		return ending{note: a.uri + " was disposed of", err: exitCodeError(1)}, true
	}
	return ending{}, false
}

// pumpInput sends what is typed until the detach sequence or the end of
// input. It may stay blocked in a read after attach has ended; the process
// is exiting by then.
func (a *attachment) pumpInput(ctx context.Context, detached chan<- struct{}, done chan<- error) {
	defer func() {
		// A panic here would skip runAttach's deferred restore.
		if p := recover(); p != nil {
			a.restore()
			panic(p)
		}
	}()
	var keys detachFilter
	var carry []byte
	buf := make([]byte, 32<<10)
	for {
		n, err := a.in.Read(buf)
		if n > 0 {
			chunk, detach := buf[:n], false
			if a.inTTY {
				chunk = a.answers.filter(chunk)
				chunk, detach = keys.feed(chunk)
			}
			var text string
			text, carry = completeUTF8(append(carry, chunk...))
			if text != "" {
				if ierr := a.input(ctx, text); ierr != nil {
					done <- ierr
					return
				}
			}
			if detach {
				close(detached)
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			done <- err
			return
		}
	}
}

// input sends typed text. When the connection has just ended it waits for
// the main loop to resume on a new one and sends it there; ctx ends when
// attach does.
func (a *attachment) input(ctx context.Context, text string) error {
	for {
		c, swapped := a.connAndSwap()
		err := c.Input(ctx, a.uri, text)
		if err == nil || !ended(c) {
			return err
		}
		select {
		case <-swapped:
		case <-ctx.Done():
			return err
		}
	}
}

// followSize sends the window size when it has changed.
func (a *attachment) followSize(ctx context.Context) error {
	cols, rows, ok := windowSize(a.sizeFd)
	if !ok || !a.isPty || [2]int{cols, rows} == a.lastSize {
		return nil
	}
	c := a.conn()
	if err := c.Resize(ctx, a.uri, cols, rows); err != nil {
		if ended(c) {
			return nil // sent again once a new size comes, after the resume
		}
		return err
	}
	a.lastSize = [2]int{cols, rows}
	return nil
}

func (a *attachment) makeRaw() error {
	a.restoreMu.Lock()
	defer a.restoreMu.Unlock()
	old, err := term.MakeRaw(a.inFd)
	if err != nil {
		return fmt.Errorf("cannot put this terminal in raw mode: %w", err)
	}
	a.oldState, a.raw = old, true
	return nil
}

// restore gives the local terminal back its modes; safe to call again and
// from any goroutine.
func (a *attachment) restore() {
	a.restoreMu.Lock()
	defer a.restoreMu.Unlock()
	if a.oldState == nil {
		return
	}
	if a.outTTY {
		a.resetScreen()
	}
	_ = term.Restore(a.inFd, a.oldState)
	a.oldState, a.raw = nil, false
}

// resetScreen undoes what the remote program may have left switched on
// (alternate screen, scroll region, origin mode, hidden cursor or its shape,
// mouse reporting, focus events, bracketed paste, application keys,
// modifyOtherKeys, SGR), so this shell's screen works as before. The scroll
// region is reset between saving and restoring the cursor, since DECSTBM
// moves it home.
func (a *attachment) resetScreen() {
	_, _ = io.WriteString(a.out, detachReset(a.altScreen))
}

// detachReset is what resetScreen writes.
func detachReset(altScreen bool) string {
	reset := "\x1b[0m\x1b[?6l\x1b7\x1b[r\x1b8\x1b[?7h\x1b[?25h\x1b[0 q\x1b[?1l\x1b>" +
		"\x1b[?9l\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1004l\x1b[?1006l\x1b[?2004l\x1b[>4m\x1b[<u"
	if altScreen {
		reset = "\x1b[?1049l" + reset
	}
	return reset
}

func (a *attachment) isRaw() bool {
	a.restoreMu.Lock()
	defer a.restoreMu.Unlock()
	return a.raw
}

// finish restores the terminal, then says how it ended.
func (a *attachment) finish(e ending) error {
	wasRaw := a.isRaw()
	a.restore()
	if e.note != "" {
		lead := ""
		if wasRaw {
			lead = "\r\n"
		}
		fmt.Fprintf(a.errOut, "%sshellgate: %s\n", lead, e.note)
	}
	return e.err
}

// notice shows a message mid-stream, on a line of its own.
func (a *attachment) notice(msg string) {
	nl := a.newline()
	fmt.Fprintf(a.errOut, "%sshellgate: %s%s", nl, msg, nl)
}

func (a *attachment) newline() string {
	if a.isRaw() {
		return "\r\n"
	}
	return "\n"
}

// output writes the terminal's output and watches whether the remote
// program is on the alternate screen.
func (a *attachment) output(s string) error {
	if s == "" {
		return nil
	}
	if on, off := altSwitch(s); on >= 0 || off >= 0 {
		a.restoreMu.Lock()
		a.altScreen = on > off
		a.restoreMu.Unlock()
	}
	if _, err := io.WriteString(a.out, s); err != nil {
		return fmt.Errorf("writing the output: %w", err)
	}
	return nil
}

// detachFilter finds the detach sequence in typed input, across reads.
type detachFilter struct {
	pending bool // the last byte seen was the prefix
}

// feed returns the bytes to send and whether the sequence was completed;
// bytes typed after it are dropped.
func (f *detachFilter) feed(p []byte) ([]byte, bool) {
	out := make([]byte, 0, len(p)+1)
	for _, b := range p {
		switch {
		case f.pending && b == detachKey:
			f.pending = false
			return out, true
		case f.pending && b == detachPrefix:
			f.pending = false
			out = append(out, detachPrefix)
		case f.pending:
			f.pending = false
			out = append(out, detachPrefix, b)
		case b == detachPrefix:
			f.pending = true
		default:
			out = append(out, b)
		}
	}
	return out, false
}

// completeUTF8 splits p into the text to send now and an incomplete
// multi-byte sequence at its end, kept for the next read. Bytes that can
// never be UTF-8 are sent (the wire's JSON turns them into U+FFFD).
func completeUTF8(p []byte) (string, []byte) {
	cut := len(p)
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				cut = i
			}
			break
		}
	}
	return string(p[:cut]), bytes.Clone(p[cut:])
}

// termSize is the window size of the terminal at fd.
func termSize(fd int) (int, int, error) {
	if fd < 0 {
		return 0, 0, errors.New("not a terminal")
	}
	return term.GetSize(fd)
}

// altSwitch is where s last enters and last leaves the alternate screen
// (any of its three modes), -1 for never.
func altSwitch(s string) (on, off int) {
	on, off = -1, -1
	for _, m := range []string{"1049", "1047", "47"} {
		on = max(on, strings.LastIndex(s, "\x1b[?"+m+"h"))
		off = max(off, strings.LastIndex(s, "\x1b[?"+m+"l"))
	}
	return on, off
}

// drawHistory writes output that is history rather than live (a snapshot's
// retained output and screen, a replay), and then fences off what the local
// terminal answers to it.
func (a *attachment) drawHistory(s string) error {
	if err := a.output(s); err != nil {
		return err
	}
	a.fenceAnswers()
	return nil
}

// fenceAnswers makes sure nothing the local terminal answers to what was
// drawn so far is sent as typed input: history may hold a program's
// queries (device attributes, cursor position, colours…), and the local
// terminal answers each, on this side's input, as if typed. attach asks
// the terminal for its status (DSR 5) after the drawing; a terminal answers
// in order, so every answer to the drawing comes before "CSI 0 n". Until
// then every escape sequence read is dropped (answers are escape
// sequences; so are arrow and function keys pressed meanwhile, which are
// lost), and plain typing passes. A terminal that does not answer DSR 5
// gets its escape sequences back after answerWait.
func (a *attachment) fenceAnswers() {
	if !a.inTTY || !a.outTTY || !a.isRaw() {
		return
	}
	a.answers.expect(answerWait)
	_, _ = io.WriteString(a.out, statusQuery)
}

// DSR 5, and the answer "terminal OK".
const (
	statusQuery  = "\x1b[5n"
	statusAnswer = "\x1b[0n"
)

// answerWait is how long input waits for the fence's answer at most.
const answerWait = 2 * time.Second

// answerFence drops the escape sequences in input until the local
// terminal's answer to the status query attach sent after drawing history.
type answerFence struct {
	mu      sync.Mutex
	pending int    // answers still to come
	held    []byte // an escape sequence not yet complete, from the last read
	gen     int    // which expect the timer belongs to
}

// maxHeld bounds a held sequence: no answer is that long.
const maxHeld = 4096

// expect counts one more answer to wait for, for at most wait.
func (f *answerFence) expect(wait time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending++
	f.gen++
	gen := f.gen
	time.AfterFunc(wait, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.gen == gen {
			f.pending, f.held = 0, nil
		}
	})
}

// filter returns what of p is typed input.
func (f *answerFence) filter(p []byte) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pending == 0 {
		return p
	}
	buf := append(f.held, p...)
	f.held = nil
	out := make([]byte, 0, len(buf))
	for i := 0; i < len(buf); {
		if f.pending == 0 {
			return append(out, buf[i:]...)
		}
		if buf[i] != 0x1b {
			out = append(out, buf[i])
			i++
			continue
		}
		n := escapeLen(buf[i:])
		if n == 0 {
			if len(buf)-i <= maxHeld {
				f.held = bytes.Clone(buf[i:])
			}
			break
		}
		if string(buf[i:i+n]) == statusAnswer {
			f.pending--
		}
		i += n
	}
	return out
}

// escapeLen is the length of the escape sequence p starts with (p[0] is
// ESC), or 0 when p ends before it does.
func escapeLen(p []byte) int {
	if len(p) < 2 {
		return 0
	}
	switch p[1] {
	case 0x1b:
		return 1 // a lone ESC, cut short by the next
	case '[':
		for i := 2; i < len(p); i++ {
			if p[i] >= 0x40 && p[i] <= 0x7e {
				return i + 1
			}
		}
		return 0
	case ']', 'P', '_', '^', 'X':
		for i := 2; i < len(p); i++ {
			if p[i] == 0x07 && p[1] == ']' {
				return i + 1
			}
			if p[i] == 0x1b && i+1 < len(p) && p[i+1] == '\\' {
				return i + 2
			}
		}
		return 0
	case 'O':
		if len(p) < 3 {
			return 0
		}
		return 3
	}
	return 2
}
