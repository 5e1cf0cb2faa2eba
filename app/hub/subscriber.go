package hub

import (
	"context"
	"fmt"
	"sync"

	"github.com/shellgate/shellgate/domain/terminal"
)

// SlowError ends a subscriber whose queue outgrew its bound.
type SlowError struct{ Limit int }

func (e *SlowError) Error() string {
	return fmt.Sprintf("this client fell more than %d bytes behind the terminal output; reconnect to resume", e.Limit)
}

// Subscriber is one consumer's queue (one connection). The hub appends to it
// without ever waiting; the consumer drains it with Next.
type Subscriber struct {
	clientID string // written under both the hub's lock and mu; read under either
	limit    int
	channels map[string]struct{} // guarded by the hub's lock

	mu     sync.Mutex
	queue  []Event
	bytes  int
	cause  error
	held   bool // the consumer will take the queue itself: pushes do not wake Next
	wake   chan struct{}
	closed chan struct{}
}

// NewSubscriber returns a subscriber for clientID whose queue holds at most
// limit bytes of pending events (0 means DefaultQueueBytes).
func NewSubscriber(clientID string, limit int) *Subscriber {
	if limit <= 0 {
		limit = DefaultQueueBytes
	}
	return &Subscriber{
		clientID: clientID,
		limit:    limit,
		channels: make(map[string]struct{}),
		wake:     make(chan struct{}, 1),
		closed:   make(chan struct{}),
	}
}

// ClientID is who the subscriber delivers to. Safe from any goroutine.
func (s *Subscriber) ClientID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientID
}

// push appends ev, or reports that the bound is exceeded.
func (s *Subscriber) push(ev Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cause != nil {
		return nil
	}
	size := eventSize(ev)
	if s.bytes+size > s.limit {
		return &SlowError{Limit: s.limit}
	}
	s.queue = append(s.queue, ev)
	s.bytes += size
	if !s.held {
		s.signalLocked()
	}
	return nil
}

func (s *Subscriber) signalLocked() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Hold tells the subscriber that its consumer is about to take the queue
// itself (TakeHeld) soon: until then, pushes do not wake a goroutine
// waiting in Next. It saves a thread hand-off when the consumer's own
// goroutine queued the answer it is about to send.
func (s *Subscriber) Hold() {
	s.mu.Lock()
	s.held = true
	s.mu.Unlock()
}

// Release ends a Hold without taking the queue: a waiting Next is woken if
// anything was queued meanwhile.
func (s *Subscriber) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = false
	if len(s.queue) > 0 {
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
	defer s.mu.Unlock()
	if s.cause != nil {
		return
	}
	s.cause = cause
	s.queue, s.bytes = nil, 0
	close(s.closed)
}

// Reply queues a connection's own message behind everything already queued.
// It reports false when the subscriber has ended or its bound is exceeded
// (it then ends with SlowError).
func (s *Subscriber) Reply(v any) bool { return s.ReplySized(v, 0) }

// ReplySized is Reply for a message of about size bytes (beyond a small
// envelope), which count against the bound: a client that asks for large
// answers (snapshots) and does not read them falls behind like one that
// does not read output.
func (s *Subscriber) ReplySized(v any, size int) bool {
	if err := s.push(Event{Reply: v, ReplySize: size}); err != nil {
		s.end(err)
		return false
	}
	return s.Err() == nil
}

// Next waits for pending events and returns them all, oldest first. It
// returns the cause once the subscriber has ended, and ctx's error when ctx
// ends first.
func (s *Subscriber) Next(ctx context.Context) ([]Event, error) {
	for {
		if err := s.Wait(ctx); err != nil {
			return nil, err
		}
		if batch := s.Take(); len(batch) > 0 {
			return batch, nil
		}
	}
}

// Wait returns once events are pending (without taking them), with the
// cause once the subscriber has ended, or with ctx's error when ctx ends
// first. A consumer with two goroutines taking turns uses Wait, then takes
// its turn, then Take, so batches go out in the order they were taken.
func (s *Subscriber) Wait(ctx context.Context) error {
	for {
		s.mu.Lock()
		cause, pending := s.cause, len(s.queue) > 0
		s.mu.Unlock()
		switch {
		case cause != nil:
			return cause
		case pending:
			return nil
		}
		select {
		case <-s.wake:
		case <-s.closed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Take returns the pending events, oldest first, without waiting: none
// once the subscriber has ended.
func (s *Subscriber) Take() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cause != nil {
		return nil
	}
	batch := s.queue
	s.queue, s.bytes = nil, 0
	return batch
}

// Done is closed when the subscriber has ended.
func (s *Subscriber) Done() <-chan struct{} { return s.closed }

// Err is why the subscriber ended, or nil while it runs.
func (s *Subscriber) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cause
}

// eventSize estimates an event's encoded size: its text plus a fixed
// allowance for the envelope.
func eventSize(ev Event) int {
	const envelope = 160
	if ev.Reply != nil {
		return envelope + ev.ReplySize
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
