package ahp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shellgate/shellgate/app/gate"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

// Options tune the protocol server.
type Options struct {
	// QueueBytes bounds a connection's outbound queue (default 8 MiB); a
	// client that falls further behind is closed with a reason.
	QueueBytes int
	// ReconnectGrace is how long a dropped client's version and
	// subscriptions are kept for reconnect (default 5 minutes).
	ReconnectGrace time.Duration
	// RevocationCheck is how often every signed-in connection is checked
	// against the users file (default 1 s): one whose token was rotated or
	// removed is closed with 1008 even while it sends nothing.
	RevocationCheck time.Duration
	// SignInGrace is how long a connection may stay without a sign-in
	// (default 2 minutes, as OpenSSH's LoginGraceTime); it is then closed
	// with 1008. Checked with RevocationCheck.
	SignInGrace time.Duration
	// MaxUnauthenticated caps the connections open without a sign-in at
	// once (default 64); one more is closed with 1008 at once. Connections
	// that signed in are not counted, so a person with a token can always
	// connect.
	MaxUnauthenticated int
	// MaxConnections caps the protocol connections open at once, signed in
	// or not (default 256); one more is closed with 1013 at once, unless
	// its caller may use the reserve (ReservedConnections).
	MaxConnections int
	// ReservedConnections are kept beyond MaxConnections for callers the
	// gate counts as admins (gate.Reserved), so that an admin can still
	// get in when everyone else has used up MaxConnections (default 4;
	// negative keeps none).
	ReservedConnections int
	// ServerVersion is reported in serverInfo.
	ServerVersion string
	// Metrics, if set, is told about connections and traffic.
	Metrics Metrics
	// Resource is the sign-in record's resource identifier (the host's URL).
	Resource func() string
	// MayClaimSession reports whether the caller may name the agent session
	// in a terminal claim (D9): a session it may drive. Nil refuses every
	// session claim (a host with no agent sessions).
	MayClaimSession func(caller gate.Caller, session string) bool
}

// Metrics receives the protocol server's counts.
type Metrics interface {
	ConnectionOpened()
	ConnectionClosed()
	BytesSent(n int)
	SlowClientDropped()
}

type noMetrics struct{}

func (noMetrics) ConnectionOpened()  {}
func (noMetrics) ConnectionClosed()  {}
func (noMetrics) BytesSent(int)      {}
func (noMetrics) SlowClientDropped() {}

// Server serves AHP over connections. It reaches terminals only through
// the use cases of terminals.App, which decide every request with the
// app's gate: the server signs connections in with that gate, and lets
// nobody in when the app was given none.
type Server struct {
	app   *terminals.App
	clock ports.Clock
	log   *slog.Logger
	opts  Options

	gate *gate.Gate

	mu      sync.Mutex
	clients map[string]*clientRecord
	conns   map[*conn]struct{}
	closing bool
	sweep   ports.Timer    // the next revocation check; nil without a gate
	sweeps  sync.WaitGroup // revocation checks under way
	wg      sync.WaitGroup
}

// clientRecord is what a client id keeps across connections.
type clientRecord struct {
	version  string
	channels []string
	applied  seqWindow // recently applied dispatches, against retries (D18)
	person   string    // the principal the id is bound to: its first user ("" anonymous)
	live     bool
	conn     *conn // the connection that last introduced the client id
	expiry   ports.Timer
}

// NewServer returns a protocol server over the terminal use cases.
func NewServer(app *terminals.App, clock ports.Clock, log *slog.Logger, opts Options) *Server {
	if opts.QueueBytes <= 0 {
		opts.QueueBytes = terminals.DefaultQueueBytes
	}
	if opts.ReconnectGrace <= 0 {
		opts.ReconnectGrace = 5 * time.Minute
	}
	if opts.SignInGrace <= 0 {
		opts.SignInGrace = 2 * time.Minute
	}
	if opts.MaxUnauthenticated <= 0 {
		opts.MaxUnauthenticated = 64
	}
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = 256
	}
	if opts.ReservedConnections == 0 {
		opts.ReservedConnections = 4
	}
	opts.ReservedConnections = max(opts.ReservedConnections, 0)
	if opts.RevocationCheck <= 0 {
		opts.RevocationCheck = time.Second
	}
	if opts.ServerVersion == "" {
		opts.ServerVersion = "0.1.0"
	}
	if opts.Metrics == nil {
		opts.Metrics = noMetrics{}
	}
	g := app.Gate()
	s := &Server{
		app: app, clock: clock, log: log, opts: opts, gate: g,
		clients: make(map[string]*clientRecord), conns: make(map[*conn]struct{}),
	}
	if !g.AllowsAll() {
		s.mu.Lock() // the check may run, and reschedule, before this returns
		s.sweep = clock.AfterFunc(opts.RevocationCheck, s.closeRevoked)
		s.mu.Unlock()
	}
	return s
}

// anonymous counts the connections without a sign-in; s.mu is held.
func (s *Server) anonymous() int {
	n := 0
	for c := range s.conns {
		if !c.who().SignedIn() {
			n++
		}
	}
	return n
}

// overConnectionLimit says why caller's connection may not be taken, or ""
// when it may: admins may use the reserve beyond MaxConnections. s.mu is
// held. (A close reason must fit in 123 bytes.)
func (s *Server) overConnectionLimit(caller gate.Caller) string {
	if s.gate.Reserved(caller) {
		if len(s.conns) < s.opts.MaxConnections+s.opts.ReservedConnections {
			return ""
		}
		return fmt.Sprintf("max_connections (%d) and the admins' reserve (%d) are in use; try again once one has closed", s.opts.MaxConnections, s.opts.ReservedConnections)
	}
	if len(s.conns) < s.opts.MaxConnections {
		return ""
	}
	return fmt.Sprintf("max_connections (%d) are in use; try again once one has closed", s.opts.MaxConnections)
}

// revokedReason is the close reason of a connection whose sign-in was
// revoked.
const revokedReason = "your sign-in was revoked (token rotated or removed); connect again with a current token"

// closeRevoked closes every connection signed in with a token that has
// since been rotated or removed, then schedules the next check. Each close
// waits for its peer's answer, so they run at once.
func (s *Server) closeRevoked() {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return
	}
	s.sweeps.Add(1)
	defer s.sweeps.Done()
	type ending struct {
		c      *conn
		reason string
	}
	var ends []ending
	now := s.clock.Now()
	for c := range s.conns {
		who := c.who()
		switch {
		case s.gate.Revoked(who):
			ends = append(ends, ending{c, revokedReason})
		case !who.SignedIn() && now.Sub(c.opened) >= s.opts.SignInGrace:
			ends = append(ends, ending{c, fmt.Sprintf("not signed in within %s; connect with a token (Authorization: Bearer) or authenticate sooner", s.opts.SignInGrace)})
		}
	}
	s.mu.Unlock()
	var closing sync.WaitGroup
	for _, e := range ends {
		closing.Go(func() { e.c.close(ports.ClosePolicy, e.reason) })
	}
	closing.Wait()
	s.mu.Lock()
	if !s.closing {
		s.sweep = s.clock.AfterFunc(s.opts.RevocationCheck, s.closeRevoked)
	}
	s.mu.Unlock()
}

// ServeListener accepts connections until ctx ends or the listener closes.
// Ending ctx stops accepting; the connections already served run on until
// Close ends them with a reason.
func (s *Server) ServeListener(ctx context.Context, ln ports.Listener) error {
	connCtx := context.WithoutCancel(ctx)
	for {
		c, err := ln.Accept(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, ports.ErrListenerClosed) {
				return nil
			}
			return err
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.Serve(connCtx, c)
		}()
	}
}

// Close ends every connection with a reason and waits for them.
func (s *Server) Close(reason string) {
	s.mu.Lock()
	s.closing = true
	if s.sweep != nil {
		s.sweep.Stop()
	}
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	for _, r := range s.clients {
		if r.expiry != nil {
			r.expiry.Stop()
		}
	}
	s.mu.Unlock()
	// At once: each close waits for its peer's answer for a while, and one
	// after another a few silent peers would use up the daemon's stop time.
	var closing sync.WaitGroup
	for _, c := range conns {
		closing.Go(func() { c.close(ports.CloseGoingAway, reason) })
	}
	closing.Wait()
	s.sweeps.Wait()
	s.wg.Wait()
}

// Serve runs one connection until it ends.
func (s *Server) Serve(ctx context.Context, pc ports.Conn) {
	c := &conn{srv: s, pc: pc, sub: s.app.NewViewer(s.opts.QueueBytes), shape: newestShape}
	if s.gate.AllowsAll() {
		c.caller = gate.Caller{Root: true}
	} else if tok := pc.Peer().Token; tok != "" {
		// A token presented at the door signs the connection in from its
		// first frame (D5); the transport already refused unknown ones.
		if caller, ok := s.gate.SignIn(tok); ok {
			c.caller = caller
		}
	}
	c.opened = s.clock.Now()
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		_ = pc.Close(ports.CloseGoingAway, "This host is closing")
		return
	}
	if !c.caller.SignedIn() && s.anonymous() >= s.opts.MaxUnauthenticated {
		s.mu.Unlock()
		_ = pc.Close(ports.ClosePolicy, fmt.Sprintf("%d connections are already open without a sign-in; connect with a token (Authorization: Bearer)", s.opts.MaxUnauthenticated))
		return
	}
	if reason := s.overConnectionLimit(c.caller); reason != "" {
		s.mu.Unlock()
		_ = pc.Close(ports.CloseTryAgainLater, reason)
		return
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	s.opts.Metrics.ConnectionOpened()
	defer s.opts.Metrics.ConnectionClosed()

	listening := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.writer.ctx = ctx
	c.sub.SetWake(c.kickWriter)
	c.sub.OnEnd(c.closeWhenSlow)
	c.sub.SetDirect(func() { c.sendDirect(ctx) })
	c.readLoop(listening, ctx)
	if c.echoTimer != nil {
		c.echoTimer.Stop()
	}
	c.setCaller(c.who(), 0) // stops a pending sign-in expiry
	s.app.Leave(c.sub)      // ends the viewer: a running writer ends after its write
	c.stopWriter()
	c.closer.Wait()
	_ = pc.Close(ports.CloseNormal, "")
	s.forget(c)
}

// forget detaches a closed connection, keeping its client's record for the
// reconnect grace period.
func (s *Server) forget(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
	rec := s.clients[c.clientID]
	if c.clientID == "" || rec == nil || rec.conn != c {
		return
	}
	rec.live = false
	rec.conn = nil // a departed client keeps its cursor, not its connection
	rec.channels = c.subscribed()
	id := c.clientID
	rec.expiry = s.clock.AfterFunc(s.opts.ReconnectGrace, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if r := s.clients[id]; r == rec && !r.live {
			delete(s.clients, id)
		}
	})
}

// conn is one connection's protocol state. Only its read loop changes it.
type conn struct {
	srv *Server
	pc  ports.Conn
	sub *terminals.Viewer
	own ownQueue // the connection's own messages, in the order of their places in sub

	opened       time.Time // when the connection arrived, for SignInGrace
	initialized  bool
	clientID     string
	defaultShell string

	chMu     sync.Mutex
	channels channelSet

	closeOnce sync.Once
	closer    sync.WaitGroup // a close for falling behind, under way
	writer    writer

	// deferEcho: the frame just handled was a keystroke whose echo may wait
	// for its output (readLoop). Read loop only.
	deferEcho bool
	echoTimer *time.Timer // flushes a deferred echo; read loop only
	echoArmed atomic.Bool

	// wmu is held by whoever writes to pc: the writer goroutine, or the read
	// loop sending its own answers.
	wmu sync.Mutex
	// shape is the negotiated version's wire shape; the read loop sets it
	// (holding wmu) when the connection introduces itself.
	shape shape
	// mayRead are the channels the caller was found to read (under wmu),
	// good while the users store's generation and the caller are the ones
	// they were found at (stillReadable).
	mayRead    channelSet
	mayReadSet bool // mayRead was begun for readGen and readWho
	readGen    uint64
	readWho    gate.Caller

	authMu    sync.Mutex
	caller    gate.Caller
	callerGen uint64
	expiry    ports.Timer
}

func (c *conn) subscribed() []string {
	c.chMu.Lock()
	defer c.chMu.Unlock()
	return c.channels.names()
}

func (c *conn) isSubscribed(ch string) bool {
	c.chMu.Lock()
	defer c.chMu.Unlock()
	return c.channels.has(ch)
}

func (c *conn) setSubscribed(ch string, on bool) {
	c.chMu.Lock()
	defer c.chMu.Unlock()
	if on {
		c.channels.add(ch)
	} else {
		c.channels.remove(ch)
	}
}

func (c *conn) close(code ports.CloseCode, reason string) {
	c.closeOnce.Do(func() { _ = c.pc.Close(code, reason) })
}

// ownQueue is a connection's queue of its own messages (answers to its
// requests, its notifications): the hub's queue holds each one's place
// among the events (QueueOwn), and whoever writes takes the next of them
// at each place, so an answer keeps its place (a subscribe's answer comes
// before the events after its snapshot).
type ownQueue struct {
	mu sync.Mutex
	q  []any
}

// queue queues a message of the connection's own behind everything
// already queued for it; false when the connection's queue has ended.
func (c *conn) queue(v any) bool { return c.queueSized(v, 0) }

// queueSized is queue for a message of about size bytes beyond a small
// envelope, which count against the connection's bound.
func (c *conn) queueSized(v any, size int) bool {
	c.own.mu.Lock()
	defer c.own.mu.Unlock()
	// The message is kept before its place is queued, so a writer that
	// takes the place finds it; and both under the lock, so places and
	// messages are in the same order whoever queues them.
	c.own.q = append(c.own.q, v)
	if !c.sub.QueueOwn(size) {
		c.own.q[len(c.own.q)-1] = nil
		c.own.q = c.own.q[:len(c.own.q)-1]
		return false
	}
	return true
}

// nextOwn takes the message of the place the writer reached.
func (c *conn) nextOwn() any {
	c.own.mu.Lock()
	defer c.own.mu.Unlock()
	if len(c.own.q) == 0 {
		return nil
	}
	v := c.own.q[0]
	c.own.q[0] = nil
	c.own.q = c.own.q[1:]
	return v
}

// reply queues an answer behind everything already queued.
func (c *conn) reply(id []byte, result any, err *Error) {
	c.queue(response{ID: id, Result: result, Err: err})
}

// readLoop reads frames until the connection ends and serves them within
// ctx. Its reads wait within listening, the context the connection was
// served in: a read that is waiting ties itself to the context it waits
// in, and tied to ctx, which only this connection's end cancels, it cost
// each idle connection a list of ctx's dependants of its own (about 250
// bytes). The read ends either way: at the end of listening, or when the
// connection closes.
func (c *conn) readLoop(listening, ctx context.Context) {
	for {
		frame, err := c.pc.Read(listening)
		if err != nil {
			return
		}
		if c.srv.gate.Revoked(c.who()) {
			// Between two checks: the old token does nothing more.
			c.close(ports.ClosePolicy, revokedReason)
			return
		}
		m, perr := decode(frame)
		if perr == nil && m.Method == "dispatchAction" {
			err = c.serve(ctx, m, perr) // a keystroke: no hand-off
		} else {
			err = c.aside(func() error { return c.serve(ctx, m, perr) })
		}
		if err != nil {
			return
		}
	}
}

// aside runs fn on a goroutine of its own and waits for it. Creating a
// terminal, subscribing or initializing goes deep (a snapshot's encoding
// among it) and would grow the read loop's stack to 8 KiB for good: the
// loop's own idle depth is more than the runtime shrinks back from. A
// short-lived goroutine takes that depth away with it, and the loop of an
// idle connection stays at 4 KiB (docs/measured.md). Keystrokes, the
// frequent case, are served inline.
func (c *conn) aside(fn func() error) error {
	var err error
	var done sync.WaitGroup
	done.Go(func() { err = fn() })
	done.Wait()
	return err
}

// serve answers one decoded frame and sends the answer, from the read
// loop's turn (see readLoop).
func (c *conn) serve(ctx context.Context, m message, perr *Error) error {
	c.sub.Hold()
	c.handle(ctx, m, perr)
	if c.deferEcho {
		// A keystroke's echo: it leaves with the output the keystroke
		// causes, in one write, or alone after echoDeferral.
		c.deferEcho = false
		c.sub.ReleaseDeferred()
		c.armEchoFlush()
		return nil
	}
	// The answer is sent from here when the writer is idle: waking it
	// would cost a thread hand-off for every request.
	if !c.wmu.TryLock() {
		c.sub.Release()
		return nil
	}
	err := c.send(ctx, c.sub.TakeHeld())
	err = c.sendArrived(ctx, err)
	c.wmu.Unlock()
	return err
}

// echoDeferral is the longest a keystroke's echo waits for the output the
// keystroke causes (the echo of a password, which prints nothing, waits
// this long). An echo is a confirmation: nothing waits on it but the
// client's record of what is settled.
const echoDeferral = 5 * time.Millisecond

// armEchoFlush makes sure a deferred echo leaves by echoDeferral: the first
// deferral's deadline stands for those that follow it. Read loop only.
func (c *conn) armEchoFlush() {
	if c.echoArmed.Swap(true) {
		return
	}
	if c.echoTimer == nil {
		c.echoTimer = time.AfterFunc(echoDeferral, c.flushEcho)
		return
	}
	c.echoTimer.Reset(echoDeferral)
}

func (c *conn) flushEcho() {
	c.echoArmed.Store(false)
	c.sub.Flush()
}

// sendArrived sends, while the caller still has the turn to write, what
// arrived during its last write: a keystroke's output usually comes while
// its echo is being written, and handing it to the writer goroutine would
// cost a wake-up and a second wait for the turn. Bounded, so a flood cannot
// keep the read loop from reading.
func (c *conn) sendArrived(ctx context.Context, err error) error {
	for range 2 {
		if err != nil || !c.sub.Queued() {
			return err
		}
		err = c.send(ctx, c.sub.Take())
	}
	return err
}

// sendDirect writes what the hub handed over on the producer's goroutine
// (the pump's, for a lone viewer's output): a wake-up of the writer saved
// per keystroke. When the writer or the read loop is writing, it is left to
// them.
func (c *conn) sendDirect(ctx context.Context) {
	if !c.wmu.TryLock() {
		c.sub.ReleaseDirect()
		return
	}
	defer c.wmu.Unlock()
	// A failed write closes the connection.
	_ = c.sendArrived(ctx, c.send(ctx, c.sub.TakeDirect()))
}

// writer is a connection's writing goroutine, which runs only while there
// is something to write: an idle connection keeps no goroutine (and no
// stack) waiting for output. The hub starts it (kickWriter) when an event
// is queued that neither the read loop nor a direct sender will take.
//
// kickWriter runs under the subscriber's lock, and the goroutine takes that
// lock (Take) while it has the turn to write: so the goroutine never waits
// on mu, and what it needs to know is in atomics.
type writer struct {
	ctx     context.Context
	running atomic.Bool // a goroutine is (or is about to be) writing
	pending atomic.Bool // something was queued since the goroutine last took
	mu      sync.Mutex  // orders starts (wg.Add) before stopWriter's Wait
	stopped bool
	wg      sync.WaitGroup
}

// kickWriter starts the writer unless it runs. The hub calls it holding
// the subscriber's lock, so it only starts a goroutine.
func (c *conn) kickWriter() {
	w := &c.writer
	w.pending.Store(true)
	if w.running.Load() {
		return // it looks at pending before it ends
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || !w.running.CompareAndSwap(false, true) {
		return
	}
	w.wg.Add(1)
	go c.writeQueued()
}

// writeQueued sends queued answers and events in order until nothing is
// queued, then ends. A client that fell too far behind is closed with the
// reason (closeWhenSlow); a failed write ends the connection's writing.
func (c *conn) writeQueued() {
	w := &c.writer
	defer w.wg.Done()
	for {
		w.pending.Store(false)
		// Take the batch only with the turn to write: the read loop may send
		// what is queued meanwhile, and batches must go out in order.
		c.wmu.Lock()
		batch := c.sub.Take()
		var err error
		if len(batch) > 0 {
			err = c.send(w.ctx, batch)
		}
		c.wmu.Unlock()
		if err != nil || w.ctx.Err() != nil {
			w.mu.Lock()
			w.stopped = true // the connection is ending; nothing more to write
			w.mu.Unlock()
			w.running.Store(false)
			return
		}
		if w.pending.Load() {
			continue
		}
		w.running.Store(false)
		// A kick between the two loads above found running still set and
		// left its event to this goroutine: take the turn back for it,
		// unless a new goroutine already has.
		if !w.pending.Load() || !w.running.CompareAndSwap(false, true) {
			return
		}
	}
}

// stopWriter keeps the writer from starting again and waits for a running
// one to end.
func (c *conn) stopWriter() {
	w := &c.writer
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
	w.wg.Wait()
}

// send writes a batch in order; c.wmu is held. An error ends the
// connection's writing: the write failed, or an answer closed it. Runs of
// one terminal's output go out as one message each (up to maxMerged bytes),
// assembled from the encoding every viewer shares; a lone event goes out as
// that shared encoding itself. The connection keeps no buffer between
// batches: an idle one holds none.
func (c *conn) send(ctx context.Context, batch []terminals.Event) (rerr error) {
	defer c.sub.Settle()
	batch = c.stillReadable(batch)
	var buf *[]byte // from bufPool, for merged runs and unshared events
	defer func() {
		if buf != nil {
			putBuf(buf)
		}
	}()
	scratch := func() []byte {
		if buf == nil {
			buf = getBuf()
		}
		return (*buf)[:0]
	}
	keep := func(msg []byte) {
		if buf != nil && cap(msg) > cap(*buf) {
			*buf = msg[:0] // grown: the larger one goes back to the pool
		}
	}
	if gatherable(batch) {
		if g, ok := c.pc.(ports.Gatherer); ok && g.Gather() {
			defer func() {
				if err := g.Flush(ctx); err != nil && rerr == nil {
					c.close(ports.CloseInternal, "write failed")
					rerr = err
				}
			}()
		}
	}
	for i := 0; i < len(batch); {
		ev := batch[i]
		var msg []byte
		var closeAfter string
		var err error
		j := i + 1
		switch {
		case ev.Own:
			switch r := c.nextOwn().(type) {
			case response:
				closeAfter = r.closeAfter
				msg, err = r.encode()
			case notification:
				msg, err = r.encode()
			}
		case plainData(ev):
			size := len(ev.Action.(terminal.Data).Data)
			for j < len(batch) && plainData(batch[j]) && batch[j].Channel == ev.Channel && size < maxMerged {
				size += len(batch[j].Action.(terminal.Data).Data)
				j++
			}
			if j == i+1 {
				msg, err = c.encoded(ev, scratch)
			} else {
				msg, err = c.merged(scratch(), batch[i:j])
			}
			if j > i+1 || ev.Encoded == nil {
				keep(msg) // built in scratch, not the shared encoding
			}
		case ev.Action != nil:
			msg, err = c.shape.appendEnvelope(scratch(), ev, c.outgoing(ev.Action))
			keep(msg)
		}
		i = j
		if err != nil {
			c.srv.log.Error("encoding a message", "err", err)
			continue
		}
		if msg == nil {
			continue
		}
		// A client dropped for its pace gets none of what was taken before
		// the drop: its close goes out next, and reconnecting replays the
		// rest; writing on would only delay the close it must see.
		if slow := (*terminals.SlowError)(nil); errors.As(c.sub.Err(), &slow) {
			return slow
		}
		if err := c.pc.Write(ctx, msg); err != nil {
			c.close(ports.CloseInternal, "write failed")
			return err
		}
		c.srv.opts.Metrics.BytesSent(len(msg))
		c.sub.Progress()
		if closeAfter != "" {
			c.close(ports.ClosePolicy, closeAfter)
			return errClosedAfter
		}
	}
	return nil
}

// gatherable is a batch of a few small messages, such as a keystroke's echo
// and its output: they leave in one socket write. A larger batch is
// written message by message, so nothing big is copied once more.
func gatherable(batch []terminals.Event) bool {
	if len(batch) < 2 || len(batch) > 8 {
		return false
	}
	size := 0
	for _, ev := range batch {
		size += ev.Size() // answers too: a snapshot can be megabytes
	}
	return size <= 16<<10
}

// maxMerged is about the most output one merged message carries: a long
// run is cut there, so no message (and no buffer) grows without end.
const maxMerged = 256 << 10

// plainData is terminal output meant for every viewer: what is merged and
// shared.
func plainData(ev terminals.Event) bool {
	_, ok := ev.Action.(terminal.Data)
	return ok && ev.Origin == nil && ev.Rejection == "" && ev.Audience == ""
}

// encoded is a lone data event's message: the encoding its viewers share,
// made by the first of them; or, with no one to share with, made in scratch.
func (c *conn) encoded(ev terminals.Event, scratch func() []byte) ([]byte, error) {
	if ev.Encoded == nil {
		return dataEnvelope(scratch(), ev), nil
	}
	return ev.Encoded.Get(func() ([]byte, error) {
		// Sized exactly: it lives as long as the slowest viewer's queue
		// holds the event.
		return dataEnvelope(make([]byte, 0, dataEnvelopeSize(ev)), ev), nil
	})
}

// merged appends to buf one envelope carrying a run's output and the last
// sequence number (the reduced state is the same as the run's). Each
// event's escaped text is copied from its shared encoding when it has one.
func (c *conn) merged(buf []byte, run []terminals.Event) ([]byte, error) {
	last := run[len(run)-1]
	buf = appendDataPrefix(buf, last.Channel)
	for _, ev := range run {
		if ev.Encoded == nil {
			buf = appendEscaped(buf, ev.Action.(terminal.Data).Data)
			continue
		}
		enc, err := c.encoded(ev, nil)
		if err != nil {
			return nil, err
		}
		buf = append(buf, dataBody(enc, ev)...)
	}
	return appendDataSuffix(buf, last.Seq), nil
}

// bufPool lends the buffers messages are assembled in. A buffer grown past
// maxPooled is let go instead of kept: one huge message must not pin its
// size for ever.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

const maxPooled = maxMerged + 64<<10

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) > maxPooled {
		return
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}

var errClosedAfter = errors.New("closed after an answer")

// stillReadable drops from a batch the events of the channels the caller
// may no longer read, and unsubscribes from them: reading was decided at
// subscribe, and a person removed from the users file, given a lesser role,
// signed out or whose sign-in expired must not go on receiving a terminal's
// output. The socket stays open (D7 in docs/protocol.md); the next
// command says why. The echoes of this client's own dispatches (a refusal,
// its typed input) are its own and always go. A channel found readable
// stays so until the users store's generation moves (an edit of the file,
// an expired link) or the caller changes (a sign-in or out): only then is
// it asked again, so a batch costs the store one non-blocking check.
func (c *conn) stillReadable(batch []terminals.Event) []terminals.Event {
	current := false // the cache was checked against the store for this batch
	mayRead := func(channel string) bool {
		if !current {
			// Asked once per batch, and only for a batch with a channel
			// to check: answers and the root list need nothing.
			current = true
			gen, who := c.srv.gate.Generation(), c.who()
			if !c.mayReadSet || gen != c.readGen || who != c.readWho {
				c.mayRead, c.mayReadSet, c.readGen, c.readWho = channelSet{}, true, gen, who
			}
		}
		if c.mayRead.has(channel) {
			return true
		}
		if c.srv.gate.Read(c.readWho, channel) != nil {
			_ = c.srv.app.Unsubscribe.Handle(context.Background(), c.readWho, terminals.UnsubscribeRequest{Viewer: c.sub, Channel: channel})
			c.setSubscribed(channel, false)
			return false
		}
		c.mayRead.add(channel)
		return true
	}
	out := batch[:0]
	for _, ev := range batch {
		mine := ev.Own || ev.Rejection != "" || ev.Audience != ""
		if !mine && ev.Channel != terminals.RootChannel && !mayRead(ev.Channel) {
			continue
		}
		out = append(out, ev)
	}
	return out
}

// closeWhenSlow closes the connection, with the reason, the moment its
// subscriber is dropped for falling behind: the writer may be stuck in a
// write to a client that stopped reading, and must not be what decides
// when it ends. It runs where the hub drops the subscriber, so the close
// (which waits for the peer) gets a goroutine of its own, only then.
func (c *conn) closeWhenSlow(cause error) {
	var slow *terminals.SlowError
	if !errors.As(cause, &slow) {
		return
	}
	c.srv.opts.Metrics.SlowClientDropped()
	c.srv.log.Warn("closing a slow client", "client", c.sub.ClientID(), "reason", cause.Error())
	c.closer.Go(func() { c.close(ports.ClosePolicy, cause.Error()) })
}

// outgoing adapts an action to this connection: another connection's
// defaultShell is never shown.
func (c *conn) outgoing(a terminal.Action) terminal.Action {
	if cc, ok := a.(configChanged); ok && cc.owner != c {
		if _, has := cc.config["defaultShell"]; has {
			out := configChanged{config: map[string]any{}, replace: cc.replace}
			for k, v := range cc.config {
				if k != "defaultShell" {
					out.config[k] = v
				}
			}
			return out
		}
	}
	return a
}
