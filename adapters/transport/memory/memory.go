// Package memory provides in-process ports.Conn pairs and a ports.Listener,
// for embedding shellgate and for tests.
//
// Connections behave like the WebSocket adapter's, so tests over them catch
// the same mistakes:
//
//   - Messages are copied on Write (no aliasing) and arrive whole and in
//     order.
//   - Each direction is bounded: it holds DefaultBuffer messages (or the size
//     given to PipeBuffer), then Write waits for the peer to Read, as a
//     socket's send buffer would. A size of 0 makes every Write wait for the
//     matching Read.
//   - Close(code, reason) reaches the peer's Read as a *ports.CloseError,
//     after the messages written before it; the closing side reads nothing
//     more. Read and Write on an ended connection return that same error.
//   - A Read or Write whose context ends first ends the connection (code
//     ports.CloseAbnormal), as coder/websocket does; the error also matches
//     the context's error.
//   - One reader and any number of writers may use a connection at once.
package memory

import (
	"context"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/shellgate/shellgate/ports"
)

// DefaultBuffer is how many messages each direction of a Pipe holds before
// Write waits.
const DefaultBuffer = 64

// Pipe returns the two ends of a connection whose server side presented
// peer, each direction holding DefaultBuffer messages.
func Pipe(peer ports.Peer) (server, client ports.Conn) {
	return PipeBuffer(peer, DefaultBuffer)
}

// PipeBuffer is Pipe with each direction holding size messages (0: every
// Write waits for the peer's Read; negative counts as 0). A small size lets a
// test make a slow reader.
func PipeBuffer(peer ports.Peer, size int) (server, client ports.Conn) {
	size = max(size, 0)
	p := &pipe{done: make(chan struct{})}
	toServer := make(chan []byte, size)
	toClient := make(chan []byte, size)
	s := &end{p: p, peer: peer, in: toServer, out: toClient}
	c := &end{p: p, peer: peer, in: toClient, out: toServer}
	return s, c
}

// pipe is the state both ends share: whether, how and by whom it closed.
type pipe struct {
	mu     sync.Mutex
	err    *ports.CloseError
	closer *end
	done   chan struct{}
}

// close records the first close and reports the one that stands.
func (p *pipe) close(by *end, ce *ports.CloseError) *ports.CloseError {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err, p.closer = ce, by
		close(p.done)
	}
	return p.err
}

// state returns the close error, if any, and whether e closed first.
func (p *pipe) state(e *end) (*ports.CloseError, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err, p.closer == e
}

// end is one side of a pipe.
type end struct {
	p    *pipe
	peer ports.Peer
	in   chan []byte
	out  chan []byte
}

var _ ports.Conn = (*end)(nil)

// Peer returns the peer given to Pipe or Dial, on both ends.
func (e *end) Peer() ports.Peer { return e.peer }

// Read returns the next message, or the close error once the connection has
// ended and, if the peer closed it, its earlier messages have been read.
func (e *end) Read(ctx context.Context) ([]byte, error) {
	if ce, mine := e.p.state(e); ce != nil {
		if mine {
			return nil, ce
		}
		return e.drain(ce)
	}
	select {
	case msg := <-e.in:
		return msg, nil
	case <-e.p.done:
		ce, mine := e.p.state(e)
		if mine {
			return nil, ce
		}
		return e.drain(ce)
	case <-ctx.Done():
		return nil, e.abandon(ctx, "read")
	}
}

// drain hands over a message the peer wrote before closing, or the close.
func (e *end) drain(ce *ports.CloseError) ([]byte, error) {
	select {
	case msg := <-e.in:
		return msg, nil
	default:
		return nil, ce
	}
}

// Write queues a copy of msg for the peer, waiting while its direction is
// full.
func (e *end) Write(ctx context.Context, msg []byte) error {
	if ce, _ := e.p.state(e); ce != nil {
		return ce
	}
	cp := make([]byte, len(msg))
	copy(cp, msg)
	select {
	case e.out <- cp:
		return nil
	case <-e.p.done:
		ce, _ := e.p.state(e)
		return ce
	case <-ctx.Done():
		return e.abandon(ctx, "write")
	}
}

// Close ends the connection for both sides with code and reason. As on a
// WebSocket, a code that cannot be sent becomes 1011 and the reason is cut to
// 123 bytes. Closing twice is a no-op.
func (e *end) Close(code ports.CloseCode, reason string) error {
	code, reason = sendable(code, reason)
	e.p.close(e, &ports.CloseError{Code: code, Reason: reason})
	return nil
}

func (e *end) abandon(ctx context.Context, op string) error {
	ce := e.p.close(e, &ports.CloseError{
		Code:   ports.CloseAbnormal,
		Reason: op + " abandoned: " + ctx.Err().Error(),
	})
	return fmt.Errorf("%w (%w)", ce, ctx.Err())
}

// sendable mirrors what fits in a WebSocket close frame (RFC 6455 §7.4), so
// code that passes over memory also passes over the wire.
func sendable(code ports.CloseCode, reason string) (ports.CloseCode, string) {
	switch {
	case code >= 1000 && code <= 1003, code >= 1007 && code <= 1014, code >= 3000 && code <= 4999:
	default:
		code = ports.CloseInternal
	}
	const maxReason = 123 // a control frame's 125 bytes less the code
	if len(reason) > maxReason {
		cut := maxReason
		for cut > 0 && !utf8.RuneStart(reason[cut]) {
			cut--
		}
		reason = reason[:cut]
	}
	return code, reason
}
