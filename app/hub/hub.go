// Package hub fans actions out to subscribers. Every action on every channel
// gets the next number of one host-wide sequence; a subscriber's snapshot and
// its live stream are joined under the hub's lock, so nothing is lost or
// doubled between them; each subscriber has its own bounded queue, and one
// that falls behind is dropped with a reason instead of stalling anyone.
package hub

import (
	"errors"
	"sync"

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
	// Reply, when set instead of an Action, is a connection's own message
	// (an answer to a request) queued in order with the events around it.
	Reply any
	// ReplySize is about how many bytes Reply will take on the wire (its
	// snapshots' text, say), counted against the subscriber's bound.
	ReplySize int
}

// Options bound the hub's memory.
type Options struct {
	// ReplayEvents and ReplayBytes bound the replay ring.
	ReplayEvents int
	ReplayBytes  int
}

// Defaults for Options.
const (
	DefaultReplayEvents = 4096
	DefaultReplayBytes  = 8 << 20
	// DefaultQueueBytes bounds one subscriber's queue.
	DefaultQueueBytes = 8 << 20
)

// Hub owns the sequence, the channels and their subscribers. Its lock also
// guards whatever state the callers change inside Update, so a state change
// and the envelope announcing it are one atomic step.
type Hub struct {
	mu       sync.Mutex
	seq      uint64
	channels map[string]map[*Subscriber]struct{}
	ring     ring
}

// New returns an empty hub.
func New(o Options) *Hub {
	if o.ReplayEvents <= 0 {
		o.ReplayEvents = DefaultReplayEvents
	}
	if o.ReplayBytes <= 0 {
		o.ReplayBytes = DefaultReplayBytes
	}
	return &Hub{
		channels: make(map[string]map[*Subscriber]struct{}),
		ring:     ring{maxEvents: o.ReplayEvents, maxBytes: o.ReplayBytes},
	}
}

// Tx is the view of the hub inside Update; it is valid only during the call.
type Tx struct{ h *Hub }

// Update runs fn under the hub's lock. fn must not block or do I/O.
func (h *Hub) Update(fn func(tx Tx)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fn(Tx{h})
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

// Close removes a channel; its subscribers simply stop receiving it.
func (tx Tx) Close(channel string) {
	for s := range tx.h.channels[channel] {
		delete(s.channels, channel)
	}
	delete(tx.h.channels, channel)
}

// Publish stamps the next sequence number on an action and queues it for
// every subscriber of the channel (or only those of audience, when set). It
// is kept in the replay ring.
func (tx Tx) Publish(channel string, a terminal.Action, origin *Origin, audience string) uint64 {
	h := tx.h
	h.seq++
	ev := Event{Channel: channel, Seq: h.seq, Action: a, Origin: origin, Audience: audience}
	h.ring.push(ev)
	for s := range h.channels[channel] {
		if audience == "" || s.clientID == audience {
			h.enqueue(s, ev)
		}
	}
	return h.seq
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
	subs[s] = struct{}{}
	s.channels[channel] = struct{}{}
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
}

// Remove takes s off every channel and ends it with ErrUnsubscribed.
func (h *Hub) Remove(s *Subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.drop(s, ErrUnsubscribed)
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
}
