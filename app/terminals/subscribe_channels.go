package terminals

import (
	"context"
	"fmt"
	"strings"
)

// Subscribe has a viewer receive channels from a snapshot on.
type Subscribe struct{ c *appCore }

// SubscribeRequest says who receives what.
type SubscribeRequest struct {
	Viewer   *Viewer
	Channels []string
	// OnlyReadable leaves out, silently, the channels the caller may not
	// read and those that do not exist (a connection's first
	// subscriptions); otherwise the request is refused for the first
	// channel the caller may not read, or ErrNotFound when one does not
	// exist, and nothing is subscribed.
	OnlyReadable bool
	// Then is handed the snapshots, with the sequence number they reflect,
	// in the same step as the subscription: what it queues for the viewer
	// (the answer to the request) comes before any later event on those
	// channels. It runs under the fan-out's lock: it must only queue.
	Then func(snaps []ChannelSnapshot, seq uint64)
}

// Handle needs terminal:output for each terminal channel; the root list
// is everyone's.
func (h Subscribe) Handle(_ context.Context, who Caller, req SubscribeRequest) error {
	channels := req.Channels
	if req.OnlyReadable {
		channels = h.c.readable(who, channels)
	} else {
		for _, ch := range channels {
			if err := h.c.gate.Read(who, ch); err != nil {
				return err
			}
		}
	}
	found := true
	h.c.host.SubscribeAll(req.Viewer, channels, func(snaps []ChannelSnapshot, seq uint64) {
		if !req.OnlyReadable && len(snaps) < len(channels) {
			found = false
			return
		}
		req.Then(snaps, seq)
	})
	if !found {
		return fmt.Errorf("%w at %s", ErrNotFound, strings.Join(channels, ", "))
	}
	return nil
}

// readable keeps the channels the caller may read.
func (c *appCore) readable(who Caller, channels []string) []string {
	out := make([]string, 0, len(channels))
	for _, ch := range channels {
		if c.gate.Read(who, ch) == nil {
			out = append(out, ch)
		}
	}
	return out
}

// Unsubscribe stops a viewer receiving a channel.
type Unsubscribe struct{ c *appCore }

// UnsubscribeRequest names the viewer and the channel.
type UnsubscribeRequest struct {
	Viewer  *Viewer
	Channel string
}

// Handle needs nothing: a viewer may always stop receiving.
func (h Unsubscribe) Handle(_ context.Context, _ Caller, req UnsubscribeRequest) error {
	h.c.host.hub.Unsubscribe(req.Viewer, req.Channel)
	return nil
}

// Resume subscribes a returning viewer again to the channels it had.
type Resume struct{ c *appCore }

// ResumeRequest says who comes back, from where.
type ResumeRequest struct {
	Viewer *Viewer
	// LastSeen is the last sequence number the viewer's client saw.
	LastSeen uint64
	Channels []string
	// Then is handed what was missed, as SubscribeRequest.Then is.
	Then func(ResumeResult)
}

// Handle needs terminal:output for each terminal channel, as Subscribe:
// one the caller may no longer read is reported Missing, like one that
// has gone.
func (h Resume) Handle(_ context.Context, who Caller, req ResumeRequest) error {
	readable := h.c.readable(who, req.Channels)
	unreadable := []string{}
	for _, ch := range req.Channels {
		if !contains(readable, ch) {
			unreadable = append(unreadable, ch)
		}
	}
	h.c.host.Resume(req.Viewer, req.LastSeen, readable, func(r ResumeResult) {
		r.Missing = append(r.Missing, unreadable...)
		req.Then(r)
	})
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
