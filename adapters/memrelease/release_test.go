package memrelease_test

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shellgate/shellgate/adapters/clock"
	"github.com/shellgate/shellgate/adapters/memrelease"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeRuntime counts what the releaser asked of it; the test allocates by
// moving its counter.
type fakeRuntime struct {
	mu         sync.Mutex
	allocated  uint64
	goroutines uint64
	releases   int
}

func (f *fakeRuntime) Goroutines() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.goroutines
}

func (f *fakeRuntime) setGoroutines(n uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.goroutines = n
}

func (f *fakeRuntime) Allocated() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.allocated
}

func (f *fakeRuntime) Release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.releases++
	f.allocated += 1 << 10 // a collection allocates a little itself
}

func (f *fakeRuntime) allocate(n uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.allocated += n
}

func (f *fakeRuntime) released() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.releases
}

func started(t *testing.T) (*clock.Fake, *fakeRuntime) {
	t.Helper()
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	rt := &fakeRuntime{allocated: 100 << 20, goroutines: 10}
	r := memrelease.New(clk, rt)
	r.Start()
	t.Cleanup(r.Stop)
	return clk, rt
}

// busy allocates rate bytes a second for d, in steps of 50 ms.
func busy(clk *clock.Fake, rt *fakeRuntime, rate uint64, d time.Duration) {
	const step = 50 * time.Millisecond
	for spent := time.Duration(0); spent < d; spent += step {
		rt.allocate(rate / uint64(time.Second/step))
		clk.Advance(step)
	}
}

func TestABurstThenQuietReleasesOnceAndNotAgainWhileQuiet(t *testing.T) {
	clk, rt := started(t)

	busy(clk, rt, 20<<20, 3*time.Second) // 60 MiB: terminals being created
	require.Zero(t, rt.released(), "released while the burst was going on")

	busy(clk, rt, 0, time.Second)
	require.Equal(t, 1, rt.released(), "the burst's memory was not given back within a second of quiet")

	busy(clk, rt, 1<<10, time.Minute) // idle pings
	require.Equal(t, 1, rt.released(), "released again with nothing new to give back")
}

// Idle terminals end their pumps' goroutines without allocating: their
// stacks go back at a collection, so enough of them ending is worth one.
func TestGoroutinesEndingReleaseTheirStacksOnce(t *testing.T) {
	clk, rt := started(t)
	rt.setGoroutines(1010) // 500 terminals, a connection and a pump each
	busy(clk, rt, 0, 5*time.Second)
	require.Zero(t, rt.released(), "released with nothing to give back")

	rt.setGoroutines(510) // the pumps park
	busy(clk, rt, 0, 3*time.Second)
	require.Equal(t, 1, rt.released(), "the ended goroutines' stacks were not given back")

	busy(clk, rt, 0, time.Minute)
	require.Equal(t, 1, rt.released(), "released again with nothing new to give back")

	rt.setGoroutines(470) // fewer than are worth a collection
	busy(clk, rt, 0, time.Minute)
	require.Equal(t, 1, rt.released(), "40 ended goroutines forced a collection")
}

func TestSteadyWorkIsNeverInterruptedByARelease(t *testing.T) {
	clk, rt := started(t)
	busy(clk, rt, 4<<20, time.Minute) // a flood's worth, without a pause
	require.Zero(t, rt.released())
}

func TestLittleAllocationIsNotWorthAForcedCollection(t *testing.T) {
	clk, rt := started(t)
	rt.allocate(3 << 20) // a few keystrokes and a terminal
	busy(clk, rt, 0, time.Minute)
	require.Zero(t, rt.released())
}

func TestATrickleReleasesNoMoreOftenThanTheCollectorsSmallestHeap(t *testing.T) {
	clk, rt := started(t)
	// 100 KiB a second is quiet; 4 MiB of it comes every 41 seconds.
	busy(clk, rt, 100<<10, 10*time.Minute)
	require.LessOrEqual(t, rt.released(), 15)
	require.Positive(t, rt.released(), "a trickle's garbage was never given back")
}

func TestStopLeavesNoTimerBehind(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	rt := &fakeRuntime{}
	r := memrelease.New(clk, rt)
	r.Start()
	require.Equal(t, 1, clk.Pending())
	r.Stop()
	require.Zero(t, clk.Pending())
	rt.allocate(64 << 20)
	clk.Advance(time.Minute)
	require.Zero(t, rt.released(), "released after Stop")
}

// The real runtime: what a burst left is returned once it ends.
func TestTheGoRuntimeGivesBackABurstsGarbage(t *testing.T) {
	rt := memrelease.NewGoRuntime()
	before := rt.Allocated()
	keep := make([][]byte, 0, 64)
	for range 64 {
		keep = append(keep, make([]byte, 256<<10))
	}
	require.GreaterOrEqual(t, rt.Allocated()-before, uint64(16<<20), "allocations were not counted")
	runtime.KeepAlive(keep)
	keep = nil

	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	releasedBefore := ms.HeapReleased
	rt.Release()
	runtime.ReadMemStats(&ms)
	require.Greater(t, ms.HeapReleased, releasedBefore, "no page went back to the system")
}

func TestTheGoRuntimeCountsGoroutines(t *testing.T) {
	rt := memrelease.NewGoRuntime()
	before := rt.Goroutines()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { <-stop })
	}
	require.GreaterOrEqual(t, rt.Goroutines(), before+10)
	close(stop)
	wg.Wait()
}
