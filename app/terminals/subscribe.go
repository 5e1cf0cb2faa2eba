package terminals

import (
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/domain/terminal"
)

// ChannelSnapshot is one channel's state: the root list or a terminal.
type ChannelSnapshot struct {
	URI string
	// Root is set for the root channel.
	Root []Info
	// Terminal is set for a terminal channel.
	Terminal *terminal.Snapshot
	// Screen draws the terminal's current screen on a blank terminal of
	// its size (ports.Screen.Serialize); empty when it has no screen model.
	Screen string
}

// IsRoot reports whether the snapshot is of the root channel.
func (c ChannelSnapshot) IsRoot() bool { return c.URI == RootChannel }

// SubscribeAll subscribes s to every channel in uris that exists and hands
// their snapshots, with the sequence number they reflect, to then — all in
// one step, so that whatever then queues for s (the answer to the request)
// comes before any later event on those channels. Channels that do not exist
// are left out. then runs under the host's lock and the hub's: it must
// only queue.
func (h *Host) SubscribeAll(s *hub.Subscriber, uris []string, then func(snaps []ChannelSnapshot, seq uint64)) {
	h.update(func(tx hub.Tx) {
		snaps := make([]ChannelSnapshot, 0, len(uris))
		for _, uri := range uris {
			if snap, ok := h.snapshotLocked(uri); ok && tx.Subscribe(s, uri) {
				snaps = append(snaps, snap)
				if t := h.terms[uri]; t != nil {
					t.endHold() // after the snapshot: what it read comes as events
				}
			}
		}
		then(snaps, tx.Seq())
	})
}

func (h *Host) snapshotLocked(uri string) (ChannelSnapshot, bool) {
	if uri == RootChannel {
		return ChannelSnapshot{URI: uri, Root: h.list()}, true
	}
	t := h.terms[uri]
	if t == nil {
		return ChannelSnapshot{}, false
	}
	snap := t.state.Snapshot()
	cs := ChannelSnapshot{URI: uri, Terminal: &snap}
	if t.screen != nil {
		cs.Screen = t.screen.Serialize()
	}
	return cs, true
}

// ResumeResult answers a reconnecting client.
type ResumeResult struct {
	// Replay is true when every missed event is in Events; otherwise the gap
	// was too old and Snapshots holds fresh state.
	Replay    bool
	Events    []hub.Event
	Missing   []string
	Snapshots []ChannelSnapshot
	Seq       uint64
}

// Resume subscribes s again to the channels it had and gives then what it
// missed since lastSeen: the events, or fresh snapshots when the replay ring
// no longer reaches back so far. Channels that are gone are Missing. Like
// SubscribeAll, it is one step and then runs under the host's lock and
// the hub's.
func (h *Host) Resume(s *hub.Subscriber, lastSeen uint64, uris []string, then func(ResumeResult)) {
	h.update(func(tx hub.Tx) {
		res := ResumeResult{Missing: []string{}, Seq: tx.Seq()}
		live := make(map[string]bool, len(uris))
		for _, uri := range uris {
			if uri == RootChannel || h.terms[uri] != nil {
				live[uri] = true
			} else {
				res.Missing = append(res.Missing, uri)
			}
		}
		res.Events, res.Replay = tx.Resume(s, lastSeen, live)
		for _, uri := range uris {
			if !live[uri] {
				continue
			}
			tx.Subscribe(s, uri)
			if t := h.terms[uri]; t != nil {
				t.endHold()
			}
			if !res.Replay {
				snap, _ := h.snapshotLocked(uri)
				res.Snapshots = append(res.Snapshots, snap)
			}
		}
		then(res)
	})
}
