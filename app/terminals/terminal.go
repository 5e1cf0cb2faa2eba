package terminals

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

// Terminal is one live terminal.
type Terminal struct {
	uri   string
	host  *Host
	owner string // Spec.Owner: the person whose max_terminals_per_person it counts against
	// machine is the host the process runs on (ports.MainHost for this one).
	machine string
	isPty   bool
	tap     func(Stream, []byte) // Spec.OnOutput; nil when nobody taps
	marks   *markReader          // pty terminals only; nil on pipes
	title   *titles              // pty terminals only; nil on pipes
	// screen is the screen model, guarded by the host's lock like the
	// state it goes with. A pty terminal has one only while its program
	// shows the alternate screen (when the host keeps models at all): on
	// the main screen the scrollback alone redraws a shell for a late
	// viewer, and a model costs megabytes of heap.
	screen ports.Screen

	// startErr is why the process could not be started; set before done
	// closes, nil when it started.
	startErr error

	// Guarded by the host's lock (Host.mu).
	id      uint64
	state   *terminal.State
	removed bool

	mu   sync.Mutex
	proc ports.Process // nil until spawned, or when the spawn failed

	input inputQueue

	done   chan struct{}
	status terminal.ExitStatus // set before done closes

	// hold, when not nil (Spec.AwaitViewer), keeps the pump from reading
	// until it is closed, once, by endHold.
	hold     chan struct{}
	holdOnce sync.Once
}

// endHold lets the pump read the process's output, if Spec.AwaitViewer
// held it back.
func (t *Terminal) endHold() {
	if t.hold != nil {
		t.holdOnce.Do(func() { close(t.hold) })
	}
}

// URI is the terminal's channel.
func (t *Terminal) URI() string { return t.uri }

// Done is closed once the exit has been announced.
func (t *Terminal) Done() <-chan struct{} { return t.done }

// ExitStatus is how the process ended; valid once Done is closed.
func (t *Terminal) ExitStatus() terminal.ExitStatus {
	<-t.done
	return t.status
}

// StartError is why the process could not be started (the terminal then
// exited with 127 and says why in its output), or nil when it started;
// valid once Done is closed.
func (t *Terminal) StartError() error {
	<-t.done
	return t.startErr
}

// Wait blocks until the exit has been announced or ctx ends.
func (t *Terminal) Wait(ctx context.Context) (terminal.ExitStatus, error) {
	select {
	case <-t.done:
		return t.status, nil
	case <-ctx.Done():
		return terminal.ExitStatus{}, ctx.Err()
	}
}

// Kill ends the whole process group with SIGKILL; the terminal stays listed
// and shows the exit.
func (t *Terminal) Kill() error {
	t.endHold() // so that the exit is read and shown
	if p := t.process(); p != nil {
		return p.Kill()
	}
	return nil
}

// Release ends the process if it still runs and removes the terminal.
func (t *Terminal) Release() error { return t.host.Dispose(t.uri) }

func (t *Terminal) process() ports.Process {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.proc
}

// pump moves output into the hub until the process's output drains (both
// streams, when standard error is kept apart), then announces the exit,
// once. Standard output's reader may stop while the process is quiet
// (see drainer); the rest of the pump then runs on the goroutine that
// resumes it.
func (t *Terminal) pump(bufSize int) {
	p := t.process()
	pu := &pumping{p: p}
	if src, ok := p.(ports.StderrSource); ok && t.tap != nil {
		if r := src.Stderr(); r != nil {
			pu.stderr.Add(1)
			go func() {
				defer pu.stderr.Done()
				t.newDrainer(r, Stderr, bufSize).run()
			}()
		}
	}
	pu.stdout = t.newDrainer(p, Stdout, bufSize)
	pu.stdout.resume = func() {
		t.host.wakes.Add(1)
		go t.pumpOn(pu)
	}
	t.pumpOn(pu)
}

// pumping is a pump's state across the goroutines that run it.
type pumping struct {
	p      ports.Process
	stdout *drainer
	stderr sync.WaitGroup
}

// pumpOn reads standard output on to its end, or until its reader parks,
// and finishes the terminal after the end.
func (t *Terminal) pumpOn(pu *pumping) {
	if !pu.stdout.run() {
		return // parked: pu.stdout.resume brings the pump back
	}
	if t.title != nil {
		t.title.flush()
	}
	pu.stderr.Wait()
	status := pu.p.Wait()
	_ = pu.p.Close()
	t.input.wait() // the close ends a write the process never took
	t.finish(status)
}

// ownedReadSize caps the read buffer of a process that cannot lend (one
// on another machine, a fake): that buffer lives as long as the terminal.
const ownedReadSize = 16 << 10

// drainer reads one output stream to its end into the tap and the
// scrollback. Each stream has its own decoder, so a character split across
// reads of one stream is not broken by the other stream's output. What it
// keeps between reads lives here, not on a goroutine's stack: when the
// process has written nothing for Config.ParkAfter and can say when it
// does (ports.QuietParker), the reading goroutine ends and resume starts
// another once output comes, so an idle terminal holds no goroutine.
type drainer struct {
	t      *Terminal
	r      io.Reader
	stream Stream
	lender ports.BufferLender // nil: reads go into owned
	quiet  ports.QuietParker  // nil: the reader never parks
	owned  []byte
	out    outStream
	marks  *markReader
	held   bool   // Spec.AwaitViewer's hold is behind it
	resume func() // starts run again on a goroutine of its own
}

func (t *Terminal) newDrainer(r io.Reader, stream Stream, bufSize int) *drainer {
	d := &drainer{t: t, r: r, stream: stream, held: t.hold == nil}
	// An idle terminal holds no read buffer: where the process can say when
	// output is there, the buffer is taken from the pool only then.
	d.lender, _ = r.(ports.BufferLender)
	if d.lender == nil {
		// Held for the terminal's whole life, so no larger than a
		// channel's usual packet.
		d.owned = make([]byte, min(bufSize, ownedReadSize))
	}
	if stream == Stdout {
		d.marks = t.marks
		// Only standard output's reader parks: the pump resumes one
		// stream, and standard error, kept apart only for a tap
		// (Spec.OnOutput), keeps its goroutine.
		if t.host.cfg.ParkAfter > 0 {
			d.quiet, _ = r.(ports.QuietParker)
		}
	}
	return d
}

// run reads until the end of the stream (true) or until its reader parks
// (false), after which resume runs it again.
func (d *drainer) run() bool {
	t := d.t
	if !d.held {
		<-t.hold // Spec.AwaitViewer
		d.held = true
	}
	for {
		// Flow control: while every viewer is far behind, the output stays
		// in the kernel's buffer and the process waits in its write, at
		// the pace of the fastest viewer. With no viewer it never waits.
		_ = t.host.hub.AwaitFlow(context.Background(), t.uri)
		var buf []byte
		var n int
		var err error
		switch {
		case d.quiet != nil:
			buf, n, err = d.quiet.ReadLentQuiet(t.host.cfg.ParkAfter, t.host.buffers.get, t.host.buffers.put)
			if errors.Is(err, ports.ErrQuiet) {
				t.host.parks.Add(1)
				d.quiet.AwaitOutput(d.resume)
				return false
			}
		case d.lender != nil:
			buf, n, err = d.lender.ReadLent(t.host.buffers.get, t.host.buffers.put)
		default:
			buf = d.owned
			n, err = d.r.Read(buf)
		}
		if n > 0 {
			if t.tap != nil {
				t.tap(d.stream, buf[:n])
			}
			if d.marks != nil {
				t.outputMarked(&d.out, d.marks.feed(buf[:n]))
			} else {
				t.output(&d.out, d.out.dec.Decode(buf[:n]))
			}
			if t.title != nil && d.stream == Stdout {
				t.title.feed(buf[:n])
			}
		}
		if d.lender != nil && buf != nil {
			t.host.buffers.put(buf)
		}
		if err != nil {
			break
		}
	}
	if d.marks != nil {
		t.output(&d.out, d.out.dec.Decode(d.marks.flush()))
	}
	t.output(&d.out, d.out.dec.Flush())
	// What the filter still holds is an unfinished sequence: never shown.
	_ = d.out.queries.Flush()
	return true
}

// outStream is one output stream's text state: its decoder, and the filter
// that keeps the queries in it out of the scrollback. Both belong to the
// stream's drain goroutine.
type outStream struct {
	dec     terminal.Decoder
	queries terminal.QueryFilter
}

// keep is what of text the scrollback keeps: all but the queries, which
// would be answered again by every viewer it is replayed to (see
// terminal.QueryFilter), and where the kept text switches screens (the
// filter's own slice, good until the next call). Live viewers get text
// whole.
func (o *outStream) keep(text string) (string, []terminal.ScreenSwitch) {
	if o == nil {
		return text, nil
	}
	return o.queries.FilterScreens(text)
}

// outputMarked publishes cleaned output and the actions its marks cause, in
// the order they came, as one step.
func (t *Terminal) outputMarked(out *outStream, f fed) {
	if len(f.marks) == 0 {
		t.output(out, out.dec.Decode(f.out))
		return
	}
	texts := make([]string, 0, len(f.marks)+1)
	prev := 0
	for _, m := range f.marks {
		texts = append(texts, out.dec.Decode(f.out[prev:m.Offset]))
		prev = m.Offset
	}
	texts = append(texts, out.dec.Decode(f.out[prev:]))
	now := t.host.clock.Now()
	t.host.update(func(tx hub.Tx) {
		var acts []terminal.Action
		for i, text := range texts {
			if text != "" {
				kept, switches := out.keep(text)
				t.dataLocked(tx, text, kept, switches)
			}
			if i < len(f.marks) {
				acts = t.marks.tracker.Mark(f.marks[i], now, acts[:0])
				for _, a := range acts {
					t.applyLocked(tx, a)
				}
			}
		}
	})
}

// applyLocked reduces a host action into the state and announces it; the
// caller holds the host's lock and the hub's (Host.update).
func (t *Terminal) applyLocked(tx hub.Tx, a terminal.Action) {
	t.state.Apply(a)
	if !t.removed {
		tx.Publish(t.uri, a, nil, "")
	}
}

// output publishes a stream's text; out is nil for the daemon's own
// messages, which hold no queries.
func (t *Terminal) output(out *outStream, text string) {
	if text == "" {
		return
	}
	kept, switches := out.keep(text)
	t.host.update(func(tx hub.Tx) { t.dataLocked(tx, text, kept, switches) })
}

// dataLocked keeps kept in the scrollback and announces text, whole, to
// live viewers; the caller holds the host's lock and the hub's.
func (t *Terminal) dataLocked(tx hub.Tx, text, kept string, switches []terminal.ScreenSwitch) {
	t.state.Apply(terminal.Data{Data: kept})
	if !t.removed {
		// Fed in the same step as the scrollback, so that a snapshot's
		// screen is exactly the output before its sequence number; and
		// fed without the queries, so the model has none to answer.
		t.screenLocked(kept, switches)
		tx.Publish(t.uri, terminal.Data{Data: text}, nil, "")
	}
}

// screenLocked feeds kept output to the screen model, starting one where
// the program enters the alternate screen and dropping it where the
// program leaves it. A full-screen program draws its whole screen after
// entering, so the model needs nothing from before; the main screen under
// it is the viewer's own, drawn from the scrollback. The caller holds the
// host's lock.
func (t *Terminal) screenLocked(kept string, switches []terminal.ScreenSwitch) {
	screens := t.host.cfg.Screens
	if !t.isPty || screens == nil {
		return
	}
	from := 0
	for _, sw := range switches {
		switch {
		case sw.Alt && t.screen == nil:
			t.screen = screens.NewScreen(t.state.Cols, t.state.Rows)
			from = sw.At
		case !sw.Alt && t.screen != nil:
			// What it drew before leaving is no longer shown anywhere.
			t.dropScreenLocked()
		}
	}
	if t.screen != nil && from < len(kept) {
		t.screen.Write(kept[from:])
	}
}

// dropScreenLocked lets go of the screen model; the caller holds the
// host's lock.
func (t *Terminal) dropScreenLocked() {
	if t.screen != nil {
		t.screen.Close()
		t.screen = nil
	}
}

// finish records and announces the exit; the caller guarantees it runs once.
func (t *Terminal) finish(status terminal.ExitStatus) {
	code := status.Code
	a := terminal.Exited{ExitCode: &code}
	now := t.host.clock.Now()
	t.host.update(func(tx hub.Tx) {
		if t.marks != nil {
			// A command still running (typically "exit") ends with the shell.
			for _, done := range t.marks.tracker.End(&code, now, nil) {
				t.applyLocked(tx, done)
			}
		}
		t.state.Apply(a)
		// Nothing draws on the screen any more: the scrollback shows what
		// was left.
		t.dropScreenLocked()
		if !t.removed {
			tx.Publish(t.uri, a, nil, "")
			t.host.publishList(tx)
		}
	})
	t.status = status
	close(t.done)
	t.host.pumps.Done()
}

// Write sends bytes to the process as typed input, and never waits on the
// process: what its input buffer does not take now waits in order, and
// input that arrives while more than MaxPendingInput waits is refused with
// ErrInputBacklog. On pipes the first ^C becomes SIGINT to the process
// group at once, ahead of any waiting input (there is no line discipline to
// do it); under a pty it is written through. Input to a terminal whose
// process has gone is dropped.
func (t *Terminal) Write(data string) error {
	p := t.process()
	if p == nil {
		return nil
	}
	if t.isPty {
		if t.marks != nil {
			// What was typed is how a command line is read back when the
			// shell does not report it.
			t.host.read(func() { t.marks.tracker.Input([]byte(data)) })
		}
		err := t.input.write(p, []byte(data))
		return ignoreGone(err)
	}
	before, after, ctrlC := strings.Cut(data, "\x03")
	if rest := before + after; rest != "" {
		if err := t.input.write(p, []byte(rest)); ignoreGone(err) != nil {
			return err
		}
	}
	if ctrlC {
		if err := p.Interrupt(); err != nil && err != ports.ErrNoProcess {
			return ignoreGone(err)
		}
	}
	return nil
}

// Feed sends bytes of a stream of input to the process as they are: no
// byte is read as a signal, on pipes either (a ^C in a file piped in is
// data). offset is the count of fed bytes the stream held before b, or -1
// to go on from its end; bytes already taken are skipped, so a sender may
// send again from the last offset it knows was taken (GapError tells it
// where that is). fed is told once the bytes reached the process. Fed
// bytes wait behind, and count with, typed input (MaxPendingInput).
func (t *Terminal) Feed(offset int64, b []byte, fed Fed) error {
	p := t.liveProcess()
	if p == nil {
		return ErrExited
	}
	if t.isPty && t.marks != nil {
		t.host.read(func() { t.marks.tracker.Input(b) })
	}
	return goneErr(t.input.feed(p, offset, b, goneFed(fed)))
}

// EndInput ends the fed stream once what was fed before it has reached
// the process (see inputQueue.end for what the end is on pipes and on a
// pty). offset is the stream's length as the sender counts it, or -1.
func (t *Terminal) EndInput(offset int64, fed Fed) error {
	p := t.liveProcess()
	if p == nil {
		return ErrExited
	}
	var eof []byte
	if t.isPty {
		eof = []byte{ptyEOF}
	}
	return goneErr(t.input.end(p, offset, eof, goneFed(fed)))
}

// liveProcess is the process, or nil once the terminal's exit is known.
func (t *Terminal) liveProcess() ports.Process {
	if t.exited() {
		return nil
	}
	return t.process()
}

// exited reports whether the process's exit is known.
func (t *Terminal) exited() bool {
	select {
	case <-t.done:
		return true
	default:
	}
	// The exit is in the state (and announced) a moment before done closes.
	var exited bool
	t.host.read(func() { exited = t.state.Lifecycle.IsExited() })
	return exited
}

// ptyEOF is the end-of-input character of a pseudoterminal's line
// discipline as set up by default (VEOF, ^D).
const ptyEOF = 0x04

// goneErr words a process that has gone as ErrExited, for a sender of
// input.
func goneErr(err error) error {
	if errors.Is(err, ports.ErrProcessGone) {
		return ErrExited
	}
	return err
}

// goneFed is fed with its error worded by goneErr.
func goneFed(fed Fed) Fed {
	return func(length int64, err error) { fed(length, goneErr(err)) }
}

// ignoreGone drops the errors of writing to or signalling a process that
// has already exited: such input is dropped silently.
func ignoreGone(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ports.ErrProcessGone) {
		return nil
	}
	return err
}
