package websocket

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	ws "github.com/coder/websocket"

	"github.com/shellgate/shellgate/ports"
)

// conn adapts one upgraded WebSocket to ports.Conn; the package doc gives
// its error contract.
type conn struct {
	ws           *ws.Conn
	peer         ports.Peer
	readLimit    int64
	writeTimeout time.Duration
	pingInterval time.Duration
	pingTimeout  time.Duration
	log          *slog.Logger

	mu     sync.Mutex
	endErr *ports.CloseError // first cause; set once

	gather    *gatherConn    // the socket, where it can gather writes; else nil
	pingTimer *time.Timer    // the next ping; set under mu by startPings
	pinging   sync.WaitGroup // a ping waiting for its pong
}

var (
	_ ports.Conn     = (*conn)(nil)
	_ ports.Gatherer = (*conn)(nil)
)

func newConn(wsc *ws.Conn, peer ports.Peer, opts Options, log *slog.Logger) *conn {
	return &conn{
		ws:           wsc,
		peer:         peer,
		readLimit:    opts.ReadLimit,
		writeTimeout: opts.WriteTimeout,
		pingInterval: opts.PingInterval,
		pingTimeout:  opts.PingTimeout,
		log:          log,
	}
}

// Peer describes who connected.
func (c *conn) Peer() ports.Peer { return c.peer }

// Read returns the next message, text or binary alike. A text message that
// is not valid UTF-8 ends the connection with 1007, as RFC 6455 §8.1 asks:
// the library leaves that check to its caller.
func (c *conn) Read(ctx context.Context) ([]byte, error) {
	if ce := c.ended(); ce != nil {
		return nil, ce
	}
	typ, msg, err := c.ws.Read(ctx)
	if err != nil {
		return nil, c.failed(ctx, err)
	}
	if typ == ws.MessageText && !utf8.Valid(msg) {
		return nil, c.refuseInvalidText()
	}
	return msg, nil
}

// invalidTextReason is the close reason sent with 1007.
const invalidTextReason = "text frame is not valid UTF-8; send UTF-8 text or a binary frame"

// refuseInvalidText closes with 1007 and reports that close to the reader.
// The close handshake runs here, on the reader's goroutine, so nothing else
// reads the socket meanwhile; it is bounded by the library's close timeout.
func (c *conn) refuseInvalidText() error {
	ce, first := c.end(&ports.CloseError{Code: ports.CloseInvalidData, Reason: invalidTextReason})
	if first {
		_ = c.ws.Close(ws.StatusInvalidFramePayloadData, invalidTextReason)
	}
	return ce
}

// gatherAlone is the largest message that is gathered on its own: its
// frame header and payload reach the socket in one write, whatever the
// size of the library's write buffer (hijack.go). Copying it once more
// costs less than a second system call; a larger one is written straight
// from the message.
const gatherAlone = 16 << 10

// Write sends msg as one text frame, within the write timeout.
func (c *conn) Write(ctx context.Context, msg []byte) error {
	if ce := c.ended(); ce != nil {
		return ce
	}
	if c.gather != nil && c.writeTimeout > 0 {
		own := len(msg) <= gatherAlone && c.gather.gather()
		if own || c.gather.holding() {
			// Gathered, the library's write only copies: it cannot wait, so
			// it gets a context that never ends. The library keeps the
			// context of the last write until the next one, and a timeout's
			// context (its timer, its channel) held that way cost each idle
			// connection about 500 bytes. The write timeout and ctx's
			// deadline bound the flush: this one's, or the gatherer's.
			err := c.ws.Write(context.WithoutCancel(ctx), ws.MessageText, msg)
			if err != nil {
				err = c.failed(ctx, err)
			}
			if own {
				if ferr := c.Flush(ctx); err == nil {
					err = ferr
				}
			}
			return err
		}
	}
	return c.write(ctx, msg)
}

func (c *conn) write(ctx context.Context, msg []byte) error {
	wctx := ctx
	if c.writeTimeout > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, c.writeTimeout)
		defer cancel()
	}
	err := c.ws.Write(wctx, ws.MessageText, msg)
	if err == nil {
		return nil
	}
	if ctx.Err() == nil && wctx.Err() != nil {
		// A peer that cannot take one message in this long is stuck;
		// the library has already dropped the socket.
		ce, _ := c.end(stuckPeer(c.writeTimeout))
		return ce
	}
	return c.failed(ctx, err)
}

// Gather holds the messages written from now until Flush back, to send
// them in one socket write.
func (c *conn) Gather() bool {
	if c.gather == nil {
		return false
	}
	c.gather.gather()
	return true
}

// Flush sends what was gathered, within the write timeout.
func (c *conn) Flush(ctx context.Context) error {
	if c.gather == nil {
		return nil
	}
	var deadline time.Time
	if c.writeTimeout > 0 {
		deadline = time.Now().Add(c.writeTimeout)
	}
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
		deadline = d
	}
	if err := c.gather.flush(deadline); err != nil {
		_ = c.ws.CloseNow()
		if errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() == nil && c.writeTimeout > 0 {
			ce, _ := c.end(stuckPeer(c.writeTimeout))
			return ce
		}
		return c.failed(ctx, err)
	}
	return nil
}

// stuckPeer is the cause of an end when a peer did not take a message
// within the write timeout.
func stuckPeer(timeout time.Duration) *ports.CloseError {
	return &ports.CloseError{
		Code:   ports.CloseAbnormal,
		Reason: fmt.Sprintf("peer did not take a message within %s", timeout),
	}
}

// Close sends code and reason in a close frame and waits (up to about ten
// seconds) for the peer's answer. A code that cannot travel in a close frame
// is sent as 1011, and the reason is cut to the 123 bytes a frame can hold.
// Closing an ended connection only releases it.
func (c *conn) Close(code ports.CloseCode, reason string) error {
	code, reason = sendable(code, reason)
	_, first := c.end(&ports.CloseError{Code: code, Reason: reason})
	err := c.ws.Close(ws.StatusCode(code), reason)
	c.pinging.Wait()
	if !first || err == nil || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return fmt.Errorf("websocket: close: %w", err)
}

// startPings begins pinging once the connection has an owner that reads it:
// pongs are only noticed while a Read is in progress.
func (c *conn) startPings() {
	if c.pingInterval <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.endErr != nil {
		return
	}
	c.pingTimer = time.AfterFunc(c.pingInterval, c.ping)
}

// ping runs on the timer's goroutine, which lives only while the ping
// waits for its pong: between pings an idle connection holds a timer, not
// a goroutine and its stack.
func (c *conn) ping() {
	c.mu.Lock()
	if c.endErr != nil {
		c.mu.Unlock()
		return
	}
	// Under mu and before any end: Close, which ends first, waits for it.
	c.pinging.Add(1)
	c.mu.Unlock()
	defer c.pinging.Done()

	ctx, cancel := context.WithTimeout(context.Background(), c.pingTimeout)
	err := c.ws.Ping(ctx)
	cancel()
	if err == nil {
		c.mu.Lock()
		if c.endErr == nil {
			c.pingTimer.Reset(c.pingInterval)
		}
		c.mu.Unlock()
		return
	}
	if errors.Is(err, net.ErrClosed) {
		// Ended by someone else; the reader reports the cause.
		return
	}
	_, first := c.end(&ports.CloseError{
		Code:   ports.CloseAbnormal,
		Reason: fmt.Sprintf("peer did not answer a ping within %s", c.pingTimeout),
	})
	// No close handshake: a peer that ignores pings will not answer one.
	_ = c.ws.CloseNow()
	if first {
		c.log.Info("websocket peer stopped answering pings; dropped",
			slog.String("remote", c.peer.RemoteAddr))
	}
}

// failed records why a Read or Write failed and returns the error to give
// the caller.
func (c *conn) failed(ctx context.Context, err error) error {
	ce, isClose := errorsAsClose(err)
	switch {
	case isClose:
	case errors.Is(err, ws.ErrMessageTooBig):
		// The library has already sent 1009 to the peer.
		ce = &ports.CloseError{
			Code:   ports.CloseMessageTooBig,
			Reason: fmt.Sprintf("message larger than the %d-byte limit", c.readLimit),
		}
	case ctx.Err() != nil:
		ce = &ports.CloseError{Code: ports.CloseAbnormal, Reason: "abandoned: " + ctx.Err().Error()}
	default:
		ce = &ports.CloseError{Code: ports.CloseAbnormal, Reason: "connection lost: " + err.Error()}
	}
	ce, _ = c.end(ce)
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", ce, ctx.Err())
	}
	return ce
}

// end records the first cause of the end and reports whether this call was
// the first.
func (c *conn) end(ce *ports.CloseError) (*ports.CloseError, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.endErr != nil {
		return c.endErr, false
	}
	c.endErr = ce
	if c.pingTimer != nil {
		c.pingTimer.Stop()
	}
	return ce, true
}

func (c *conn) ended() *ports.CloseError {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.endErr
}

// maxCloseReason is a control frame's 125-byte payload less the 2-byte code.
const maxCloseReason = 123

// sendable returns a code and reason that fit in a close frame, so Close
// always sends one instead of failing.
func sendable(code ports.CloseCode, reason string) (ports.CloseCode, string) {
	if !wireCode(code) {
		code = ports.CloseInternal
	}
	if len(reason) > maxCloseReason {
		cut := maxCloseReason
		for cut > 0 && !utf8.RuneStart(reason[cut]) {
			cut--
		}
		reason = reason[:cut]
	}
	return code, reason
}

// wireCode follows RFC 6455 §7.4: 1004–1006 and 1015 are reserved for local
// reporting and may not be sent.
func wireCode(code ports.CloseCode) bool {
	switch {
	case code >= 1000 && code <= 1003, code >= 1007 && code <= 1014:
		return true
	case code >= 3000 && code <= 4999:
		return true
	}
	return false
}
