package clock

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/shellgate/shellgate/ports"
)

// Fake is a ports.Clock that only moves when a test moves it.
//
// Callbacks registered with AfterFunc run synchronously, inside the Advance or
// Set call that makes them due, one after another in order of due time (ties
// in the order they were registered). When Advance returns, every callback
// that was due has returned, so a test can assert on its effects straight
// away. While a callback runs, Now reports that callback's due time. A
// callback may call Now, AfterFunc and Stop (a timer it registers that falls
// due within the same Advance fires in that Advance), but must not call
// Advance or Set: they are serialised and would deadlock.
//
// A timer registered with d <= 0 is due at once but still waits for the next
// Advance or Set (Advance(0) will do), so nothing fires behind a test's back.
type Fake struct {
	// advancing serialises Advance and Set, so that callbacks from two
	// concurrent calls never interleave out of order.
	advancing sync.Mutex

	mu      sync.Mutex
	now     time.Time
	seq     uint64
	pending []*fakeTimer
	// changed is closed (and replaced) whenever the set of pending timers
	// changes, to wake BlockUntil without polling.
	changed chan struct{}
}

var _ ports.Clock = (*Fake)(nil)

// NewFake returns a fake clock that reads start until it is moved.
func NewFake(start time.Time) *Fake {
	return &Fake{now: start, changed: make(chan struct{})}
}

// Now returns the fake's current time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// AfterFunc registers fn to run once the fake has been moved d past now.
func (f *Fake) AfterFunc(d time.Duration, fn func()) ports.Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	t := &fakeTimer{clock: f, due: f.now.Add(d), seq: f.seq, fn: fn}
	f.pending = append(f.pending, t)
	f.notifyLocked()
	return t
}

// Advance moves the clock forward by d and runs every callback that falls
// due, in order, before returning. d must not be negative (use Set to go
// back).
func (f *Fake) Advance(d time.Duration) {
	if d < 0 {
		panic(fmt.Sprintf("clock: Advance(%v): a fake clock does not run backwards; use Set", d))
	}
	f.advancing.Lock()
	defer f.advancing.Unlock()
	f.runUntil(f.Now().Add(d))
}

// Set moves the clock to t. Going forward runs the callbacks that fall due, as
// Advance does; going back runs nothing (timers keep their due times).
func (f *Fake) Set(t time.Time) {
	f.advancing.Lock()
	defer f.advancing.Unlock()
	f.mu.Lock()
	if t.Before(f.now) {
		f.now = t
		f.mu.Unlock()
		return
	}
	f.mu.Unlock()
	f.runUntil(t)
}

// Pending reports how many timers are registered and neither fired nor
// stopped.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pending)
}

// BlockUntil waits until exactly n timers are pending, so a test can let the
// code under test register its timers before advancing. It returns the
// context's error if that does not happen before ctx is done.
func (f *Fake) BlockUntil(ctx context.Context, n int) error {
	for {
		f.mu.Lock()
		got, changed := len(f.pending), f.changed
		f.mu.Unlock()
		if got == n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("clock: waiting for %d pending timers, have %d: %w", n, got, context.Cause(ctx))
		}
	}
}

// runUntil fires due timers one at a time, without holding mu during a
// callback, so callbacks can use the clock.
func (f *Fake) runUntil(target time.Time) {
	for {
		f.mu.Lock()
		next := f.nextDueLocked(target)
		if next == nil {
			if target.After(f.now) {
				f.now = target
			}
			f.mu.Unlock()
			return
		}
		f.removeLocked(next)
		if next.due.After(f.now) {
			f.now = next.due
		}
		f.mu.Unlock()
		next.fn()
	}
}

// nextDueLocked returns the earliest timer due at or before target.
func (f *Fake) nextDueLocked(target time.Time) *fakeTimer {
	var best *fakeTimer
	for _, t := range f.pending {
		if t.due.After(target) {
			continue
		}
		if best == nil || t.due.Before(best.due) || (t.due.Equal(best.due) && t.seq < best.seq) {
			best = t
		}
	}
	return best
}

// removeLocked takes t off the pending list and reports whether it was there.
func (f *Fake) removeLocked(t *fakeTimer) bool {
	for i, p := range f.pending {
		if p == t {
			f.pending = append(f.pending[:i], f.pending[i+1:]...)
			f.notifyLocked()
			return true
		}
	}
	return false
}

func (f *Fake) notifyLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

type fakeTimer struct {
	clock *Fake
	due   time.Time
	seq   uint64
	fn    func()
}

// Stop cancels the timer; it reports false if the callback already started
// or the timer was already stopped.
func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	return t.clock.removeLocked(t)
}
