package hub

// ring keeps the newest events for reconnecting clients, bounded in count
// and in bytes.
type ring struct {
	maxEvents, maxBytes int
	events              []Event // oldest first; trimmed from the front
	bytes               int
	// floor is the highest sequence number that fell out of the ring; a
	// client that saw at least floor can be replayed.
	floor uint64
}

func (r *ring) push(ev Event) {
	r.events = append(r.events, ev)
	r.bytes += eventSize(ev)
	drop := 0
	for len(r.events)-drop > r.maxEvents || (r.bytes > r.maxBytes && len(r.events)-drop > 1) {
		r.bytes -= eventSize(r.events[drop])
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

// since returns the kept events after seq that match keep, or false when
// events after seq have already been dropped. A seq beyond the current one
// is a client that knows of events that never were: it gets a snapshot.
func (r *ring) since(seq, current uint64, keep func(Event) bool) ([]Event, bool) {
	if seq < r.floor || seq > current {
		return nil, false
	}
	out := []Event{}
	for _, ev := range r.events {
		if ev.Seq > seq && keep(ev) {
			out = append(out, ev)
		}
	}
	return out, true
}
