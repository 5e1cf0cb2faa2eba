package terminals

import (
	"context"

	"github.com/shellgate/shellgate/domain/access"
)

// FeedInput writes bytes of a terminal's input stream to its process as
// they are, and can end that stream (D20 in docs/protocol.md).
type FeedInput struct{ c *appCore }

// FeedRequest is one feed.
type FeedRequest struct {
	URI string
	// Offset is the count of bytes fed before these, or -1 to go on from
	// the stream's end (Terminal.Feed).
	Offset int64
	Bytes  []byte
	// End ends the input once these bytes are in.
	End bool
	// Fed is told once the bytes (and the end, when asked) reached the
	// process, or why they did not; on whichever goroutine wrote them.
	Fed Fed
	// Invalid is as OpenRequest's.
	Invalid error
}

// Handle needs terminal:input, as typed input does. An error returned is
// the refusal; once nil, Fed is told the outcome.
func (h FeedInput) Handle(_ context.Context, who Caller, req FeedRequest) error {
	if err := h.c.gate.Allow(who, access.TerminalInput); err != nil {
		return err
	}
	if req.Invalid != nil {
		return req.Invalid
	}
	host := h.c.host
	if !req.End {
		return host.Feed(req.URI, req.Offset, req.Bytes, req.Fed)
	}
	if len(req.Bytes) == 0 {
		return host.EndInput(req.URI, req.Offset, req.Fed)
	}
	// The end follows the bytes once they are in.
	return host.Feed(req.URI, req.Offset, req.Bytes, func(length int64, err error) {
		if err == nil {
			err = host.EndInput(req.URI, length, req.Fed)
		}
		if err != nil {
			req.Fed(length, err)
		}
	})
}
