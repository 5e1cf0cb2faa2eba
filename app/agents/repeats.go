package agents

import (
	"context"
	"crypto/sha256"
	"strconv"
	"sync"
	"time"

	"github.com/shellgate/shellgate/ports"
)

// repeats merges identical refusals into one audit record with a count.
// Every refusal is an fsynced record otherwise, and an agent (or a client
// stuck in a loop) that sends the same refused command over and over would
// fill the log with copies and spend the disk's time on them. The first
// refusal of a kind is written at once, as before; the identical ones that
// follow within the window are only counted, and when the window ends one
// record says how many there were, when the first and last came, and the
// last one's command id. The next identical refusal after that is written
// at once again and opens a new window.
//
// Identical means: the same principal, session, reason, message, command
// and description. The cost of merging: the refusals a window counts are
// in memory until it ends, so a crash loses their count (the first one is
// on disk); a stop writes what is counted.
type repeats struct {
	window time.Duration
	clock  ports.Clock
	audit  ports.AuditSink
	log    func(msg string, args ...any)

	mu      sync.Mutex
	open    map[repeatKey]*burst
	stopped bool
	writing sync.WaitGroup // flushes under way
}

// maxOpenWindows bounds the windows open at once, and so the memory they
// hold (each keeps its first record): an agent sending ever different
// refused commands gains nothing from windows anyway.
const maxOpenWindows = 1024

// repeatKey identifies a kind of refusal; the long texts are hashed.
type repeatKey struct {
	principal, session, reason string
	texts                      [sha256.Size]byte
}

// burst is a window of identical refusals after the one written.
type burst struct {
	first       ports.AuditEvent // the record written when the window opened
	count       int              // refusals since, not yet written
	firstAt     time.Time
	lastAt      time.Time
	lastCommand string
	timer       ports.Timer
}

func newRepeats(window time.Duration, clock ports.Clock, audit ports.AuditSink, log func(string, ...any)) *repeats {
	return &repeats{window: window, clock: clock, audit: audit, log: log, open: map[repeatKey]*burst{}}
}

func keyOf(principal string, rec ports.AuditEvent) repeatKey {
	h := sha256.New()
	for _, s := range []string{rec.Command, rec.Detail["message"], rec.Detail["description"]} {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{0})
		h.Write([]byte(s))
	}
	k := repeatKey{principal: principal, session: rec.SessionID, reason: rec.Detail["reason"]}
	h.Sum(k.texts[:0])
	return k
}

// absorb counts rec if a window for its kind is open, and reports true:
// it is not to be written now. Otherwise it reports false, and the caller
// writes rec; opened then opens the window.
func (r *repeats) absorb(k repeatKey, commandID string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.open[k]
	if b == nil || r.stopped {
		return false
	}
	now := r.clock.Now()
	if b.count == 0 {
		b.firstAt = now
	}
	b.count++
	b.lastAt = now
	b.lastCommand = commandID
	return true
}

// opened starts the window of the refusal just written as rec.
func (r *repeats) opened(k repeatKey, rec ports.AuditEvent) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || r.open[k] != nil {
		return
	}
	if len(r.open) >= maxOpenWindows {
		return // the rest are written one by one, as without windows
	}
	b := &burst{first: rec}
	b.timer = r.clock.AfterFunc(r.window, func() { r.flush(k, b) })
	r.open[k] = b
}

// flush ends b's window and writes its count, if it counted any.
func (r *repeats) flush(k repeatKey, b *burst) {
	r.mu.Lock()
	if r.open[k] != b {
		r.mu.Unlock()
		return
	}
	delete(r.open, k)
	r.writing.Add(1)
	r.mu.Unlock()
	defer r.writing.Done()
	r.write(b)
}

func (r *repeats) write(b *burst) {
	if b.count == 0 {
		return
	}
	rec := b.first
	rec.Time = r.clock.Now()
	rec.Detail = mergeDetail(nil, rec.Detail)
	delete(rec.Detail, "command_id")
	rec.Detail = mergeDetail(rec.Detail, map[string]string{
		"repeated":        strconv.Itoa(b.count),
		"first_repeat_at": b.firstAt.UTC().Format(time.RFC3339Nano),
		"last_repeat_at":  b.lastAt.UTC().Format(time.RFC3339Nano),
		"last_command_id": b.lastCommand,
	})
	if err := r.audit.Record(context.Background(), rec); err != nil {
		r.log("the count of repeated refusals could not be audited", "session", rec.SessionID, "repeated", b.count, "err", err)
	}
}

// stop writes every open window's count and opens no more; refusals from
// now on are written one by one.
func (r *repeats) stop() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.stopped = true
	open := r.open
	r.open = map[repeatKey]*burst{}
	r.mu.Unlock()
	for _, b := range open {
		b.timer.Stop()
		r.write(b)
	}
	r.writing.Wait()
}
