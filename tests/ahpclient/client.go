// Package ahpclient is a small Agent Host Protocol client for end-to-end
// tests: it dials a real server over WebSocket, routes responses to callers,
// keeps every notification (typed and raw) in an inbox tests can wait on, and
// can stop reading on purpose to play a slow client.
package ahpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"
)

// DefaultReadLimit is the largest frame the client accepts unless DialOptions.ReadLimit says otherwise.
const DefaultReadLimit = 64 << 20

// ErrClosed is returned (wrapped) by calls and waits once the connection is gone.
var ErrClosed = errors.New("ahpclient: connection closed")

// DialOptions tune how Dial opens the WebSocket.
type DialOptions struct {
	// Token is sent as `Authorization: Bearer <Token>` when set.
	Token string
	// QueryToken is added to the URL as `?token=<QueryToken>` when set.
	QueryToken string
	// Origin is sent as the Origin header when set.
	Origin string
	// Header holds any further handshake headers.
	Header http.Header
	// HTTPClient performs the handshake (e.g. for TLS); by default a
	// keep-alive-free client is used so a refused upgrade leaves no idle connection behind.
	HTTPClient *http.Client
	// ReadLimit caps one inbound frame; 0 means DefaultReadLimit, negative means no limit.
	ReadLimit int64
	// PauseReading starts the client without reading the socket until ResumeReading.
	PauseReading bool
}

// DialError reports a refused WebSocket upgrade.
type DialError struct {
	StatusCode int         // HTTP status of the refusal; 0 if no response arrived
	Header     http.Header // response headers, if any
	Body       []byte      // the first bytes of the response body, if any
	Err        error
}

// Error describes the refused upgrade.
func (e *DialError) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("ahpclient: dial refused with HTTP %d %q: %v", e.StatusCode, e.Body, e.Err)
	}
	return fmt.Sprintf("ahpclient: dial: %v", e.Err)
}

// Unwrap returns the underlying dial error.
func (e *DialError) Unwrap() error { return e.Err }

// Client is one AHP connection. Its methods are safe for concurrent use.
type Client struct {
	conn *websocket.Conn

	nextID  atomic.Uint64
	nextSeq atomic.Int64 // next clientSeq Dispatch uses

	stop      chan struct{} // closed by Close
	done      chan struct{} // closed when the reader has exited
	closeOnce sync.Once
	closeErr  error

	mu           sync.Mutex
	changed      chan struct{} // closed and replaced whenever anything below changes
	pending      map[uint64]chan Response
	messages     []Message
	actions      []Envelope
	notes        []Notification
	msgCursor    int
	actionCursor int
	noteCursor   int
	output       map[string][]byte // terminal/data text per channel
	outputCursor map[string]int
	lastSeq      uint64
	clientID     string
	paused       bool
	unpaused     chan struct{} // closed by ResumeReading
	finished     bool          // reader has exited; readErr says why
	readErr      error
}

// Dial opens an AHP connection to rawURL (ws://, wss://, http:// or https://).
func Dial(ctx context.Context, rawURL string, opts DialOptions) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("ahpclient: parse url: %w", err)
	}
	if opts.QueryToken != "" {
		q := u.Query()
		q.Set("token", opts.QueryToken)
		u.RawQuery = q.Encode()
	}
	header := opts.Header.Clone()
	if header == nil {
		header = http.Header{}
	}
	if opts.Token != "" {
		header.Set("Authorization", "Bearer "+opts.Token)
	}
	if opts.Origin != "" {
		header.Set("Origin", opts.Origin)
	}
	httpClient := opts.HTTPClient
	var transport *http.Transport
	if httpClient == nil {
		transport = &http.Transport{DisableKeepAlives: true}
		httpClient = &http.Client{Transport: transport}
	}

	conn, resp, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{
		HTTPClient: httpClient,
		HTTPHeader: header,
	})
	if transport != nil {
		transport.CloseIdleConnections()
	}
	if err != nil {
		de := &DialError{Err: err}
		if resp != nil {
			de.StatusCode = resp.StatusCode
			de.Header = resp.Header
			if resp.Body != nil {
				de.Body, _ = io.ReadAll(resp.Body)
				_ = resp.Body.Close()
			}
		}
		return nil, de
	}

	limit := opts.ReadLimit
	if limit == 0 {
		limit = DefaultReadLimit
	}
	conn.SetReadLimit(limit)

	c := &Client{
		conn:         conn,
		stop:         make(chan struct{}),
		done:         make(chan struct{}),
		changed:      make(chan struct{}),
		pending:      map[uint64]chan Response{},
		output:       map[string][]byte{},
		outputCursor: map[string]int{},
	}
	c.nextSeq.Store(1)
	if opts.PauseReading {
		c.paused = true
		c.unpaused = make(chan struct{})
	}
	go c.readLoop()
	return c, nil
}

// Close closes the connection with a normal closure and waits for the reader to stop.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		close(c.stop)
		c.mu.Lock()
		ended := c.finished
		c.mu.Unlock()
		var err error
		if ended {
			// The peer is gone already; a close handshake could only fail.
			err = c.conn.CloseNow()
		} else {
			err = c.conn.Close(websocket.StatusNormalClosure, "")
		}
		<-c.done
		if !benignCloseError(err) {
			c.closeErr = err
		}
	})
	return c.closeErr
}

// benignCloseError reports whether err only says the connection was already
// ending (the peer closed or dropped it while we were closing).
func benignCloseError(err error) bool {
	return err == nil || errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || websocket.CloseStatus(err) != -1
}

// Closed is closed once the connection has ended and the reader has stopped.
func (c *Client) Closed() <-chan struct{} { return c.done }

// CloseStatus returns the code and reason of the close frame the peer sent
// (after Close, usually the peer's echo of StatusNormalClosure), or -1 and ""
// if the connection has not ended with one: still open, dropped without a
// close frame, or closed by Close while reading was paused.
func (c *Client) CloseStatus() (websocket.StatusCode, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ce websocket.CloseError
	if errors.As(c.readErr, &ce) {
		return ce.Code, ce.Reason
	}
	return -1, ""
}

// Err returns why the reader stopped, or nil while the connection is open.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readErr
}

// PauseReading stops reading from the socket so the server's outbound data
// backs up. A frame the reader is already waiting for is still delivered;
// no further frame is read until ResumeReading. Responses are not read either,
// so calls block while paused.
func (c *Client) PauseReading() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.paused {
		c.paused = true
		c.unpaused = make(chan struct{})
	}
}

// ResumeReading undoes PauseReading (or DialOptions.PauseReading).
func (c *Client) ResumeReading() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused {
		c.paused = false
		close(c.unpaused)
	}
}

// ClientID is the clientId last sent with Initialize or Reconnect.
func (c *Client) ClientID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.clientID
}

// Call sends a request and waits for its response. A JSON-RPC error answer is
// returned as *RPCError with a nil error; error is for transport failures.
func (c *Client) Call(ctx context.Context, method string, params any) (json.RawMessage, *RPCError, error) {
	resp, err := c.CallResponse(ctx, method, params)
	if err != nil {
		return nil, nil, err
	}
	return resp.Result, resp.Error, nil
}

// CallResponse is Call returning the whole response, raw frame included.
func (c *Client) CallResponse(ctx context.Context, method string, params any) (Response, error) {
	id := c.nextID.Add(1)
	frame, err := encodeFrame(&id, method, params)
	if err != nil {
		return Response{}, err
	}
	ch := make(chan Response, 1)
	c.mu.Lock()
	if c.finished {
		err := c.closedErrLocked()
		c.mu.Unlock()
		return Response{}, err
	}
	c.pending[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}

	if err := c.Send(ctx, frame); err != nil {
		forget()
		return Response{}, err
	}
	select {
	case resp := <-ch:
		return resp, nil
	case <-ctx.Done():
		forget()
		return Response{}, fmt.Errorf("ahpclient: waiting for the response to %s (id %d): %w", method, id, ctx.Err())
	case <-c.done:
		select {
		case resp := <-ch:
			return resp, nil
		default:
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		return Response{}, fmt.Errorf("ahpclient: waiting for the response to %s (id %d): %w", method, id, c.closedErrLocked())
	}
}

// Notify sends a notification (no id, no response). Nil params are omitted.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	frame, err := encodeFrame(nil, method, params)
	if err != nil {
		return err
	}
	return c.Send(ctx, frame)
}

// Send writes raw as one text frame, verbatim (for malformed-frame tests).
func (c *Client) Send(ctx context.Context, raw []byte) error {
	return c.write(ctx, websocket.MessageText, raw)
}

// SendBinary writes raw as one binary frame, verbatim.
func (c *Client) SendBinary(ctx context.Context, raw []byte) error {
	return c.write(ctx, websocket.MessageBinary, raw)
}

func (c *Client) write(ctx context.Context, typ websocket.MessageType, raw []byte) error {
	if err := c.conn.Write(ctx, typ, raw); err != nil {
		return fmt.Errorf("ahpclient: write: %w", err)
	}
	return nil
}

func encodeFrame(id *uint64, method string, params any) ([]byte, error) {
	frame := struct {
		JSONRPC string  `json:"jsonrpc"`
		ID      *uint64 `json:"id,omitempty"`
		Method  string  `json:"method"`
		Params  any     `json:"params,omitempty"`
	}{JSONRPC: "2.0", ID: id, Method: method, Params: params}
	b, err := json.Marshal(frame)
	if err != nil {
		return nil, fmt.Errorf("ahpclient: encode %s: %w", method, err)
	}
	return b, nil
}

// closedErrLocked describes why the connection is gone; c.mu must be held.
func (c *Client) closedErrLocked() error {
	if c.readErr == nil {
		return ErrClosed
	}
	return fmt.Errorf("%w: %w", ErrClosed, c.readErr)
}

// broadcastLocked wakes every waiter; c.mu must be held.
func (c *Client) broadcastLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *Client) readLoop() {
	defer close(c.done)
	for {
		if !c.waitUnpaused() {
			c.finish(errors.New("ahpclient: closed by the client"))
			return
		}
		typ, b, err := c.conn.Read(context.Background())
		if err != nil {
			c.finish(err)
			return
		}
		c.handle(b, typ == websocket.MessageBinary)
	}
}

// waitUnpaused blocks while reading is paused; it returns false once Close was called.
func (c *Client) waitUnpaused() bool {
	for {
		select {
		case <-c.stop:
			return false
		default:
		}
		c.mu.Lock()
		paused, ch := c.paused, c.unpaused
		c.mu.Unlock()
		if !paused {
			return true
		}
		select {
		case <-ch:
		case <-c.stop:
			return false
		}
	}
}

func (c *Client) finish(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finished = true
	c.readErr = err
	c.pending = map[uint64]chan Response{}
	c.broadcastLocked()
}

func (c *Client) handle(b []byte, binary bool) {
	var frame struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *RPCError       `json:"error"`
	}
	_ = looseUnmarshal(b, &frame)
	raw := cloneRaw(b)
	msg := Message{
		Raw: raw, Binary: binary, ID: frame.ID, Method: frame.Method,
		Params: frame.Params, Result: frame.Result, Error: frame.Error,
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	c.messages = append(c.messages, msg)
	switch {
	case msg.IsResponse():
		id, err := strconv.ParseUint(string(frame.ID), 10, 64)
		if err != nil {
			break
		}
		if ch, ok := c.pending[id]; ok {
			delete(c.pending, id)
			ch <- Response{ID: id, Result: frame.Result, Error: frame.Error, Raw: raw}
		}
	case msg.Method == "action" && frame.ID == nil:
		var env Envelope
		_ = json.Unmarshal(frame.Params, &env)
		if env.Raw == nil {
			env.Raw = cloneRaw(frame.Params)
		}
		c.actions = append(c.actions, env)
		c.noteSeqLocked(env.ServerSeq)
		if env.Type == "terminal/data" && !env.Rejected() {
			if d := env.View().Data; d != nil {
				c.output[env.Channel] = append(c.output[env.Channel], *d...)
			}
		}
	case msg.Method != "":
		var head struct {
			Channel string `json:"channel"`
		}
		_ = looseUnmarshal(frame.Params, &head)
		c.notes = append(c.notes, Notification{
			Method: frame.Method, Channel: head.Channel, ID: frame.ID, Params: frame.Params, Raw: raw,
		})
	}
	c.broadcastLocked()
}

// noteSeqLocked raises the highest serverSeq seen; c.mu must be held.
func (c *Client) noteSeqLocked(seq uint64) {
	if seq > c.lastSeq {
		c.lastSeq = seq
	}
}

// LastServerSeq is the highest serverSeq this connection has seen: in action
// envelopes, in the initialize result's serverSeq, and in a reconnect result's
// replayed actions or snapshots. It is what Reconnect should send.
func (c *Client) LastServerSeq() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastSeq
}

// Actions returns a copy of every action envelope received so far, in order.
func (c *Client) Actions() []Envelope {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Envelope(nil), c.actions...)
}

// Notifications returns a copy of every non-action notification received so far, in order.
func (c *Client) Notifications() []Notification {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Notification(nil), c.notes...)
}

// Messages returns a copy of every frame received so far, in order.
func (c *Client) Messages() []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Message(nil), c.messages...)
}

// Output returns all `terminal/data` text received for channel so far.
func (c *Client) Output(channel string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.output[channel])
}
