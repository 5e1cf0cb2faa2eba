// Package hubtest drains a hub subscriber in tests the way a connection's
// writer does: woken through SetWake, taking what is queued, settling it
// before it takes more.
package hubtest

import (
	"context"
	"sync"

	"github.com/shellgate/shellgate/app/hub"
)

var (
	wakesMu sync.Mutex
	wakes   = map[*hub.Subscriber]chan struct{}{}
)

// wakeOf gives s a wake function (once) and returns the channel it
// signals.
func wakeOf(s *hub.Subscriber) chan struct{} {
	wakesMu.Lock()
	defer wakesMu.Unlock()
	w := wakes[s]
	if w == nil {
		w = make(chan struct{}, 1)
		wakes[s] = w
		s.SetWake(func() {
			select {
			case w <- struct{}{}:
			default:
			}
		})
	}
	return w
}

// Next settles what s last gave, then waits for events and returns them
// all, oldest first; the cause once s has ended, or ctx's error.
func Next(ctx context.Context, s *hub.Subscriber) ([]hub.Event, error) {
	s.Settle()
	wake := wakeOf(s)
	for {
		if batch := s.Take(); len(batch) > 0 {
			return batch, nil
		}
		if err := s.Err(); err != nil {
			return nil, err
		}
		select {
		case <-wake:
		case <-s.Done():
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
