package terminals

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

// TitleInterval is the least time between two titles a process's output
// sets on one terminal: a prompt that retitles at every line, or a progress
// bar in the title, must not flood every client. Within it the last one
// wins.
const TitleInterval = 100 * time.Millisecond

// titles turns the titles a pty process sets (OSC 0 and OSC 2) into
// terminal/titleChanged and a new root list, at most one per
// TitleInterval. The scanner belongs to the pump; the rest is shared with
// the timer that sends a held title.
type titles struct {
	t       *Terminal
	clock   ports.Clock
	scanner terminal.TitleScanner

	mu      sync.Mutex // held while a title is sent, so they go in order
	sentAt  time.Time
	sent    bool
	pending string
	timer   ports.Timer // set while a title is held back
}

// titlesOff turns title watching off for terminals created while it is
// set: only the benchmark that measures what watching costs sets it.
var titlesOff atomic.Bool

// newTitles watches a pty terminal's titles; nil when watching is off.
func newTitles(t *Terminal, clock ports.Clock) *titles {
	if titlesOff.Load() {
		return nil
	}
	return &titles{t: t, clock: clock}
}

// feed reads one read of output; the pump calls it after publishing that
// output, so the title follows the bytes that set it.
func (ti *titles) feed(p []byte) {
	title, ok := ti.scanner.Feed(p)
	if !ok {
		return
	}
	ti.mu.Lock()
	defer ti.mu.Unlock()
	if ti.timer != nil {
		ti.pending = title // the held one is replaced: the last one wins
		return
	}
	now := ti.clock.Now()
	if ti.sent && now.Sub(ti.sentAt) < TitleInterval {
		ti.pending = title
		ti.timer = ti.clock.AfterFunc(TitleInterval-now.Sub(ti.sentAt), ti.release)
		return
	}
	ti.sendLocked(title, now)
}

// release sends the held title once its interval is over.
func (ti *titles) release() {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	if ti.timer == nil {
		return // flushed meanwhile
	}
	ti.timer = nil
	ti.sendLocked(ti.pending, ti.clock.Now())
}

// flush sends a held title at once: the output has ended, and the last
// title set belongs before the exit.
func (ti *titles) flush() {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	if ti.timer == nil {
		return
	}
	ti.timer.Stop()
	ti.timer = nil
	ti.sendLocked(ti.pending, ti.clock.Now())
}

func (ti *titles) sendLocked(title string, now time.Time) {
	ti.sent, ti.sentAt = true, now
	t := ti.t
	a := terminal.TitleChanged{Title: title}
	t.host.update(func(tx hub.Tx) {
		if t.removed || !t.state.Apply(a) {
			return // the same title again changes nothing
		}
		tx.Publish(t.uri, a, nil, "")
		t.host.publishList(tx)
	})
}
