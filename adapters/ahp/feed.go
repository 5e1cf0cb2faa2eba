package ahp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"

	"github.com/shellgate/shellgate/app/terminals"
)

// FeedMethod writes bytes to a terminal's process as they are, and can end
// its input (D20 in docs/protocol.md). terminal/input carries text, turns
// a ^C on pipes into an interrupt, is not answered, and has no end; a file
// piped into a command needs all three.
const FeedMethod = "x-shellgate/input"

// feedParams are FeedMethod's parameters.
type feedParams struct {
	Channel string `json:"channel"`
	// Bytes is standard base64.
	Bytes string `json:"bytes"`
	// Offset is the count of bytes fed to the terminal before these; absent,
	// they go on from wherever the stream is.
	Offset *int64 `json:"offset"`
	// End ends the input after these bytes.
	End bool `json:"end"`
}

// feedResult answers a feed once its bytes reached the process.
type feedResult struct {
	// Offset is the stream's length with these bytes: where the next feed
	// goes on from.
	Offset int64 `json:"offset"`
}

// decodeFeed reads FeedMethod's parameters, naming the field that is wrong.
func decodeFeed(raw json.RawMessage) (feedParams, []byte, *Error) {
	var p feedParams
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&p); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) && typ.Field != "" {
			return p, nil, invalidParams("%s must be %s", typ.Field, feedFieldKinds[typ.Field])
		}
		return p, nil, invalidParams("params must be an object")
	}
	if p.Channel == "" {
		return p, nil, invalidParams("channel is required")
	}
	if p.Offset != nil && *p.Offset < 0 {
		return p, nil, invalidParams("offset must not be negative")
	}
	b, err := base64.StdEncoding.DecodeString(p.Bytes)
	if err != nil {
		return p, nil, invalidParams("bytes must be standard base64 (%v)", err)
	}
	return p, b, nil
}

var feedFieldKinds = map[string]string{
	"channel": "a string", "bytes": "a string of standard base64",
	"offset": "an integer", "end": "true or false",
}

// feed answers FeedMethod once its bytes (and its end, when asked) reached
// the process, so a sender that keeps a few feeds in flight goes no faster
// than the process reads. Until then the connection serves everything
// else. A feed sent as a notification is written, unanswered.
func (c *conn) feed(ctx context.Context, m message) (any, *Error) {
	p, b, perr := decodeFeed(m.Params)
	channel := canonicalChannel(p.Channel)
	req := terminals.FeedRequest{URI: channel, Offset: -1, Bytes: b, End: p.End}
	if perr != nil {
		req.Invalid = perr
	}
	if p.Offset != nil {
		req.Offset = *p.Offset
	}
	id := bytes.Clone(m.ID)
	// Told by the host, on whichever goroutine wrote the bytes.
	req.Fed = func(length int64, err error) {
		switch {
		case id == nil:
		case err != nil:
			c.reply(id, nil, c.wireError(err, channel, "feed"))
		default:
			c.reply(id, feedResult{Offset: length}, nil)
		}
	}
	if err := c.srv.app.FeedInput.Handle(ctx, c.who(), req); err != nil {
		return nil, c.wireError(err, channel, "feed")
	}
	return answered, nil
}
