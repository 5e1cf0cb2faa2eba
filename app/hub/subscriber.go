package hub

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/shellgate/shellgate/domain/terminal"
)

// SlowError ends a subscriber that fell too far behind: past its own bound
// (Limit), while others kept reading the same output, or furthest behind
// of all when the daemon's total for its clients (Total) was reached.
type SlowError struct {
	Limit int
	// Total is set when the subscriber was shed to keep every client's
	// pending bytes together under the hub's MaxClientBytes.
	Total bool
}

func (e *SlowError) Error() string {
	if e.Total {
		return fmt.Sprintf("the host holds %d bytes for its clients and this one was furthest behind; reconnect to resume", e.Limit)
	}
	return fmt.Sprintf("this client fell more than %d bytes behind the terminal output; reconnect to resume", e.Limit)
}

// Subscriber is one consumer's queue (one connection). The hub appends to it
// without ever waiting and calls the consumer's wake function (SetWake)
// when there is something to take; the consumer drains it with Take, and
// then Settle once what it took has been written.
//
// What the subscriber holds is counted from the moment an event is queued
// until the consumer settles the batch it took: an event being written to a
// slow socket weighs as much as one still queued. That count is what flow
// control (the hub's marks) and the bound look at.
type Subscriber struct {
	clientID string // written under both the hub's lock and mu; read under either
	limit    int
	channels map[string]struct{} // guarded by the hub's lock
	hub      *Hub                // set once, under the hub's lock, when first attached

	// over is true from the moment the subscriber holds HighWater bytes
	// until it is back under LowWater; the hub reads it under its own lock.
	over atomic.Bool

	mu       sync.Mutex
	queue    []Event
	bytes    int // queued plus in flight
	inFlight int // taken, not yet settled
	// received counts every byte ever queued; progressAt is what it was
	// when the consumer last reported a message written (Progress, Settle),
	// takenAt when it last took the queue (what it took is being written).
	received, progressAt, takenAt int
	// calmAt is what received was when the subscriber last held less than
	// the hub's high-water mark: one that reads keeps coming back under
	// it (that is what lets a paused terminal read on); one that stopped
	// stays over it while everything since piles up.
	calmAt   int
	cause    error
	held     bool // the consumer will take the queue itself: pushes do not wake it
	onEnd    func(error)
	direct   func() // SetDirect's sender
	onWake   func() // SetWake's
	directed bool   // an event waits for direct; pushes do not wake the consumer
	// deferred: what is queued was left for the next push or Flush to
	// carry (ReleaseDeferred), so that an echo and the output it causes
	// leave together.
	deferred bool
	closed   chan struct{}
}

// OnEnd has f called with the cause when the subscriber ends, on the
// goroutine that ends it, which may hold the hub's lock: f must not block
// or call into the hub. It saves a consumer a goroutine that only waits on
// Done to learn why.
func (s *Subscriber) OnEnd(f func(error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onEnd = f
}

// NewSubscriber returns a subscriber for clientID whose queue holds at most
// limit bytes of pending events (0 means DefaultQueueBytes). It joins a
// hub's flow control and total when first subscribed; Hub.NewSubscriber
// joins at once, so its answers count from the first.
func NewSubscriber(clientID string, limit int) *Subscriber {
	if limit <= 0 {
		limit = DefaultQueueBytes
	}
	return &Subscriber{
		clientID: clientID,
		limit:    limit,
		channels: make(map[string]struct{}),
		closed:   make(chan struct{}),
	}
}

// SetWake has f called whenever there is something for the consumer to
// take: a consumer that starts its writer only when there is something to
// write keeps no goroutine waiting while idle. f is called under the
// subscriber's lock: it must not block or call the subscriber. Set it
// before anything is queued (or Take once after setting it, for what came
// before); without it the consumer is never woken.
func (s *Subscriber) SetWake(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onWake = f
}

// ClientID is who the subscriber delivers to. Safe from any goroutine.
func (s *Subscriber) ClientID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientID
}

// Queued reports whether anything waits to be taken.
func (s *Subscriber) Queued() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue) > 0 && s.cause == nil
}

// SetDirect gives the subscriber a sender the hub may call, on the
// producer's goroutine and outside its lock, when an event reaches the
// subscriber idle (nothing held, nobody taking the queue) as the only one on
// its channel, and is small (about a keystroke's output: at most 1 KiB). send must take the queue (TakeDirect) and write it, or, when
// the consumer is busy writing, leave it to the consumer (ReleaseDirect).
// A lone viewer's keystroke echo then costs no wake-up of the consumer's
// goroutine; a backlog is never written this way.
func (s *Subscriber) SetDirect(send func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.direct = send
}

// pushDirect queues ev without waking the consumer when s is idle and has a direct
// sender, and reports whether it did; the caller then calls sendDirect.
func (s *Subscriber) pushDirect(ev Event) bool {
	s.mu.Lock()
	// A queue that holds only what was deferred, with nothing being
	// written, is idle: the direct sender takes it along.
	busy := s.bytes > 0 && !(s.deferred && s.inFlight == 0)
	if s.direct == nil || busy || s.held || s.directed || s.cause != nil {
		s.mu.Unlock()
		return false
	}
	s.directed = true
	s.held = true
	s.mu.Unlock()
	if err := s.push(ev); err != nil { // cannot fail on an empty queue but for a huge event
		s.mu.Lock()
		s.directed, s.held = false, false
		s.mu.Unlock()
		return false
	}
	return true
}

func (s *Subscriber) sendDirect() {
	s.mu.Lock()
	send := s.direct
	s.mu.Unlock()
	send()
}

// TakeDirect is TakeHeld for a direct sender.
func (s *Subscriber) TakeDirect() []Event {
	s.mu.Lock()
	s.directed = false
	s.mu.Unlock()
	return s.TakeHeld()
}

// ReleaseDirect leaves what the hub handed the direct sender to the
// consumer's own goroutine (waking it).
func (s *Subscriber) ReleaseDirect() {
	s.mu.Lock()
	s.directed = false
	s.mu.Unlock()
	s.Release()
}

// behind is how far the subscriber is behind, most telling first: what
// arrived since it last held less than the high-water mark, what arrived
// since its connection last wrote a message, and what it holds.
func (s *Subscriber) behind() [3]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return [3]int{s.received - s.calmAt, s.received - s.progressAt, s.bytes}
}

// push appends ev, or reports that the bound is exceeded.
func (s *Subscriber) push(ev Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cause != nil {
		return nil
	}
	size := ev.Size()
	if s.bytes+size > s.limit {
		// Past the bound: a subscriber that wrote nothing while a whole
		// bound more arrived has stopped reading; one that reads on, only
		// more slowly than the others, is given ReadingSlack bounds. What
		// it was writing when that began does not count: output that
		// arrives while a large snapshot is written is not a stall. (One
		// that stopped in the middle of a write is closed with what it
		// took and a bound more, at most twice the bound.)
		stalled := s.received+size-max(s.progressAt, s.takenAt) > s.limit
		if stalled || s.bytes+size > ReadingSlack*s.limit {
			return &SlowError{Limit: s.limit}
		}
	}
	s.received += size
	s.queue = append(s.queue, ev)
	s.bytes += size
	if h := s.hub; h != nil {
		h.held.Add(int64(size))
		if s.bytes >= h.high {
			s.over.Store(true)
		} else {
			s.calmAt = s.received
		}
	}
	if !s.held {
		s.deferred = false
		s.signalLocked()
	}
	return nil
}

func (s *Subscriber) signalLocked() {
	if s.onWake != nil {
		s.onWake()
	}
}

// Hold tells the subscriber that its consumer is about to take the queue
// itself (TakeHeld) soon: until then, pushes do not call its wake
// function. It saves a thread hand-off when the consumer's own goroutine
// queued the answer it is about to send.
func (s *Subscriber) Hold() {
	s.mu.Lock()
	s.held = true
	s.mu.Unlock()
}

// Release ends a Hold without taking the queue: the consumer is woken if
// anything was queued meanwhile.
func (s *Subscriber) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = false
	s.deferred = false
	if len(s.queue) > 0 {
		s.signalLocked()
	}
}

// ReleaseDeferred ends a Hold leaving what is queued for the next event
// (which wakes the consumer, or reaches the direct sender, and carries it
// along) or for Flush, whichever comes first. The read loop uses it for a
// keystroke's echo: the output the keystroke causes follows within a
// moment, and both then leave in one write.
func (s *Subscriber) ReleaseDeferred() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = false
	s.deferred = len(s.queue) > 0
}

// Flush ends a deferral: the consumer is woken for what was deferred, if
// it is still queued.
func (s *Subscriber) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.deferred {
		return
	}
	s.deferred = false
	if !s.held && len(s.queue) > 0 && s.cause == nil {
		s.signalLocked()
	}
}

// TakeHeld ends a Hold and returns what is queued, oldest first (nil when
// the subscriber has ended).
func (s *Subscriber) TakeHeld() []Event {
	s.mu.Lock()
	s.held = false
	s.mu.Unlock()
	return s.Take()
}

func (s *Subscriber) end(cause error) {
	s.mu.Lock()
	if s.cause != nil {
		s.mu.Unlock()
		return
	}
	s.cause = cause
	freed := s.bytes
	s.queue, s.bytes, s.inFlight = nil, 0, 0
	close(s.closed)
	h, onEnd := s.hub, s.onEnd
	s.mu.Unlock()
	s.over.Store(false)
	if h != nil {
		h.held.Add(-int64(freed))
		h.wakeFlow()
	}
	if onEnd != nil {
		onEnd(cause)
	}
}

// QueueOwn queues the place of a message of the consumer's own, of about
// size bytes beyond a small envelope, behind everything already queued:
// the consumer keeps its messages in a queue of its own, and writes the
// next of them where it takes a place (Event.Own). It reports false when
// the subscriber has ended or its bound is exceeded (it then ends with
// SlowError): a client that asks for large answers (snapshots) and does
// not read them falls behind like one that does not read output.
func (s *Subscriber) QueueOwn(size int) bool {
	if err := s.push(Event{Own: true, OwnSize: size}); err != nil {
		s.end(err)
		return false
	}
	return s.Err() == nil
}

// Take returns the pending events, oldest first, without waiting: none
// once the subscriber has ended. They stay counted as held until Settle
// (or the next Take): the consumer is writing them.
func (s *Subscriber) Take() []Event {
	s.mu.Lock()
	if s.cause != nil {
		s.mu.Unlock()
		return nil
	}
	wake := s.settleLocked()
	batch := s.queue
	s.queue = nil
	s.deferred = false
	s.inFlight = s.bytes
	s.takenAt = s.received
	s.mu.Unlock()
	if wake != nil {
		wake.wakeFlow()
	}
	return batch
}

// Settle tells the subscriber that what was last taken has been written (or
// dropped): it no longer counts as held. A subscriber back under the hub's
// low-water mark lets a paused terminal read again.
func (s *Subscriber) Settle() {
	s.mu.Lock()
	wake := s.settleLocked()
	s.mu.Unlock()
	if wake != nil {
		wake.wakeFlow()
	}
}

// ReadingSlack is how many bounds behind a subscriber that keeps reading
// may fall before it is dropped: past one bound, only a subscriber that
// wrote nothing while a whole bound more arrived is dropped.
const ReadingSlack = 4

// Progress tells the subscriber that one more message of what it took has
// been written: it is reading, however far behind it is.
func (s *Subscriber) Progress() {
	s.mu.Lock()
	s.progressAt = s.received
	s.mu.Unlock()
}

// settleLocked releases the batch in flight; it returns the hub to wake
// when that took the subscriber from over the high-water mark to under the
// low one, else nil.
func (s *Subscriber) settleLocked() *Hub {
	if s.inFlight == 0 {
		return nil
	}
	s.bytes -= s.inFlight
	s.progressAt = s.received
	h := s.hub
	if h != nil {
		h.held.Add(-int64(s.inFlight))
		if s.bytes < h.high {
			s.calmAt = s.received
		}
	}
	s.inFlight = 0
	if h != nil && s.bytes <= h.low && s.over.Load() {
		s.over.Store(false)
		return h
	}
	return nil
}

// attach joins s to h's flow control and total; the caller holds h's lock.
func (s *Subscriber) attach(h *Hub) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hub != nil || s.cause != nil {
		return
	}
	s.hub = h
	h.held.Add(int64(s.bytes))
	s.calmAt = s.received
	if s.bytes >= h.high {
		s.over.Store(true)
	}
	h.members[s] = struct{}{}
}

// Done is closed when the subscriber has ended.
func (s *Subscriber) Done() <-chan struct{} { return s.closed }

// Err is why the subscriber ended, or nil while it runs.
func (s *Subscriber) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cause
}

// Size estimates the event's encoded size, its text plus a fixed allowance
// for the envelope: what it counts against a subscriber's bound.
func (ev Event) Size() int {
	const envelope = 160
	if ev.Own {
		return envelope + ev.OwnSize
	}
	switch a := ev.Action.(type) {
	case terminal.Data:
		return envelope + len(a.Data)
	case terminal.Input:
		return envelope + len(a.Data)
	case interface{ EncodedSizeHint() int }:
		return envelope + a.EncodedSizeHint()
	}
	return envelope
}
