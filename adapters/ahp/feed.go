package ahp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

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
func (c *conn) feed(_ context.Context, m message) (any, *Error) {
	p, b, perr := decodeFeed(m.Params)
	if perr != nil {
		return nil, perr
	}
	channel := canonicalChannel(p.Channel)
	offset := int64(-1)
	if p.Offset != nil {
		offset = *p.Offset
	}
	id := bytes.Clone(m.ID)
	// answer is told by the host, on whichever goroutine wrote the bytes.
	answer := func(length int64, err error) {
		switch {
		case id == nil:
		case err != nil:
			c.reply(id, nil, feedError(channel, err))
		default:
			c.reply(id, feedResult{Offset: length}, nil)
		}
	}
	if !p.End {
		if err := c.srv.host.Feed(channel, offset, b, answer); err != nil {
			return nil, feedError(channel, err)
		}
		return answered, nil
	}
	// The end follows the bytes once they are in.
	end := func(length int64, err error) {
		if err == nil {
			err = c.srv.host.EndInput(channel, length, answer)
		}
		if err != nil {
			answer(length, err)
		}
	}
	if len(b) == 0 {
		if err := c.srv.host.EndInput(channel, offset, answer); err != nil {
			return nil, feedError(channel, err)
		}
		return answered, nil
	}
	if err := c.srv.host.Feed(channel, offset, b, end); err != nil {
		return nil, feedError(channel, err)
	}
	return answered, nil
}

// feedError words a refused feed: what is wrong, and what to do.
func feedError(channel string, err error) *Error {
	var gap *terminals.GapError
	switch {
	case errors.As(err, &gap):
		return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("offset: %v; send again from there", gap), Data: map[string]any{"offset": gap.Want}}
	case errors.Is(err, terminals.ErrNotFound):
		return errorf(CodeNotFound, "No terminal at %s", channel)
	case errors.Is(err, terminals.ErrExited):
		return &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf("The process of %s has exited, so the input reaches nothing", channel), Data: map[string]any{"exited": true}}
	case errors.Is(err, terminals.ErrInputEnded):
		return errorf(CodeInvalidRequest, "The input of %s has ended; nothing more can be fed to it", channel)
	case errors.Is(err, terminals.ErrInputBacklog):
		return errorf(CodeInvalidRequest, "%v; keep fewer bytes unanswered", err)
	}
	return errorf(CodeInternalError, "Could not feed %s: %v", channel, err)
}
