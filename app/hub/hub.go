// Package hub fans actions out to subscribers, and owns nothing but that:
// the channels, who is subscribed to each, one host-wide sequence that
// numbers every action, the replay ring, and each subscriber's own bounded
// queue. The state the actions change is its publisher's, under its
// publisher's lock: the terminal host holds its own around Stage, so a
// subscriber's snapshot (read under that lock) and its live stream are
// joined with nothing lost or doubled between them.
//
// Flow control: a channel whose every subscriber holds more than the
// high-water mark is paused (AwaitFlow blocks its producer) until one of
// them is back under the low-water mark, so a terminal's process runs at the
// pace of its fastest viewer. A subscriber that falls a whole bound behind
// while others read on, and took nothing while that much arrived, is the
// only one dropped, with a reason (one that reads on, only more slowly, is
// given ReadingSlack bounds); so is the one furthest behind when every client
// together holds more than the hub's total.
package hub

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/shellgate/shellgate/domain/terminal"
)

// ErrUnsubscribed ends a subscriber that was removed on purpose.
var ErrUnsubscribed = errors.New("unsubscribed")

// Origin names the client dispatch an envelope answers.
type Origin struct {
	ClientID  string
	ClientSeq int64
}

// Event is one envelope on its way to subscribers.
type Event struct {
	Channel string
	Seq     uint64
	Action  terminal.Action
	Origin  *Origin
	// Rejection is set on a refused dispatch's echo.
	Rejection string
	// Audience, when set, is the only client id the event is for (the echo
	// of typed input goes back to its sender alone).
	Audience string
	// Own, set instead of an Action, holds the place of a message of the
	// consumer's own (a connection's answer to a request): the consumer
	// keeps the message, in the order of its places (QueueOwn); the hub
	// only keeps the place among the events around it.
	Own bool
	// OwnSize is about how many bytes that message will take on the wire
	// (its snapshots' text, say), counted against the subscriber's bound.
	OwnSize int
	// Encoded is shared by every subscriber an event published to a whole
	// channel reaches, so its encoding is made once (nil for events meant
	// for one subscriber, and in the replay ring).
	Encoded *Encoded
}

// Encoded is an event's wire encoding, made by the first consumer that
// needs it and shared with the others. The hub knows nothing of the wire:
// it only gives every subscriber of one event the same place to keep it.
type Encoded struct {
	once sync.Once
	b    []byte
	err  error
}

// Get returns the encoding, calling encode the first time only. The bytes
// are shared: callers must not change them.
func (e *Encoded) Get(encode func() ([]byte, error)) ([]byte, error) {
	e.once.Do(func() { e.b, e.err = encode() })
	return e.b, e.err
}

// Options bound the hub's memory.
type Options struct {
	// ReplayEvents and ReplayBytes bound the replay ring.
	ReplayEvents int
	ReplayBytes  int
	// HighWater and LowWater are the flow-control marks, in bytes a
	// subscriber holds: a channel whose every subscriber holds HighWater or
	// more pauses until one is back at LowWater or less.
	HighWater, LowWater int
	// MaxClientBytes caps what every subscriber together holds; past it the
	// one furthest behind is dropped (see shedLocked). 0 means
	// DefaultMaxClientBytes; negative, no cap.
	MaxClientBytes int64
}

// Defaults for Options.
const (
	DefaultReplayEvents = 4096
	DefaultReplayBytes  = 8 << 20
	// DefaultQueueBytes bounds one subscriber's queue.
	DefaultQueueBytes = 8 << 20
	// DefaultHighWater and DefaultLowWater are the flow-control marks.
	DefaultHighWater = 512 << 10
	DefaultLowWater  = 128 << 10
	// DefaultMaxClientBytes caps what all subscribers hold together.
	DefaultMaxClientBytes = 256 << 20
)

// Hub owns the sequence, the channels and their subscribers, and its lock
// guards those alone. A caller whose state change and the envelope
// announcing it must be one step (the terminal host) holds its own lock
// around Stage, so that whoever reads that state under the same lock, to
// subscribe, sees either both or neither.
type Hub struct {
	mu       sync.Mutex
	seq      uint64
	channels map[string]map[*Subscriber]struct{}
	ring     ring
	members  map[*Subscriber]struct{} // attached subscribers, for the total cap
	direct   []*Subscriber            // to hand their events to once the lock is released

	high, low int
	maxHeld   int64
	held      atomic.Int64 // bytes every attached subscriber holds
	pauses    atomic.Int64 // AwaitFlow calls that had to wait

	flowMu  sync.Mutex
	resume  chan struct{} // closed and replaced whenever a pause may have ended
	flowOff bool          // set by StopFlow: nothing pauses any more
}

// New returns an empty hub.
func New(o Options) *Hub {
	if o.ReplayEvents <= 0 {
		o.ReplayEvents = DefaultReplayEvents
	}
	if o.ReplayBytes <= 0 {
		o.ReplayBytes = DefaultReplayBytes
	}
	if o.HighWater <= 0 {
		o.HighWater = DefaultHighWater
	}
	if o.LowWater <= 0 || o.LowWater > o.HighWater {
		o.LowWater = min(DefaultLowWater, o.HighWater/4)
	}
	if o.MaxClientBytes == 0 {
		o.MaxClientBytes = DefaultMaxClientBytes
	}
	return &Hub{
		channels: make(map[string]map[*Subscriber]struct{}),
		ring:     ring{maxEvents: o.ReplayEvents, maxBytes: o.ReplayBytes},
		members:  make(map[*Subscriber]struct{}),
		high:     o.HighWater, low: o.LowWater, maxHeld: o.MaxClientBytes,
		resume: make(chan struct{}),
	}
}

// NewSubscriber returns a subscriber (as the package's NewSubscriber) that
// counts toward the hub's total from its first queued byte.
func (h *Hub) NewSubscriber(clientID string, limit int) *Subscriber {
	s := NewSubscriber(clientID, limit)
	h.mu.Lock()
	defer h.mu.Unlock()
	s.attach(h)
	return s
}

// Held is how many bytes every subscriber together holds now.
func (h *Hub) Held() int64 { return h.held.Load() }

// Pauses is how many times a producer had to wait in AwaitFlow.
func (h *Hub) Pauses() int64 { return h.pauses.Load() }

// AwaitFlow returns once channel may take more output: at once while it has
// no subscriber or any one of them is under the high-water mark, otherwise
// when one is back under the low-water mark, leaves, or the channel closes.
// It returns ctx's error if ctx ends first. A producer calls it before each
// read, so a process nobody keeps up with waits in its own write.
func (h *Hub) AwaitFlow(ctx context.Context, channel string) error {
	for waited := false; ; waited = true {
		h.flowMu.Lock()
		woken, off := h.resume, h.flowOff
		h.flowMu.Unlock()
		if off || !h.Paused(channel) {
			return nil
		}
		if !waited {
			h.pauses.Add(1)
		}
		select {
		case <-woken:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Paused reports whether channel's every subscriber (at least one) holds
// the high-water mark or more.
func (h *Hub) Paused(channel string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	subs := h.channels[channel]
	if len(subs) == 0 {
		return false
	}
	for s := range subs {
		if !s.over.Load() {
			return false
		}
	}
	return true
}

// StopFlow ends flow control for good: every paused producer goes on, and
// none pauses again (the host is stopping and its processes must drain).
func (h *Hub) StopFlow() {
	h.flowMu.Lock()
	h.flowOff = true
	h.flowMu.Unlock()
	h.wakeFlow()
}

// wakeFlow makes every AwaitFlow look again.
func (h *Hub) wakeFlow() {
	h.flowMu.Lock()
	defer h.flowMu.Unlock()
	close(h.resume)
	h.resume = make(chan struct{})
}

// Tx is the view of the hub inside Update; it is valid only during the call.
type Tx struct{ h *Hub }

// Update runs fn under the hub's lock, then delivers what it published
// (see Stage). fn must not block or do I/O.
func (h *Hub) Update(fn func(tx Tx)) { h.Stage(fn).Deliver() }

// Stage runs fn under the hub's lock and returns what is still to be
// delivered once the lock is released: a caller holding a lock of its own
// around Stage calls Deliver after releasing that one too, so no lock is
// held while a socket is written.
//
// A subscriber with a direct sender (SetDirect) that an event found idle,
// the only one on its channel, is handed its events by Deliver calling
// that sender: the goroutine that produced the event writes it, with no
// wake-up of the consumer's own goroutine.
func (h *Hub) Stage(fn func(tx Tx)) Delivery {
	h.mu.Lock()
	fn(Tx{h})
	direct := h.direct
	h.direct = nil
	h.mu.Unlock()
	return Delivery{direct: direct}
}

// Delivery is what a Stage left to deliver.
type Delivery struct{ direct []*Subscriber }

// Deliver hands the staged events to the direct senders they were for.
// Call it once, holding no lock.
func (d Delivery) Deliver() {
	for _, s := range d.direct {
		s.sendDirect()
	}
}

// Seq is the current sequence number: the last one handed out.
func (tx Tx) Seq() uint64 { return tx.h.seq }

// Open makes a channel subscribable; it reports false if it already was.
func (tx Tx) Open(channel string) bool {
	if _, ok := tx.h.channels[channel]; ok {
		return false
	}
	tx.h.channels[channel] = make(map[*Subscriber]struct{})
	return true
}

// IsOpen reports whether the channel exists.
func (tx Tx) IsOpen(channel string) bool {
	_, ok := tx.h.channels[channel]
	return ok
}

// Close removes a channel; its subscribers simply stop receiving it, and
// the replay ring lets go of its events.
func (tx Tx) Close(channel string) {
	for s := range tx.h.channels[channel] {
		delete(s.channels, channel)
	}
	delete(tx.h.channels, channel)
	tx.h.ring.forget(channel)
	tx.h.wakeFlow()
}

// Publish stamps the next sequence number on an action and queues it for
// every subscriber of the channel (or only those of audience, when set). It
// is kept in the replay ring.
func (tx Tx) Publish(channel string, a terminal.Action, origin *Origin, audience string) uint64 {
	h := tx.h
	h.seq++
	ev := Event{Channel: channel, Seq: h.seq, Action: a, Origin: origin, Audience: audience}
	h.ring.push(ev)
	subs := h.channels[channel]
	if audience == "" && len(subs) > 1 {
		ev.Encoded = &Encoded{}
	}
	for s := range subs {
		if audience == "" || s.clientID == audience {
			if len(subs) == 1 && ev.Size() <= maxDirect && s.pushDirect(ev) {
				h.direct = append(h.direct, s)
				continue
			}
			h.enqueue(s, ev)
		}
	}
	h.shedLocked()
	return h.seq
}

// maxDirect is the largest event handed to a direct sender: what a
// keystroke brings back. Bigger output is a flood, which the consumer's own
// goroutine writes, so the producer never waits in a write to a socket that
// filled up; flow control paces it instead.
const maxDirect = 1<<10 + 160

// shedLocked drops the subscribers furthest behind until all of them
// together hold no more than the cap; the caller holds h.mu. Furthest
// behind is first what arrived for a subscriber since it last held less
// than the high-water mark. A reader keeps coming back under it: each time
// a terminal it paused reads on, it is because a viewer like it got back
// under the low mark, so little piles up for it, however big the message
// it is writing. One that stopped reading stays over the mark while
// everything since piles up, even while its socket's buffer still took
// what it was written (so "wrote nothing for longest" is not the test:
// such a one wrote more recently than a reader busy with a large message).
// Among equals (nobody over the mark), what arrived since its connection
// last wrote a message, then what it holds.
func (h *Hub) shedLocked() {
	for h.maxHeld > 0 && h.held.Load() > h.maxHeld {
		var worst *Subscriber
		var most [3]int
		for s := range h.members {
			if b := s.behind(); b[2] > 0 && further(b, most) {
				worst, most = s, b
			}
		}
		if worst == nil {
			return
		}
		h.drop(worst, &SlowError{Limit: int(h.maxHeld), Total: true})
	}
}

// further orders behind's figures, most telling first.
func further(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return false
}

// Reject queues a refused dispatch's echo for its sender alone: a
// subscriber that need not be subscribed to the channel (its dispatch still
// needs an answer). The echo takes its own place in the sequence, like
// every envelope (serverSeq is monotonically increasing and assigned to
// each one, so two envelopes never share a number), and is kept in the
// replay ring for the sender's client id: a sender that reconnects before
// reading it still learns its dispatch was refused (D17 in
// docs/protocol.md).
func (tx Tx) Reject(s *Subscriber, channel string, a terminal.Action, origin *Origin, reason string) uint64 {
	return tx.Echo(s, channel, a, origin, reason)
}

// Echo queues an answer to a dispatch for its sender alone, with the
// reason it was refused, or with none when it is a repeat of an action
// already applied (the sender settles it as applied; nothing changes). It
// is numbered and kept like Reject's.
func (tx Tx) Echo(s *Subscriber, channel string, a terminal.Action, origin *Origin, reason string) uint64 {
	h := tx.h
	h.seq++
	s.attach(h)
	ev := Event{Channel: channel, Seq: h.seq, Action: a, Origin: origin, Rejection: reason, Audience: s.clientID}
	if s.clientID != "" {
		h.ring.push(ev) // without a client id nobody could be replayed it alone
	} else {
		ev.Audience = ""
	}
	h.enqueue(s, ev)
	return h.seq
}

// Subscribe adds s to an open channel inside an Update; it reports false
// when the channel is not open or s has ended.
func (tx Tx) Subscribe(s *Subscriber, channel string) bool {
	subs, ok := tx.h.channels[channel]
	if !ok || s.Err() != nil {
		return false
	}
	s.attach(tx.h)
	subs[s] = struct{}{}
	s.channels[channel] = struct{}{}
	if !s.over.Load() {
		// A channel whose every viewer had fallen behind has one that has
		// not: its paused producer goes on.
		tx.h.wakeFlow()
	}
	return true
}

// Resume returns, inside an Update, the events after seq that s missed on
// channels, or false when the ring no longer reaches back that far.
func (tx Tx) Resume(s *Subscriber, seq uint64, channels map[string]bool) ([]Event, bool) {
	return tx.h.ring.since(seq, tx.h.seq, func(ev Event) bool {
		return channels[ev.Channel] && (ev.Audience == "" || ev.Audience == s.clientID)
	})
}

// SetClientID names who s delivers to (known once a connection introduces
// itself).
func (h *Hub) SetClientID(s *Subscriber, id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clientID = id
}

// Unsubscribe removes s from one channel.
func (h *Hub) Unsubscribe(s *Subscriber, channel string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.channels[channel], s)
	delete(s.channels, channel)
	h.wakeFlow()
}

// Remove takes s off every channel and ends it with ErrUnsubscribed.
func (h *Hub) Remove(s *Subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.drop(s, ErrUnsubscribed)
	delete(h.members, s)
}

func (h *Hub) enqueue(s *Subscriber, ev Event) {
	if err := s.push(ev); err != nil {
		h.drop(s, err)
	}
}

// drop removes s from every channel; the caller holds h.mu.
func (h *Hub) drop(s *Subscriber, cause error) {
	for c := range s.channels {
		delete(h.channels[c], s)
	}
	clear(s.channels)
	s.end(cause)
	delete(h.members, s)
}
