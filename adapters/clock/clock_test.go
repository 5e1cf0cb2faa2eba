package clock_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shellgate/shellgate/adapters/clock"
	"github.com/shellgate/shellgate/ports"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// deadline is generous on purpose: the tests wait on events, never on time,
// and only a broken clock gets anywhere near it.
const deadline = 30 * time.Second

var start = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func TestSystemNowIsTheWallClock(t *testing.T) {
	before := time.Now()
	got := clock.System().Now()
	after := time.Now()
	require.False(t, got.Before(before))
	require.False(t, got.After(after))
}

func TestSystemAfterFuncFires(t *testing.T) {
	fired := make(chan struct{})
	clock.System().AfterFunc(time.Millisecond, func() { close(fired) })
	select {
	case <-fired:
	case <-time.After(deadline):
		t.Fatal("AfterFunc never fired")
	}
}

func TestSystemStopPreventsTheCall(t *testing.T) {
	timer := clock.System().AfterFunc(time.Hour, func() { t.Error("stopped timer fired") })
	require.True(t, timer.Stop())
	require.False(t, timer.Stop(), "a second Stop has nothing left to stop")
}

func TestFakeNowStaysPutUntilMoved(t *testing.T) {
	c := clock.NewFake(start)
	require.Equal(t, start, c.Now())
	c.Advance(90 * time.Second)
	require.Equal(t, start.Add(90*time.Second), c.Now())
	c.Set(start.Add(time.Hour))
	require.Equal(t, start.Add(time.Hour), c.Now())
}

func TestFakeAdvanceFiresDueCallbacksInOrder(t *testing.T) {
	c := clock.NewFake(start)
	var got []string
	record := func(name string) func() { return func() { got = append(got, name) } }
	c.AfterFunc(3*time.Second, record("3s"))
	c.AfterFunc(time.Second, record("1s-first"))
	c.AfterFunc(time.Second, record("1s-second"))
	c.AfterFunc(2*time.Second, record("2s"))
	c.AfterFunc(10*time.Second, record("10s"))

	c.Advance(3 * time.Second)

	require.Equal(t, []string{"1s-first", "1s-second", "2s", "3s"}, got)
	require.Equal(t, 1, c.Pending())
}

func TestFakeAdvanceStopsShortOfLaterTimers(t *testing.T) {
	c := clock.NewFake(start)
	fired := false
	c.AfterFunc(time.Minute, func() { fired = true })
	c.Advance(time.Minute - time.Nanosecond)
	require.False(t, fired)
	c.Advance(time.Nanosecond)
	require.True(t, fired)
	require.Zero(t, c.Pending())
}

func TestFakeNowInsideACallbackIsItsDueTime(t *testing.T) {
	c := clock.NewFake(start)
	var seen time.Time
	c.AfterFunc(5*time.Second, func() { seen = c.Now() })
	c.Advance(time.Hour)
	require.Equal(t, start.Add(5*time.Second), seen)
	require.Equal(t, start.Add(time.Hour), c.Now())
}

func TestFakeTimerRegisteredByACallbackFiresInTheSameAdvance(t *testing.T) {
	c := clock.NewFake(start)
	var got []time.Time
	c.AfterFunc(time.Second, func() {
		got = append(got, c.Now())
		c.AfterFunc(time.Second, func() { got = append(got, c.Now()) })
	})
	c.Advance(5 * time.Second)
	require.Equal(t, []time.Time{start.Add(time.Second), start.Add(2 * time.Second)}, got)
}

func TestFakeStop(t *testing.T) {
	c := clock.NewFake(start)
	fired := false
	timer := c.AfterFunc(time.Second, func() { fired = true })
	require.Equal(t, 1, c.Pending())

	require.True(t, timer.Stop())
	require.False(t, timer.Stop())
	require.Zero(t, c.Pending())
	c.Advance(time.Hour)
	require.False(t, fired)
}

func TestFakeStopAfterFiringReportsFalse(t *testing.T) {
	c := clock.NewFake(start)
	timer := c.AfterFunc(time.Second, func() {})
	c.Advance(time.Second)
	require.False(t, timer.Stop())
}

func TestFakeZeroDelayWaitsForTheNextAdvance(t *testing.T) {
	c := clock.NewFake(start)
	fired := 0
	c.AfterFunc(0, func() { fired++ })
	c.AfterFunc(-time.Second, func() { fired++ })
	require.Zero(t, fired, "nothing fires behind the test's back")
	c.Advance(0)
	require.Equal(t, 2, fired)
}

func TestFakeSet(t *testing.T) {
	tests := []struct {
		name      string
		to        time.Time
		wantFired bool
	}{
		{name: "forward past the timer fires it", to: start.Add(2 * time.Minute), wantFired: true},
		{name: "forward short of the timer does not", to: start.Add(30 * time.Second)},
		{name: "backwards fires nothing", to: start.Add(-time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := clock.NewFake(start)
			fired := false
			c.AfterFunc(time.Minute, func() { fired = true })
			c.Set(tt.to)
			require.Equal(t, tt.to, c.Now())
			require.Equal(t, tt.wantFired, fired)
		})
	}
}

func TestFakeTimersKeepTheirDueTimeWhenSetBack(t *testing.T) {
	c := clock.NewFake(start)
	fired := false
	c.AfterFunc(time.Minute, func() { fired = true })
	c.Set(start.Add(-time.Hour))
	c.Advance(time.Hour)
	require.False(t, fired)
	c.Advance(time.Minute)
	require.True(t, fired)
}

func TestFakeAdvanceBackwardsPanics(t *testing.T) {
	require.Panics(t, func() { clock.NewFake(start).Advance(-time.Second) })
}

func TestFakeBlockUntilWaitsForTimersFromOtherGoroutines(t *testing.T) {
	c := clock.NewFake(start)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()

	fired := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.AfterFunc(time.Second, func() { close(fired) })
	}()

	require.NoError(t, c.BlockUntil(ctx, 1))
	c.Advance(time.Second)
	select {
	case <-fired:
	default:
		t.Fatal("the callback must have run by the time Advance returned")
	}
	require.NoError(t, c.BlockUntil(ctx, 0))
	wg.Wait()
}

func TestFakeBlockUntilSeesAStop(t *testing.T) {
	c := clock.NewFake(start)
	timer := c.AfterFunc(time.Second, func() {})
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()

	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		timer.Stop()
	}()
	require.NoError(t, c.BlockUntil(ctx, 0))
	<-stopped
}

func TestFakeBlockUntilGivesUpWithTheContext(t *testing.T) {
	c := clock.NewFake(start)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := c.BlockUntil(ctx, 1)
	require.ErrorIs(t, err, context.Canceled)
}

func TestFakeIsSafeForConcurrentUse(t *testing.T) {
	c := clock.NewFake(start)
	const workers, each = 4, 50
	var (
		mu    sync.Mutex
		fired int
		wg    sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				timer := c.AfterFunc(time.Duration(i)*time.Millisecond, func() {
					mu.Lock()
					fired++
					mu.Unlock()
				})
				if i%2 == 1 {
					timer.Stop()
				}
				_ = c.Now()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range each {
			c.Advance(time.Millisecond)
		}
	}()
	wg.Wait()
	c.Advance(time.Hour)

	mu.Lock()
	defer mu.Unlock()
	// Odd-numbered timers may have fired before their Stop; even ones always fire.
	require.GreaterOrEqual(t, fired, workers*each/2)
	require.LessOrEqual(t, fired, workers*each)
	require.Zero(t, c.Pending())
}

var (
	_ ports.Clock = clock.System()
	_ ports.Clock = clock.NewFake(start)
)
