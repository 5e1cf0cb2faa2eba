// Package memrelease gives the operating system back the memory a burst of
// work left behind, once the daemon has gone quiet.
//
// Go's collector lets the heap grow to twice what is live before it runs
// (GOGC=100), and its scavenger returns free pages only down to about that
// goal. A daemon that has just started five hundred terminals, or relayed a
// flood, keeps the garbage of that work mapped until the next collection,
// which an idle daemon may never reach: its resident memory stays at about
// twice what it holds. Once allocation has all but stopped, one forced
// collection that returns every free page (debug.FreeOSMemory) brings it
// down to what is live. The stacks of goroutines that have ended (the
// pumps of terminals gone idle) go back the same way, once enough have
// ended. docs/measured.md has the figures.
package memrelease

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/shellgate/shellgate/ports"
)

const (
	// fastLook is how often the releaser looks while memory is worth
	// giving back: soon after a burst ends, so a person looking at the
	// daemon sees what it holds.
	fastLook = 100 * time.Millisecond
	// slowLook is how often it looks otherwise: an idle daemon wakes for
	// it once in this long.
	slowLook = 2 * time.Second
	// quietRate is the allocation rate below which the daemon counts as
	// quiet: the pings of a few thousand idle connections stay below it.
	quietRate = 256 << 10 // bytes a second
	// worthReleasing is how much must have been allocated since the last
	// release for another: the collector's own smallest heap goal, so a
	// forced collection never comes more often than the collector would
	// run on its smallest heap.
	worthReleasing = 4 << 20
	// stacksWorthReleasing is how many goroutines must have ended, counted
	// from the most there were since the last release, for another: an
	// ended goroutine's stack (4 KiB or more) goes back only at a
	// collection, and idle terminals end their pumps' goroutines
	// (app/terminals, Config.ParkAfter) without allocating anything.
	stacksWorthReleasing = 64
)

// Runtime is what the releaser reads and does; the real one is the Go
// runtime's, tests give their own.
type Runtime interface {
	// Allocated is the bytes allocated since the process started.
	Allocated() uint64
	// Release collects and returns every free page to the system.
	Release()
	// Goroutines is how many goroutines there are now.
	Goroutines() uint64
}

// Releaser watches the allocation rate and releases memory once after each
// burst.
type Releaser struct {
	clock ports.Clock
	rt    Runtime

	mu       sync.Mutex
	timer    ports.Timer
	stopped  bool
	lastAt   time.Time // when it last looked
	last     uint64    // Allocated then
	released uint64    // Allocated after the last release
	peak     uint64    // the most Goroutines seen since the last release
}

// New returns a releaser that looks at rt on clock's time; Start begins it.
func New(clock ports.Clock, rt Runtime) *Releaser {
	return &Releaser{clock: clock, rt: rt}
}

// Start takes the first look's baseline and schedules the next.
func (r *Releaser) Start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastAt, r.last = r.clock.Now(), r.rt.Allocated()
	r.released = r.last
	r.peak = r.rt.Goroutines()
	r.scheduleLocked(slowLook)
}

// Stop ends the looking; a look under way finishes first.
func (r *Releaser) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	if r.timer != nil {
		r.timer.Stop()
	}
}

func (r *Releaser) scheduleLocked(d time.Duration) {
	if !r.stopped {
		r.timer = r.clock.AfterFunc(d, r.look)
	}
}

// look releases when allocation is quiet and enough came since the last
// release, or enough goroutines ended, and schedules the next look: soon
// while a release is pending.
func (r *Releaser) look() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	now, allocated := r.clock.Now(), r.rt.Allocated()
	elapsed := now.Sub(r.lastAt)
	quiet := float64(allocated-r.last) < quietRate*elapsed.Seconds()
	goroutines := r.rt.Goroutines()
	r.peak = max(r.peak, goroutines)
	pending := allocated-r.released >= worthReleasing || r.peak-goroutines >= stacksWorthReleasing
	r.lastAt, r.last = now, allocated
	if quiet && pending {
		r.rt.Release()
		r.released = r.rt.Allocated()
		r.last = r.released
		r.peak = goroutines
		pending = false
	}
	next := slowLook
	if pending {
		next = fastLook
	}
	r.scheduleLocked(next)
}

// GoRuntime is this process's runtime.
type GoRuntime struct {
	sample []metrics.Sample
}

// NewGoRuntime reads this process's allocations through runtime/metrics.
func NewGoRuntime() *GoRuntime {
	return &GoRuntime{sample: []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/sched/goroutines:goroutines"}}}
}

// Allocated reads the runtime's count of heap bytes allocated. One
// releaser calls it at a time.
func (g *GoRuntime) Allocated() uint64 { return g.read(0) }

// Goroutines reads the runtime's count of live goroutines.
func (g *GoRuntime) Goroutines() uint64 { return g.read(1) }

func (g *GoRuntime) read(i int) uint64 {
	metrics.Read(g.sample[i : i+1])
	if g.sample[i].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return g.sample[i].Value.Uint64()
}

// Release forces a collection and returns what is free to the system.
func (*GoRuntime) Release() { debug.FreeOSMemory() }
