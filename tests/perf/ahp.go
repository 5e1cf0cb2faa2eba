package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"

	"github.com/coder/websocket"
)

// wsClient is a lean, single-goroutine AHP client. Unlike tests/ahpclient it
// keeps nothing: the caller reads one message at a time and a terminal/data
// payload aliases the read buffer, so 100 MB of output costs the client
// almost nothing but the copy out of the socket.
type wsClient struct {
	conn   *websocket.Conn
	nextID uint64
	seq    int64
	buf    bytes.Buffer
}

// rpcError is a JSON-RPC error answer.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// msg is one message from the host. data aliases the read buffer and is
// valid only until the next call to next.
type msg struct {
	id        uint64 // of a response; 0 for a notification
	response  bool
	result    json.RawMessage // a copy
	err       *rpcError
	method    string
	channel   string
	typ       string // the action's type
	data      []byte // terminal/data text (decoded)
	origin    bool
	rejection string
}

var clientCount atomic.Int64

// dialAHP opens a WebSocket to addr and initializes a connection. token,
// when set, is presented at the upgrade as a bearer token.
func dialAHP(ctx context.Context, addr, token string) (*wsClient, error) {
	hdr := http.Header{}
	if token != "" {
		hdr.Set("Authorization", "Bearer "+token)
	}
	// No keep-alive: a finished upgrade leaves no idle connection (or its
	// goroutines) behind.
	tr := &http.Transport{DisableKeepAlives: true}
	conn, resp, err := websocket.Dial(ctx, "ws://"+addr+"/", &websocket.DialOptions{
		HTTPClient: &http.Client{Transport: tr},
		HTTPHeader: hdr,
	})
	tr.CloseIdleConnections()
	if err != nil {
		if resp != nil && resp.Body != nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			_ = resp.Body.Close()
			return nil, fmt.Errorf("websocket upgrade refused with HTTP %d %q: %w", resp.StatusCode, body, err)
		}
		return nil, fmt.Errorf("websocket dial %s: %w", addr, err)
	}
	conn.SetReadLimit(64 << 20)
	c := &wsClient{conn: conn}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	id := fmt.Sprintf("perf-%d-%d", os.Getpid(), clientCount.Add(1))
	if err := c.call(ctx, "initialize", map[string]any{
		"channel":          "ahp-root://",
		"protocolVersions": []string{"1.0.0"},
		"clientId":         id,
		"clientInfo":       map[string]string{"name": "shellgate-perf"},
	}, &res); err != nil {
		_ = conn.CloseNow()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return c, nil
}

// close ends the connection with a normal closure.
func (c *wsClient) close() {
	if err := c.conn.Close(websocket.StatusNormalClosure, ""); err != nil {
		_ = c.conn.CloseNow()
	}
}

// request sends a request without waiting for its answer and returns its id.
func (c *wsClient) request(ctx context.Context, method string, params any) (uint64, error) {
	c.nextID++
	id := c.nextID
	return id, c.write(ctx, &id, method, params)
}

// notify sends a notification.
func (c *wsClient) notify(ctx context.Context, method string, params any) error {
	return c.write(ctx, nil, method, params)
}

func (c *wsClient) write(ctx context.Context, id *uint64, method string, params any) error {
	b, err := json.Marshal(struct {
		JSONRPC string  `json:"jsonrpc"`
		ID      *uint64 `json:"id,omitempty"`
		Method  string  `json:"method"`
		Params  any     `json:"params"`
	}{"2.0", id, method, params})
	if err != nil {
		return err
	}
	if err := c.conn.Write(ctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("send %s: %w", method, err)
	}
	return nil
}

// call sends a request and reads until its answer, dropping whatever else
// arrives meanwhile; out (if not nil) receives the result.
func (c *wsClient) call(ctx context.Context, method string, params any, out any) error {
	id, err := c.request(ctx, method, params)
	if err != nil {
		return err
	}
	return c.await(ctx, id, method, out)
}

// await reads until the answer to request id.
func (c *wsClient) await(ctx context.Context, id uint64, method string, out any) error {
	for {
		m, err := c.next(ctx)
		if err != nil {
			return err
		}
		if !m.response || m.id != id {
			continue
		}
		if m.err != nil {
			return fmt.Errorf("%s: %w", method, m.err)
		}
		if out != nil {
			if err := json.Unmarshal(m.result, out); err != nil {
				return fmt.Errorf("decode %s result: %w", method, err)
			}
		}
		return nil
	}
}

// dispatch sends a terminal action with the next clientSeq.
func (c *wsClient) dispatch(ctx context.Context, channel string, action any) error {
	c.seq++
	return c.notify(ctx, "dispatchAction", map[string]any{"channel": channel, "clientSeq": c.seq, "action": action})
}

// next reads and parses one message.
func (c *wsClient) next(ctx context.Context) (*msg, error) {
	_, r, err := c.conn.Reader(ctx)
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	c.buf.Reset()
	if _, err := c.buf.ReadFrom(r); err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	return parseMessage(c.buf.Bytes())
}

// The exact shape the host gives a plain terminal/data envelope. A frame of
// exactly this shape is read without encoding/json; anything else is decoded
// in full, so a change on the host's side costs speed, never correctness.
var (
	dataHead = []byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"`)
	dataMid  = []byte(`","action":{"type":"terminal/data","data":"`)
	dataTail = []byte(`"},"serverSeq":`)
)

func parseMessage(b []byte) (*msg, error) {
	if m, ok := fastData(b); ok {
		return m, nil
	}
	var f struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
		Params struct {
			Channel string `json:"channel"`
			Action  struct {
				Type string  `json:"type"`
				Data *string `json:"data"`
			} `json:"action"`
			Origin          json.RawMessage `json:"origin"`
			RejectionReason string          `json:"rejectionReason"`
		} `json:"params"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("undecodable frame %.200q: %w", b, err)
	}
	m := &msg{method: f.Method, err: f.Error}
	if len(f.ID) > 0 && f.Method == "" {
		id, err := strconv.ParseUint(string(f.ID), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("answer with an id we never sent: %s", f.ID)
		}
		m.id, m.response = id, true
		m.result = bytes.Clone(f.Result)
		return m, nil
	}
	m.channel = f.Params.Channel
	m.typ = f.Params.Action.Type
	if f.Params.Action.Data != nil {
		m.data = []byte(*f.Params.Action.Data)
	}
	m.origin = len(f.Params.Origin) > 0 && string(f.Params.Origin) != "null"
	m.rejection = f.Params.RejectionReason
	return m, nil
}

// fastData reads a server-originated terminal/data envelope of the host's
// usual shape.
func fastData(b []byte) (*msg, bool) {
	rest, ok := bytes.CutPrefix(b, dataHead)
	if !ok {
		return nil, false
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return nil, false
	}
	channel := rest[:end]
	body, ok := bytes.CutPrefix(rest[end:], dataMid)
	if !ok {
		return nil, false
	}
	end = stringEnd(body)
	if end < 0 {
		return nil, false
	}
	raw := body[:end]
	tail, ok := bytes.CutPrefix(body[end:], dataTail)
	if !ok {
		return nil, false
	}
	digits := 0
	for digits < len(tail) && tail[digits] >= '0' && tail[digits] <= '9' {
		digits++
	}
	if digits == 0 || string(tail[digits:]) != "}}" {
		return nil, false
	}
	m := &msg{method: "action", channel: string(channel), typ: "terminal/data", data: raw}
	if bytes.IndexByte(raw, '\\') >= 0 {
		// Escapes: let encoding/json read the string, quotes included.
		off := len(b) - len(body)
		var s string
		if err := json.Unmarshal(b[off-1:off+end+1], &s); err != nil {
			return nil, false
		}
		m.data = []byte(s)
	}
	return m, true
}

// stringEnd is the index of the quote that closes a JSON string body, or -1.
func stringEnd(s []byte) int {
	from := 0
	for {
		i := bytes.IndexByte(s[from:], '"')
		if i < 0 {
			return -1
		}
		i += from
		slashes := 0
		for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
			slashes++
		}
		if slashes%2 == 0 {
			return i
		}
		from = i + 1
	}
}

// snapshot is what the perf tool needs of a terminal snapshot.
type snapshot struct {
	text   []byte
	exited bool
}

// open creates a terminal running line (a shell line; "" opens the shell)
// and subscribes to it, sending both requests before reading either answer
// so the pair costs one round trip. It returns the subscribe snapshot.
func (c *wsClient) open(ctx context.Context, uri, line string, pty bool) (snapshot, error) {
	createID, err := c.request(ctx, "createTerminal", createParams(uri, line, pty))
	if err != nil {
		return snapshot{}, err
	}
	subID, err := c.request(ctx, "subscribe", map[string]any{"channel": uri})
	if err != nil {
		return snapshot{}, err
	}
	if err := c.await(ctx, createID, "createTerminal "+uri, nil); err != nil {
		return snapshot{}, err
	}
	var res struct {
		Snapshot struct {
			State struct {
				Content []struct {
					Value  string `json:"value"`
					Output string `json:"output"`
				} `json:"content"`
				Lifecycle *struct {
					Status string `json:"status"`
				} `json:"lifecycle"`
				ExitCode *int `json:"exitCode"`
			} `json:"state"`
		} `json:"snapshot"`
	}
	if err := c.await(ctx, subID, "subscribe "+uri, &res); err != nil {
		return snapshot{}, err
	}
	st := res.Snapshot.State
	var s snapshot
	for _, part := range st.Content {
		s.text = append(s.text, part.Value...)
		s.text = append(s.text, part.Output...)
	}
	s.exited = (st.Lifecycle != nil && st.Lifecycle.Status == "exited") || st.ExitCode != nil
	return s, nil
}

// createParams are createTerminal's params for a terminal at uri running
// line (a shell line; "" opens the shell) on a pty or on pipes.
func createParams(uri, line string, pty bool) map[string]any {
	spawn := map[string]any{"pty": pty}
	if line != "" {
		spawn["command"] = line
	}
	return map[string]any{
		"channel": uri,
		"name":    "perf",
		"cols":    80,
		"rows":    24,
		"_meta":   map[string]any{"shellgate/spawn": spawn},
	}
}

// dispose disposes a terminal, dropping whatever arrives meanwhile.
func (c *wsClient) dispose(ctx context.Context, uri string) error {
	return c.call(ctx, "disposeTerminal", map[string]any{"channel": uri}, nil)
}

// event reads the next message about channel, skipping others; it fails on
// a rejected dispatch so a refusal is reported, not waited out.
func (c *wsClient) event(ctx context.Context, channel string) (*msg, error) {
	for {
		m, err := c.next(ctx)
		if err != nil {
			return nil, err
		}
		if m.response || m.channel != channel {
			continue
		}
		if m.rejection != "" {
			return nil, fmt.Errorf("%s on %s was refused: %s", m.typ, channel, m.rejection)
		}
		return m, nil
	}
}

// errNoOutput says a terminal exited before printing what was expected.
var errNoOutput = errors.New("the terminal exited without the expected output")
