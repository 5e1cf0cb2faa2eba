package ports

import (
	"context"
	"errors"
	"fmt"
)

// ErrConnClosed is returned by Conn.Read and Conn.Write once the connection
// has closed, from either side.
var ErrConnClosed = errors.New("connection closed")

// ErrListenerClosed is returned by Listener.Accept once the listener is
// closed, so an accept loop can tell a clean stop from a failure.
var ErrListenerClosed = errors.New("listener closed")

// CloseCode says why a message connection was closed (WebSocket close codes,
// which other transports map as best they can).
type CloseCode int

// Close codes the core uses.
const (
	CloseNormal        CloseCode = 1000
	CloseGoingAway     CloseCode = 1001 // the daemon is stopping
	CloseInvalidData   CloseCode = 1007 // a text frame that is not UTF-8
	ClosePolicy        CloseCode = 1008 // refused: a slow client, a failed handshake
	CloseMessageTooBig CloseCode = 1009
	CloseInternal      CloseCode = 1011
	CloseTryAgainLater CloseCode = 1013 // a cap is reached for now

	// CloseAbnormal is never sent: it is reported locally when a connection
	// ended without a close frame (dropped, timed out, abandoned).
	CloseAbnormal CloseCode = 1006
)

// CloseError is how a closed connection reports why it closed: the code and
// reason sent by whichever side closed first. It matches ErrConnClosed with
// errors.Is, so callers that do not care about the code need not unpack it.
type CloseError struct {
	Code   CloseCode
	Reason string
}

// Error describes the close for logs.
func (e *CloseError) Error() string {
	return fmt.Sprintf("connection closed: code %d, reason %q", int(e.Code), e.Reason)
}

// Unwrap makes errors.Is(err, ErrConnClosed) hold for every close.
func (e *CloseError) Unwrap() error { return ErrConnClosed }

// Peer is what a connection presented when it arrived.
type Peer struct {
	// Token is the bearer token presented at connect time, if any. It must
	// never be logged.
	Token string
	// RemoteAddr is the peer's address, for logs.
	RemoteAddr string
	// Origin is the browser's Origin header, if any.
	Origin string
}

// Conn is one message connection: whole messages in order, both ways.
type Conn interface {
	// Read returns the next whole message.
	Read(ctx context.Context) ([]byte, error)
	// Write sends one whole message.
	Write(ctx context.Context, msg []byte) error
	// Close ends the connection with a code and a reason the peer can read.
	Close(code CloseCode, reason string) error
	// Peer describes who connected.
	Peer() Peer
}

// Gatherer is a Conn that can send several messages in one socket write:
// the messages written between Gather and Flush leave together at Flush
// (a keystroke's echo and the output it caused reach the peer as one
// segment). Gather reports false, and changes nothing, where the
// connection cannot gather.
type Gatherer interface {
	Gather() bool
	// Flush writes what was gathered; an error ends the connection.
	Flush(ctx context.Context) error
}

// Listener hands over connections as they arrive.
type Listener interface {
	// Accept returns the next connection, or an error once the listener or ctx
	// is closed.
	Accept(ctx context.Context) (Conn, error)
	// Close stops accepting.
	Close() error
}
