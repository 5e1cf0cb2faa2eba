package hub

import (
	"sort"

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
// and in bytes.
type ring struct {
	maxEvents, maxBytes int
	events              []Event // oldest first; trimmed from the front
	bytes               int
	// floor is the highest sequence number that fell out of the ring; a
	// client that saw at least floor can be replayed.
	floor uint64
	// latest holds, per channel and type, the sequence number of the newest
	// superseding event, so the one before it can be let go.
	latest map[string]uint64
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
	r.events = append(r.events, ev)
	r.bytes += size(ev)
	drop := 0
	for len(r.events)-drop > r.maxEvents || (r.bytes > r.maxBytes && len(r.events)-drop > 1) {
		r.bytes -= size(r.events[drop])
		r.floor = r.events[drop].Seq
		drop++
	}
	if drop > 0 {
		clear(r.events[:drop])
		r.events = r.events[drop:]
		if cap(r.events) > 2*r.maxEvents {
			r.events = append([]Event(nil), r.events...)
		}
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
	i := sort.Search(len(r.events), func(i int) bool { return r.events[i].Seq >= prev })
	if i < len(r.events) && r.events[i].Seq == prev && r.events[i].Action != nil {
		r.bytes -= size(r.events[i])
		r.events[i] = Event{Seq: prev, Channel: r.events[i].Channel}
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
	for _, ev := range r.events {
		if ev.Action != nil && ev.Seq > seq && keep(ev) {
			out = append(out, ev)
		}
	}
	return out, true
}
