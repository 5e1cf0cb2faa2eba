package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Resumed is the daemon's answer to reconnect.
type Resumed struct {
	// Replay says Actions holds every envelope of the subscribed channels
	// that the old connection did not deliver, in order. When it is false
	// the gap reached further back than the daemon's replay buffer: that
	// output is lost, and Snapshots holds each channel's state now.
	Replay bool
	// Actions are the missed envelopes (Replay only). They come before
	// anything the new connection's Actions delivers.
	Actions []Envelope
	// Missing are the channels that could not be resumed (a disposed
	// terminal, say); they are no longer subscribed to.
	Missing []string
	// Snapshots are the channels' fresh states (not Replay only).
	Snapshots []Snapshot
}

// Snapshot finds the fresh snapshot of channel.
func (r *Resumed) Snapshot(channel string) (Snapshot, bool) {
	for _, s := range r.Snapshots {
		if s.Resource == channel {
			return s, true
		}
	}
	return Snapshot{}, false
}

// IsMissing says whether channel could not be resumed.
func (r *Resumed) IsMissing(channel string) bool { return slices.Contains(r.Missing, channel) }

// ErrStillConnected refuses to resume a connection that has not ended.
var ErrStillConnected = errors.New("the connection to the daemon is still open: only an ended one can be resumed")

// Resume carries c on over a new connection with reconnect: the same client
// id, the channels c was subscribed to, and the last serverSeq c delivered.
// Call it once c's Actions has been closed and drained, so that what c
// delivered and what the answer holds join up with nothing lost or doubled.
// The new client numbers its actions on from c's, so the daemon, which
// ignores a clientSeq it has already seen from this client id, applies
// them. c itself stays ended; close it.
//
// An *RPCError says the daemon would not resume this client (it no longer
// remembers it, say); Reopen can still reach the daemon under the same id.
func (c *Client) Resume(ctx context.Context) (*Client, *Resumed, error) {
	select {
	case <-c.done:
	default:
		return nil, nil, ErrStillConnected
	}
	c.mu.Lock()
	lastSeen := c.lastSeq
	subs := make([]string, 0, len(c.subs))
	for ch := range c.subs {
		subs = append(subs, ch)
	}
	c.mu.Unlock()
	slices.Sort(subs)

	var lost error
	for range resumeAttempts {
		n, res, err := c.resumeOnce(ctx, lastSeen, subs)
		if err == nil || !Resumable(err) || ctx.Err() != nil {
			return n, res, err
		}
		// The new connection ended before the answer came: output that
		// keeps pouring in can overflow it while the daemon is still
		// sending a large replay. Nothing was delivered, so the same cursor
		// holds; each try asks for more, until the daemon answers with
		// snapshots instead or the output calms down.
		lost = err
	}
	return nil, nil, fmt.Errorf("could not resume in %d attempts: %w", resumeAttempts, lost)
}

// resumeAttempts bounds how often Resume tries when each new connection
// ends before the daemon's answer arrives (ctx bounds the time).
const resumeAttempts = 20

func (c *Client) resumeOnce(ctx context.Context, lastSeen uint64, subs []string) (*Client, *Resumed, error) {
	n, err := c.redial(ctx)
	if err != nil {
		return nil, nil, err
	}
	var res Resumed
	var decodeErr error
	_, err = n.request(ctx, "reconnect", map[string]any{
		"channel":           RootChannel,
		"clientId":          n.clientID,
		"lastSeenServerSeq": lastSeen,
		"subscriptions":     subs,
	}, func(raw json.RawMessage) {
		// On the reader goroutine, before any envelope that follows the
		// answer is looked at.
		decodeErr = n.resumed(raw, lastSeen, subs, &res)
	})
	if err == nil && decodeErr != nil {
		err = fmt.Errorf("reconnect: unexpected answer: %w", decodeErr)
	}
	if err != nil {
		_ = n.Close()
		return nil, nil, err
	}
	return n, &res, nil
}

// resumed reads reconnect's answer into res and sets up c's bookkeeping
// from it.
func (c *Client) resumed(raw json.RawMessage, lastSeen uint64, subs []string, res *Resumed) error {
	var w struct {
		Type      string            `json:"type"`
		Actions   []json.RawMessage `json:"actions"`
		Missing   []string          `json:"missing"`
		Snapshots []Snapshot        `json:"snapshots"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return err
	}
	c.mu.Lock()
	if lastSeen > c.lastSeq {
		c.lastSeq = lastSeen
	}
	c.mu.Unlock()
	switch w.Type {
	case "replay":
		res.Replay, res.Missing = true, w.Missing
		for _, a := range w.Actions {
			env, ok := decodeEnvelope(a)
			if !ok {
				continue
			}
			res.Actions = append(res.Actions, env)
		}
		c.mu.Lock()
		for _, env := range res.Actions {
			c.lastSeq = max(c.lastSeq, env.ServerSeq)
		}
		for _, ch := range subs {
			if !slices.Contains(w.Missing, ch) {
				c.subs[ch] = true
			}
		}
		c.mu.Unlock()
	case "snapshot":
		res.Snapshots = w.Snapshots
		for _, ch := range subs {
			if _, ok := res.Snapshot(ch); !ok {
				res.Missing = append(res.Missing, ch)
			}
		}
		c.noteSnapshots(w.Snapshots...)
	default:
		return fmt.Errorf("unknown result type %q", w.Type)
	}
	return nil
}

// Reopen opens a fresh connection under c's client id and initializes it,
// subscribed to nothing: enough to act on terminals c claimed (dispose of
// them) after c ended and could not be resumed.
func (c *Client) Reopen(ctx context.Context) (*Client, error) {
	n, err := c.redial(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := n.Initialize(ctx); err != nil {
		_ = n.Close()
		return nil, err
	}
	return n, nil
}

// redial connects again as c.
func (c *Client) redial(ctx context.Context) (*Client, error) {
	n, err := Dial(ctx, c.url, Options{Token: c.token, ClientID: c.clientID, Name: c.name})
	if err != nil {
		return nil, err
	}
	c.writeMu.Lock()
	seq := c.nextSeq
	c.writeMu.Unlock()
	n.writeMu.Lock()
	n.nextSeq = seq
	n.writeMu.Unlock()
	return n, nil
}
