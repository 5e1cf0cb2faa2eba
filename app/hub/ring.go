package hub

import (
	"sort"
	"strings"

	"github.com/shellgate/shellgate/domain/terminal"
)

// Superseding is an action that replaces the whole of an earlier one of the
// same type on the same channel (a full list): replaying only the newest
// gives the same state, so the ring keeps only the newest.
type Superseding interface {
	terminal.Action
	SupersedesEarlier() bool
}

// ring keeps the newest events for reconnecting clients, bounded in count
// and in bytes. It is a circular buffer: a slice trimmed from the front and
// appended to at the back was copied whole each time it ran out of room,
// about 430 bytes of garbage per event at the default bound.
type ring struct {
	maxEvents, maxBytes int
	buf                 []Event // the kept events, oldest at head, wrapping
	head, n             int
	bytes               int
	// floor is the highest sequence number that fell out of the ring; a
	// client that saw at least floor can be replayed.
	floor uint64
	// latest holds, per channel and type, the sequence number of the newest
	// superseding event, so the one before it can be let go.
	latest map[string]uint64
}

// at is the i-th kept event, oldest first.
func (r *ring) at(i int) *Event { return &r.buf[(r.head+i)%len(r.buf)] }

// dropOldest lets go of the oldest kept event.
func (r *ring) dropOldest() {
	ev := r.at(0)
	r.bytes -= size(*ev)
	r.floor = ev.Seq
	*ev = Event{}
	r.head = (r.head + 1) % len(r.buf)
	r.n--
}

// grow makes room for one more event: twice the room, up to the bound.
func (r *ring) grow() {
	c := min(max(2*len(r.buf), 16), max(r.maxEvents, 1))
	if c <= len(r.buf) {
		c = len(r.buf) + 1
	}
	buf := make([]Event, c)
	for i := range r.n {
		buf[i] = *r.at(i)
	}
	r.buf, r.head = buf, 0
}

// size is what an event costs the ring; a superseded one costs nothing.
func size(ev Event) int {
	if ev.Action == nil {
		return 0
	}
	return ev.Size()
}

func (r *ring) push(ev Event) {
	if s, ok := ev.Action.(Superseding); ok && s.SupersedesEarlier() {
		r.supersede(ev.Channel+"\x00"+s.Type(), ev.Seq)
	}
	if r.n > 0 && r.n >= r.maxEvents {
		r.dropOldest()
	}
	if r.n == len(r.buf) {
		r.grow()
	}
	*r.at(r.n) = ev
	r.n++
	r.bytes += size(ev)
	for r.n > 1 && r.bytes > r.maxBytes {
		r.dropOldest()
	}
}

// supersede lets go of the event that key's newest one replaces, leaving
// its sequence number in place as an empty slot.
func (r *ring) supersede(key string, seq uint64) {
	if r.latest == nil {
		r.latest = map[string]uint64{}
	}
	prev, ok := r.latest[key]
	r.latest[key] = seq
	if !ok {
		return
	}
	i := sort.Search(r.n, func(i int) bool { return r.at(i).Seq >= prev })
	if i < r.n {
		if ev := r.at(i); ev.Seq == prev {
			r.letGo(ev)
		}
	}
}

// letGo empties a kept event's slot, keeping its sequence number and
// channel in place.
func (r *ring) letGo(ev *Event) {
	if ev.Action == nil {
		return
	}
	r.bytes -= size(*ev)
	*ev = Event{Seq: ev.Seq, Channel: ev.Channel}
}

// forget lets go of every kept event of channel, which has closed, leaving
// their sequence numbers as empty slots. Resume replays only open
// channels, so the events of a closed one could never be replayed; kept,
// they held the ring's memory (megabytes after a flood) until newer events
// pushed them out, and a channel opened again under the same name would
// have been replayed the old one's.
func (r *ring) forget(channel string) {
	for i := range r.n {
		if ev := r.at(i); ev.Channel == channel {
			r.letGo(ev)
		}
	}
	prefix := channel + "\x00"
	for key := range r.latest {
		if strings.HasPrefix(key, prefix) {
			delete(r.latest, key)
		}
	}
}

// since returns the kept events after seq that match keep, or false when
// events after seq have already been dropped. A seq beyond the current one
// is a client that knows of events that never were: it gets a snapshot.
func (r *ring) since(seq, current uint64, keep func(Event) bool) ([]Event, bool) {
	if seq < r.floor || seq > current {
		return nil, false
	}
	out := []Event{}
	for i := range r.n {
		if ev := *r.at(i); ev.Action != nil && ev.Seq > seq && keep(ev) {
			out = append(out, ev)
		}
	}
	return out, true
}
