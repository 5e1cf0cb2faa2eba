package ahpclient

import (
	"bytes"
	"context"
	"fmt"
	"strings"
)

// Match returns a predicate for envelopes on channel with action type typ;
// an empty argument matches anything.
func Match(channel, typ string) func(Envelope) bool {
	return func(e Envelope) bool {
		return (channel == "" || e.Channel == channel) && (typ == "" || e.Type == typ)
	}
}

// MatchOrigin returns a predicate for the echo of this client's dispatch clientSeq on channel.
func MatchOrigin(channel string, clientSeq int64) func(Envelope) bool {
	return func(e Envelope) bool {
		return e.Channel == channel && e.Origin != nil && e.Origin.ClientSeq == clientSeq
	}
}

// wait re-evaluates check (under c.mu, so it must not call back into the
// client) each time the client's state changes, until check reports done, ctx
// ends, or the connection is gone and check still fails. describe explains,
// on failure, what was awaited.
func (c *Client) wait(ctx context.Context, check func() bool, describe func() string) error {
	for {
		c.mu.Lock()
		if check() {
			c.mu.Unlock()
			return nil
		}
		if c.finished {
			err := c.closedErrLocked()
			what := describe()
			c.mu.Unlock()
			return fmt.Errorf("ahpclient: %s: %w", what, err)
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			c.mu.Lock()
			what := describe()
			c.mu.Unlock()
			return fmt.Errorf("ahpclient: %s: %w", what, ctx.Err())
		}
	}
}

// scan waits for the first item after *cursor that matches, then moves
// *cursor past it. items and cursor belong to c and are only touched under
// c.mu; match runs without the lock, so a predicate may call the client.
// Items are append-only, so the elements read here are never written again.
func scan[T any](ctx context.Context, c *Client, items *[]T, cursor *int, match func(T) bool, what string) (T, error) {
	var zero T
	for {
		c.mu.Lock()
		from, list, finished, changed := *cursor, *items, c.finished, c.changed
		c.mu.Unlock()

		moved := false
		for i := from; i < len(list); i++ {
			if !match(list[i]) {
				continue
			}
			c.mu.Lock()
			if *cursor == from {
				*cursor = i + 1
			} else {
				moved = true // another waiter consumed meanwhile; look again
			}
			c.mu.Unlock()
			if !moved {
				return list[i], nil
			}
			break
		}
		if moved {
			continue
		}
		if finished {
			c.mu.Lock()
			err := c.closedErrLocked()
			c.mu.Unlock()
			return zero, fmt.Errorf("ahpclient: waiting for %s (%d seen since the wait began): %w", what, len(list)-from, err)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return zero, fmt.Errorf("ahpclient: waiting for %s (%d seen since the wait began%s): %w",
				what, len(list)-from, describeTail(list[from:]), ctx.Err())
		}
	}
}

// describeTail names the last few items a failed wait passed over.
func describeTail[T any](items []T) string {
	const show = 5
	if len(items) == 0 {
		return ""
	}
	if len(items) > show {
		items = items[len(items)-show:]
	}
	parts := make([]string, len(items))
	for i, it := range items {
		switch v := any(it).(type) {
		case Envelope:
			parts[i] = fmt.Sprintf("%s %s #%d", v.Channel, v.Type, v.ServerSeq)
		case Notification:
			parts[i] = v.Method
		case Message:
			parts[i] = string(v.Raw)
			if len(parts[i]) > 120 {
				parts[i] = parts[i][:120] + "…"
			}
		}
	}
	return "; last: " + strings.Join(parts, ", ")
}

// WaitAction returns the first envelope after the action cursor that matches,
// and moves the cursor past it: successive waits see only later envelopes, and
// envelopes passed over are not offered again (Actions still lists them).
func (c *Client) WaitAction(ctx context.Context, match func(Envelope) bool) (Envelope, error) {
	return scan(ctx, c, &c.actions, &c.actionCursor, match, "an action")
}

// SkipActions moves the action cursor past every envelope received so far.
func (c *Client) SkipActions() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.actionCursor = len(c.actions)
}

// WaitNotification is WaitAction for non-action notifications (its own cursor).
func (c *Client) WaitNotification(ctx context.Context, match func(Notification) bool) (Notification, error) {
	return scan(ctx, c, &c.notes, &c.noteCursor, match, "a notification")
}

// WaitMessage is WaitAction over every received frame (its own cursor), e.g.
// to catch the answer to a frame written with Send.
func (c *Client) WaitMessage(ctx context.Context, match func(Message) bool) (Message, error) {
	return scan(ctx, c, &c.messages, &c.msgCursor, match, "a message")
}

// WaitOutput waits until the `terminal/data` text received for channel after
// the channel's output cursor contains substr, moves the cursor past the
// match and returns the text from the old cursor up to the end of the match.
func (c *Client) WaitOutput(ctx context.Context, channel, substr string) (string, error) {
	var got string
	scanned := 0 // bytes after the cursor already searched, so each wake scans only what is new
	err := c.wait(ctx, func() bool {
		from := c.outputCursor[channel]
		out := c.output[channel][from:]
		start := max(0, scanned-len(substr)+1)
		i := bytes.Index(out[start:], []byte(substr))
		if i < 0 {
			scanned = len(out)
			return false
		}
		i += start
		end := i + len(substr)
		got = string(out[:end])
		c.outputCursor[channel] = from + end
		return true
	}, func() string {
		out := string(c.output[channel][c.outputCursor[channel]:])
		const tail = 512
		if len(out) > tail {
			out = "…" + out[len(out)-tail:]
		}
		return fmt.Sprintf("waiting for %q in the output of %s (unread output %q)", substr, channel, out)
	})
	return got, err
}

// WaitClosed waits until the connection has ended.
func (c *Client) WaitClosed(ctx context.Context) error {
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("ahpclient: waiting for the connection to close: %w", ctx.Err())
	}
}
