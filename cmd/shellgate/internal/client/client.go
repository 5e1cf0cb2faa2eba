// Package client is the command line's own Agent Host Protocol client: the
// small part of AHP that attach, exec and ls need (initialize, subscribe,
// createTerminal, disposeTerminal, dispatchAction, reconnect and the action
// stream) over a WebSocket opened with a bearer token, plus a helper for the
// agent REST API.
//
// One goroutine reads the socket. Responses go to their callers; action
// envelopes go, in order, to Actions, which the caller must keep draining:
// the reader waits for room, so a caller that stops draining stops reading
// (and the daemon eventually drops a client that falls that far behind).
// Such a client carries on over a new connection with Resume.
package client

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"
)

// RootChannel is the root channel and the channel of connection-level
// commands.
const RootChannel = "ahp-root://"

// TerminalScheme prefixes every terminal channel URI.
const TerminalScheme = "ahp-terminal:"

// ProtocolVersions are the versions this client offers, most preferred
// first; it reads the one state shape they share (lifecycle).
var ProtocolVersions = []string{"1.0.0", "0.9.0"}

// readLimit caps one inbound frame: a terminal snapshot with a long
// scrollback is the largest thing the daemon sends.
const readLimit = 64 << 20

// Options say how to reach the daemon and how to introduce this client.
type Options struct {
	// Token is sent as "Authorization: Bearer <Token>" at the upgrade; empty
	// sends none.
	Token string
	// ClientID names this client on the wire; empty picks a random one.
	ClientID string
	// Name goes in clientInfo.
	Name string
}

// Client is one AHP connection. Its methods are safe for concurrent use.
type Client struct {
	ws       *websocket.Conn
	clientID string
	name     string
	// url and token reach the daemon again, for Resume and Reopen.
	url   string
	token string

	nextID atomic.Uint64

	// writeMu keeps clientSeq numbers in the order they reach the wire: the
	// daemon applies a (clientId, clientSeq) at most once and ignores any
	// number at or below the highest it has applied.
	writeMu sync.Mutex
	nextSeq int64

	mu      sync.Mutex
	pending map[uint64]*call
	fromSeq map[string]uint64 // per channel: the snapshot's serverSeq
	subs    map[string]bool   // the channels subscribed to, for Resume
	lastSeq uint64
	ended   bool
	err     error // why the connection ended

	actions   chan Envelope
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

type call struct {
	method string
	reply  chan reply
	// onResult runs on the reader goroutine before any later frame is
	// looked at, so snapshot bookkeeping is in place for the envelopes
	// that follow the answer.
	onResult func(json.RawMessage)
}

type reply struct {
	result json.RawMessage
	err    error
}

// Dial opens a connection to the daemon at rawURL (http, https, ws or wss).
// A refused upgrade says why without quoting the token.
func Dial(ctx context.Context, rawURL string, opts Options) (*Client, error) {
	wsURL, err := WebSocketURL(rawURL)
	if err != nil {
		return nil, err
	}
	header := http.Header{}
	if opts.Token != "" {
		header.Set("Authorization", "Bearer "+opts.Token)
	}
	// No keep-alives: a refused upgrade must not leave an idle connection.
	transport := &http.Transport{DisableKeepAlives: true, Proxy: http.ProxyFromEnvironment}
	defer transport.CloseIdleConnections()
	ws, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{
		HTTPClient: &http.Client{Transport: transport},
		HTTPHeader: header,
	})
	if err != nil {
		return nil, dialError(Redact(rawURL), resp, err)
	}
	ws.SetReadLimit(readLimit)
	id := opts.ClientID
	if id == "" {
		id = "shellgate-cli-" + RandomID()
	}
	name := opts.Name
	if name == "" {
		name = "shellgate-cli"
	}
	c := &Client{
		ws: ws, clientID: id, name: name, url: rawURL, token: opts.Token,
		pending: map[uint64]*call{},
		fromSeq: map[string]uint64{},
		subs:    map[string]bool{},
		actions: make(chan Envelope, 256),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go c.readLoop()
	return c, nil
}

func dialError(where string, resp *http.Response, err error) error {
	if resp != nil {
		if resp.Body != nil {
			_ = resp.Body.Close()
		}
		switch resp.StatusCode {
		case http.StatusUnauthorized:
			return fmt.Errorf("the daemon at %s refused the token (HTTP 401): check --token, SHELLGATE_TOKEN or the credentials file", where)
		case http.StatusForbidden:
			return fmt.Errorf("the daemon at %s refused the connection (HTTP 403)", where)
		}
		return fmt.Errorf("the daemon at %s refused the connection (HTTP %d)", where, resp.StatusCode)
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return fmt.Errorf("cannot reach the daemon at %s: %v (is `shellgate serve` running?)", where, opErr.Err)
	}
	return fmt.Errorf("cannot reach the daemon at %s: %v", where, err)
}

// ClientID is the id this client introduces itself with.
func (c *Client) ClientID() string { return c.clientID }

// Actions delivers the action envelopes of subscribed channels in order,
// without any a snapshot already covers. It is closed when the connection
// ends; Err then says why.
func (c *Client) Actions() <-chan Envelope { return c.actions }

// Done is closed once the connection has ended.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err says why the connection ended (nil while it is open, or after Close).
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close ends the connection with a normal closure and waits for the reader.
func (c *Client) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.stop)
		err = c.ws.Close(websocket.StatusNormalClosure, "")
		<-c.done
		if websocket.CloseStatus(err) != -1 || errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) {
			err = nil
		}
	})
	return err
}

// ErrClosed is returned by calls on a client that was closed.
var ErrClosed = errors.New("the connection to the daemon is closed")

func (c *Client) readLoop() {
	var cause error
	defer func() {
		c.mu.Lock()
		c.ended = true
		select {
		case <-c.stop:
			cause = ErrClosed
		default:
			c.err = cause
		}
		pending := c.pending
		c.pending = map[uint64]*call{}
		c.mu.Unlock()
		for _, p := range pending {
			p.reply <- reply{err: cause}
		}
		// Done first: whoever sees Actions closed finds the connection
		// ended (and may Resume it) at once.
		close(c.done)
		close(c.actions)
	}()
	for {
		_, frame, err := c.ws.Read(context.Background())
		if err != nil {
			cause = connectionEnded(err)
			return
		}
		if !c.handle(frame) {
			cause = ErrClosed
			return
		}
	}
}

// ConnectionError says why the daemon's side of the connection ended.
type ConnectionError struct {
	// Code is the WebSocket close code the daemon sent; 0 when the
	// connection was lost without one.
	Code int
	// Reason is the daemon's close reason.
	Reason string
	// Err is the transport's error when there was no close frame.
	Err error
}

// Error reads like "the daemon closed the connection: <reason> (1008)" or
// "lost the connection to the daemon: <error>".
func (e *ConnectionError) Error() string {
	switch {
	case e.Code != 0 && e.Reason != "":
		return fmt.Sprintf("the daemon closed the connection: %s (%d)", e.Reason, e.Code)
	case e.Code != 0:
		return fmt.Sprintf("the daemon closed the connection (%d)", e.Code)
	}
	return fmt.Sprintf("lost the connection to the daemon: %v", e.Err)
}

func (e *ConnectionError) Unwrap() error { return e.Err }

// FellBehind says the daemon dropped this client for not keeping up with
// the output (it closes such a client with a policy violation, 1008).
func (e *ConnectionError) FellBehind() bool {
	return e.Code == int(websocket.StatusPolicyViolation)
}

// Resumable says whether a connection that ended with err (from Err) can
// be carried on with Resume: the daemon dropped the client, or the
// connection broke. A daemon that is stopping (1001) or that closed
// normally, and a connection this side closed, cannot.
func Resumable(err error) bool {
	var ce *ConnectionError
	if !errors.As(err, &ce) {
		return false
	}
	switch ce.Code {
	case 0, int(websocket.StatusPolicyViolation), int(websocket.StatusInternalError), int(websocket.StatusAbnormalClosure):
		return true
	}
	return false
}

// connectionEnded words why the socket ended.
func connectionEnded(err error) error {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return &ConnectionError{Code: int(ce.Code), Reason: ce.Reason}
	}
	return &ConnectionError{Err: err}
}

// frame is any incoming JSON-RPC message.
type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *RPCError       `json:"error"`
}

// handle routes one frame; false when the client is stopping.
func (c *Client) handle(raw []byte) bool {
	var f frame
	if json.Unmarshal(raw, &f) != nil {
		return true // not ours to answer: the daemon never sends garbage on purpose
	}
	hasID := len(f.ID) > 0 && string(f.ID) != "null"
	switch {
	case f.Method == "" && hasID:
		c.answer(f)
	case f.Method == "action":
		env, ok := c.envelope(f.Params)
		if !ok {
			return true
		}
		select {
		case c.actions <- env:
		case <-c.stop:
			return false
		}
	case hasID:
		// A request from the host: this client serves none.
		out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": f.ID, "error": map[string]any{
			"code": -32601, "message": "shellgate-cli serves no requests",
		}})
		_ = c.ws.Write(context.Background(), websocket.MessageText, out)
	}
	return true
}

func (c *Client) answer(f frame) {
	var id uint64
	if json.Unmarshal(f.ID, &id) != nil {
		return
	}
	c.mu.Lock()
	p := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if p == nil {
		return
	}
	if f.Error != nil {
		f.Error.Method = p.method
		p.reply <- reply{err: f.Error}
		return
	}
	if p.onResult != nil {
		p.onResult(f.Result)
	}
	p.reply <- reply{result: f.Result}
}

// envelope decodes an action notification and drops one that a snapshot
// this client holds already reflects.
func (c *Client) envelope(params json.RawMessage) (Envelope, bool) {
	env, ok := decodeEnvelope(params)
	if !ok {
		return Envelope{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if from, ok := c.fromSeq[env.Channel]; ok && env.ServerSeq <= from {
		return Envelope{}, false
	}
	if env.ServerSeq > c.lastSeq {
		c.lastSeq = env.ServerSeq
	}
	return env, true
}

// decodeEnvelope decodes the params of an action notification (also the
// shape of a replayed action).
func decodeEnvelope(params json.RawMessage) (Envelope, bool) {
	var w struct {
		Channel         string          `json:"channel"`
		Action          json.RawMessage `json:"action"`
		ServerSeq       uint64          `json:"serverSeq"`
		Origin          *Origin         `json:"origin"`
		RejectionReason string          `json:"rejectionReason"`
	}
	if json.Unmarshal(params, &w) != nil || w.Channel == "" {
		return Envelope{}, false
	}
	env := Envelope{Channel: w.Channel, ServerSeq: w.ServerSeq, Origin: w.Origin, RejectionReason: w.RejectionReason, Raw: w.Action}
	if json.Unmarshal(w.Action, &env.Action) != nil {
		// A field of an unexpected type: keep the type, drop the rest.
		var head struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(w.Action, &head)
		env.Action = Action{Type: head.Type}
	}
	return env, true
}

// noteSnapshots records where each snapshot stands in the stream, and that
// its channel is subscribed to.
func (c *Client) noteSnapshots(snaps ...Snapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range snaps {
		c.fromSeq[s.Resource] = s.FromSeq
		c.subs[s.Resource] = true
		if s.FromSeq > c.lastSeq {
			c.lastSeq = s.FromSeq
		}
	}
}

// LastServerSeq is the highest serverSeq seen so far.
func (c *Client) LastServerSeq() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastSeq
}

// request sends a request and waits for its answer. An error answer comes
// back as *RPCError.
func (c *Client) request(ctx context.Context, method string, params any, onResult func(json.RawMessage)) (json.RawMessage, error) {
	p, err := c.send(ctx, method, params, onResult)
	if err != nil {
		return nil, err
	}
	return p.wait(ctx)
}

// pendingCall is a request sent and not yet answered.
type pendingCall struct {
	c  *Client
	id uint64
	p  *call
}

// send sends a request without waiting for its answer: requests sent one
// after another from one goroutine reach the daemon in that order.
func (c *Client) send(ctx context.Context, method string, params any, onResult func(json.RawMessage)) (*pendingCall, error) {
	id := c.nextID.Add(1)
	p := &call{method: method, reply: make(chan reply, 1), onResult: onResult}
	c.mu.Lock()
	if c.ended {
		err := c.err
		c.mu.Unlock()
		if err == nil {
			err = ErrClosed
		}
		return nil, err
	}
	c.pending[id] = p
	c.mu.Unlock()
	out, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      uint64 `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", id, method, params})
	if err != nil {
		c.forget(id)
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if err := c.ws.Write(ctx, websocket.MessageText, out); err != nil {
		c.forget(id)
		return nil, c.writeError(err)
	}
	return &pendingCall{c: c, id: id, p: p}, nil
}

// wait waits for the answer.
func (pc *pendingCall) wait(ctx context.Context) (json.RawMessage, error) {
	select {
	case r := <-pc.p.reply:
		return r.result, r.err
	case <-ctx.Done():
		pc.c.forget(pc.id)
		return nil, fmt.Errorf("%s: no answer from the daemon: %w", pc.p.method, ctx.Err())
	}
}

func (c *Client) forget(id uint64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// writeError prefers the reason the connection ended over the write's own
// error, which only says the socket is closed.
func (c *Client) writeError(err error) error {
	select {
	case <-c.done:
		if e := c.Err(); e != nil {
			return e
		}
		return ErrClosed
	default:
	}
	return fmt.Errorf("cannot send to the daemon: %w", err)
}

// notify sends a notification.
func (c *Client) notify(ctx context.Context, method string, params any) error {
	out, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", method, params})
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if err := c.ws.Write(ctx, websocket.MessageText, out); err != nil {
		return c.writeError(err)
	}
	return nil
}

// InitializeResult is the answer to initialize.
type InitializeResult struct {
	ProtocolVersion string     `json:"protocolVersion"`
	ServerSeq       uint64     `json:"serverSeq"`
	Snapshots       []Snapshot `json:"snapshots"`
}

// Snapshot finds the snapshot of channel.
func (r *InitializeResult) Snapshot(channel string) (Snapshot, bool) {
	for _, s := range r.Snapshots {
		if s.Resource == channel {
			return s, true
		}
	}
	return Snapshot{}, false
}

// Initialize introduces the client and subscribes to subscriptions in the
// same round trip.
func (c *Client) Initialize(ctx context.Context, subscriptions ...string) (*InitializeResult, error) {
	params := map[string]any{
		"channel":          RootChannel,
		"protocolVersions": ProtocolVersions,
		"clientId":         c.clientID,
		"clientInfo":       map[string]any{"name": c.name},
	}
	if len(subscriptions) > 0 {
		params["initialSubscriptions"] = subscriptions
	}
	var res InitializeResult
	var decodeErr error
	_, err := c.request(ctx, "initialize", params, func(raw json.RawMessage) {
		if decodeErr = json.Unmarshal(raw, &res); decodeErr == nil {
			c.noteSnapshots(res.Snapshots...)
		}
	})
	if err != nil {
		return nil, err
	}
	if decodeErr != nil {
		return nil, fmt.Errorf("initialize: unexpected answer: %w", decodeErr)
	}
	return &res, nil
}

// Subscribe subscribes to channel and returns its snapshot; the envelopes
// that follow on Actions all come after it.
func (c *Client) Subscribe(ctx context.Context, channel string) (Snapshot, error) {
	var res struct {
		Snapshot *Snapshot `json:"snapshot"`
	}
	var decodeErr error
	_, err := c.request(ctx, "subscribe", map[string]any{"channel": channel}, func(raw json.RawMessage) {
		if decodeErr = json.Unmarshal(raw, &res); decodeErr == nil && res.Snapshot != nil {
			// The daemon names the channel as it was asked for it; key the
			// filter by the name the envelopes will carry.
			s := *res.Snapshot
			s.Resource = channel
			c.noteSnapshots(s)
		}
	})
	if err != nil {
		return Snapshot{}, err
	}
	if decodeErr != nil || res.Snapshot == nil {
		return Snapshot{}, fmt.Errorf("subscribe %s: the answer carries no snapshot", channel)
	}
	return *res.Snapshot, nil
}

// CreateParams are createTerminal's parameters.
type CreateParams struct {
	// Channel is the new terminal's URI (see TerminalURI).
	Channel string
	// Name becomes the initial title; empty lets the daemon choose.
	Name string
	// CWD is the start directory (a file: URI); empty is the daemon's own.
	CWD string
	// Cols and Rows are the initial size; 0 lets the daemon choose.
	Cols, Rows int
	// Spawn says what to run; nil opens the daemon's shell on pipes.
	Spawn *Spawn
}

// Spawn is shellgate's _meta["shellgate/spawn"]: what a terminal runs.
type Spawn struct {
	// Command is a program (with Args) or a shell line (Args nil); empty
	// opens an interactive shell.
	Command string
	// Args, when not nil (even empty), make Command a program run with
	// exactly these arguments.
	Args []string
	// Env adds variables to the terminal's environment.
	Env map[string]string
	// PTY runs it on a pseudoterminal instead of pipes.
	PTY bool
	// Host is the machine it runs on (a name from the daemon's hosts:);
	// empty means the daemon's own.
	Host string
	// AwaitViewer has the daemon read none of the output until the
	// terminal's first subscriber is there, so that a subscribe right
	// after the create misses nothing, however fast the command writes.
	AwaitViewer bool
}

// MarshalJSON keeps an empty, non-nil Args: it is what tells the daemon
// that Command is a program rather than a shell line.
func (s Spawn) MarshalJSON() ([]byte, error) {
	m := map[string]any{"pty": s.PTY}
	if s.Command != "" {
		m["command"] = s.Command
	}
	if s.Args != nil {
		m["args"] = s.Args
	}
	if len(s.Env) > 0 {
		m["env"] = s.Env
	}
	if s.Host != "" {
		m["host"] = s.Host
	}
	if s.AwaitViewer {
		m["awaitViewer"] = true
	}
	return json.Marshal(m)
}

// SpawnMetaKey is the _meta key of createTerminal that carries a Spawn.
const SpawnMetaKey = "shellgate/spawn"

// CreateTerminal opens a terminal claimed by this client.
func (c *Client) CreateTerminal(ctx context.Context, p CreateParams) error {
	params := map[string]any{
		"channel": p.Channel,
		"claim":   Claim{Kind: "client", ClientID: c.clientID},
	}
	if p.Name != "" {
		params["name"] = p.Name
	}
	if p.CWD != "" {
		params["cwd"] = p.CWD
	}
	if p.Cols > 0 && p.Rows > 0 {
		params["cols"], params["rows"] = p.Cols, p.Rows
	}
	if p.Spawn != nil {
		params["_meta"] = map[string]any{SpawnMetaKey: p.Spawn}
	}
	_, err := c.request(ctx, "createTerminal", params, nil)
	return err
}

// DisposeTerminal ends a terminal's process and removes it.
func (c *Client) DisposeTerminal(ctx context.Context, channel string) error {
	_, err := c.request(ctx, "disposeTerminal", map[string]any{"channel": channel}, nil)
	return err
}

// Dispatch sends a client action to channel and returns its clientSeq.
// Acceptance is not answered; a refusal comes back on Actions as an echo
// with a RejectionReason.
func (c *Client) Dispatch(ctx context.Context, channel string, action any) (int64, error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.nextSeq++
	seq := c.nextSeq
	err := c.notify(ctx, "dispatchAction", map[string]any{"channel": channel, "clientSeq": seq, "action": action})
	return seq, err
}

// Input types data into a terminal.
func (c *Client) Input(ctx context.Context, channel, data string) error {
	_, err := c.Dispatch(ctx, channel, map[string]any{"type": "terminal/input", "data": data})
	return err
}

// FeedMethod is shellgate's own request that writes bytes to a terminal's
// input as they are, and can end it.
const FeedMethod = "x-shellgate/input"

// Feeding is a feed sent and not yet answered.
type Feeding struct{ pc *pendingCall }

// Feed sends b to the terminal's input, as bytes (no ^C is read as an
// interrupt), from offset, the count of bytes fed before it; end ends the
// input after b. A negative offset goes on from wherever the fed stream
// is. Wait tells when the process has them. Feeds sent one
// after another from one goroutine arrive in that order.
func (c *Client) Feed(ctx context.Context, channel string, offset int64, b []byte, end bool) (*Feeding, error) {
	params := map[string]any{"channel": channel, "bytes": base64.StdEncoding.EncodeToString(b)}
	if offset >= 0 {
		params["offset"] = offset
	}
	if end {
		params["end"] = true
	}
	pc, err := c.send(ctx, FeedMethod, params, nil)
	if err != nil {
		return nil, err
	}
	return &Feeding{pc: pc}, nil
}

// Wait returns once the process has the fed bytes, with the fed stream's
// length then; a refusal comes back as *RPCError (FeedRefusedForExit
// says whether the process had exited).
func (f *Feeding) Wait(ctx context.Context) (int64, error) {
	raw, err := f.pc.wait(ctx)
	if err != nil {
		return 0, err
	}
	var res struct {
		Offset int64 `json:"offset"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return 0, fmt.Errorf("%s: unreadable answer: %w", FeedMethod, err)
	}
	return res.Offset, nil
}

// FeedRefusedForExit says whether err refuses a feed because the process
// has exited (its input reaches nothing any more).
func FeedRefusedForExit(err error) bool {
	var rpc *RPCError
	if !errors.As(err, &rpc) || len(rpc.Data) == 0 {
		return false
	}
	var data struct {
		Exited bool `json:"exited"`
	}
	return json.Unmarshal(rpc.Data, &data) == nil && data.Exited
}

// Resize sets a terminal's size.
func (c *Client) Resize(ctx context.Context, channel string, cols, rows int) error {
	_, err := c.Dispatch(ctx, channel, map[string]any{"type": "terminal/resized", "cols": cols, "rows": rows})
	return err
}

// TerminalURI turns a terminal id ("x") or URI ("ahp-terminal:/x") into a URI.
func TerminalURI(s string) string {
	if strings.HasPrefix(s, TerminalScheme) {
		return s
	}
	return TerminalScheme + "/" + strings.TrimPrefix(s, "/")
}

// TerminalID is the part of a terminal URI after "ahp-terminal:/".
func TerminalID(uri string) string {
	return strings.TrimPrefix(strings.TrimPrefix(uri, TerminalScheme), "/")
}

// RandomID is eight random hex digits, for new terminal and client ids.
func RandomID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// WebSocketURL turns the daemon's URL (as `serve` writes it: http://host:port)
// into the WebSocket endpoint.
func WebSocketURL(raw string) (string, error) {
	u, err := parseBase(raw)
	if err != nil {
		return "", err
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	}
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String(), nil
}

// HTTPURL turns the daemon's URL into its http(s) base, without a trailing
// slash.
func HTTPURL(raw string) (string, error) {
	u, err := parseBase(raw)
	if err != nil {
		return "", err
	}
	switch u.Scheme {
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	}
	u.RawQuery, u.Fragment = "", ""
	return strings.TrimSuffix(u.String(), "/"), nil
}

func parseBase(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("no daemon URL")
	}
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%q is not a daemon URL (like http://127.0.0.1:7681)", Redact(raw))
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	default:
		return nil, fmt.Errorf("%q is not a daemon URL: use http, https, ws or wss", Redact(raw))
	}
	if u.User != nil {
		return nil, errors.New("the daemon URL must not carry a user or password; use --token")
	}
	return u, nil
}

// Redact drops a URL's query, fragment and user info, where a token could
// hide, so the URL can be shown.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if i := strings.IndexAny(raw, "?#@"); i >= 0 {
			return raw[:i] + "…"
		}
		return raw
	}
	u.User, u.RawQuery, u.Fragment, u.RawFragment = nil, "", "", ""
	return u.String()
}
