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
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
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
func (s *Subscriber) Reply(v any) bool {
	if err := s.push(Event{Reply: v}); err != nil {
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
		s.mu.Lock()
		if s.cause != nil {
			err := s.cause
			s.mu.Unlock()
			return nil, err
		}
		if len(s.queue) > 0 {
			batch := s.queue
			s.queue, s.bytes = nil, 0
			s.mu.Unlock()
			return batch, nil
		}
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-s.closed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
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
