package ahpclient_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// fakeServer is a tiny scripted AHP peer: enough of the protocol to exercise
// the client's routing, waiting and close handling, nothing more.
type fakeServer struct {
	srv      *httptest.Server
	upgrades chan *http.Request // every accepted upgrade request
	flooded  chan int           // /flood: how many frames were written before a write blocked
	handlers sync.WaitGroup
}

func newFakeServer(t *testing.T) *fakeServer {
	t.Helper()
	f := &fakeServer{
		upgrades: make(chan *http.Request, 16),
		flooded:  make(chan int, 1),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/ahp", f.serveAHP)
	mux.HandleFunc("/flood", f.serveFlood)
	mux.HandleFunc("/refuse", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "sign in first", http.StatusUnauthorized)
	})
	f.srv = httptest.NewUnstartedServer(mux)
	f.srv.Listener = smallBufferListener{f.srv.Listener}
	f.srv.Start()
	t.Cleanup(func() {
		f.srv.Close()
		f.handlers.Wait()
	})
	return f
}

// smallBufferListener shrinks each accepted connection's send buffer so a
// client that stops reading stalls the server after kilobytes, not megabytes.
type smallBufferListener struct{ net.Listener }

func (l smallBufferListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(smallBuffer)
	}
	return conn, err
}

const smallBuffer = 32 << 10

// smallBufferClient is an HTTP client whose connections have a small receive buffer.
func smallBufferClient() *http.Client {
	dialer := &net.Dialer{}
	return &http.Client{Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := dialer.DialContext(ctx, network, addr)
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetReadBuffer(smallBuffer)
			}
			return conn, err
		},
	}}
}

func (f *fakeServer) url(path string) string {
	return "ws" + strings.TrimPrefix(f.srv.URL, "http") + path
}

func (f *fakeServer) accept(w http.ResponseWriter, r *http.Request) (*websocket.Conn, bool) {
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return nil, false
	}
	f.upgrades <- r
	return conn, true
}

type fakeRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// fakeConn is one connection's state on the fake server.
type fakeConn struct {
	conn     *websocket.Conn
	seq      uint64
	clientID string
	held     json.RawMessage // id of an x-test/hold request not yet answered
}

func (f *fakeServer) serveAHP(w http.ResponseWriter, r *http.Request) {
	f.handlers.Add(1)
	defer f.handlers.Done()
	conn, ok := f.accept(w, r)
	if !ok {
		return
	}
	defer func() { _ = conn.CloseNow() }()
	fc := &fakeConn{conn: conn, seq: 10}
	ctx := context.Background()
	for {
		_, b, err := conn.Read(ctx)
		if err != nil {
			return
		}
		var req fakeRequest
		if err := json.Unmarshal(b, &req); err != nil {
			fc.send(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`)
			continue
		}
		if !fc.handle(req) {
			return
		}
	}
}

func (fc *fakeConn) send(frame string) {
	_ = fc.conn.Write(context.Background(), websocket.MessageText, []byte(frame))
}

func (fc *fakeConn) reply(id json.RawMessage, result any) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	fc.send(string(b))
}

func (fc *fakeConn) fail(id json.RawMessage, code int, msg string, data any) {
	e := map[string]any{"code": code, "message": msg}
	if data != nil {
		e["data"] = data
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	fc.send(string(b))
}

// push sends an action envelope with the next serverSeq.
func (fc *fakeConn) push(channel string, action any, origin map[string]any) {
	fc.seq++
	env := map[string]any{"channel": channel, "action": action, "serverSeq": fc.seq}
	if origin != nil {
		env["origin"] = origin
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "action", "params": env})
	fc.send(string(b))
}

// handle answers one message; it returns false when the connection should end.
func (fc *fakeConn) handle(req fakeRequest) bool {
	var p map[string]json.RawMessage
	_ = json.Unmarshal(req.Params, &p)
	str := func(key string) string {
		var s string
		_ = json.Unmarshal(p[key], &s)
		return s
	}
	switch req.Method {
	case "initialize":
		var versions []string
		_ = json.Unmarshal(p["protocolVersions"], &versions)
		if len(versions) == 0 {
			fc.fail(req.ID, -32005, "none of the offered protocol versions is supported",
				map[string]any{"supportedVersions": []string{"1.0.0"}})
			return true
		}
		fc.clientID = str("clientId")
		snaps := []any{}
		if strings.Contains(string(p["initialSubscriptions"]), RootURI) {
			snaps = append(snaps, map[string]any{
				"resource": RootURI, "fromSeq": fc.seq,
				"state": map[string]any{"agents": []any{}, "terminals": []any{map[string]any{
					"resource": "ahp-terminal:/t1", "title": "bash",
					"claim":     map[string]any{"kind": "client", "clientId": fc.clientID},
					"lifecycle": map[string]any{"status": "running"},
				}}},
			})
		}
		fc.reply(req.ID, map[string]any{
			"protocolVersion": versions[0], "serverSeq": fc.seq, "snapshots": snaps,
			"serverInfo": map[string]any{"name": "fake"}, "x-extra": true,
		})
	case "subscribe":
		fc.reply(req.ID, map[string]any{"snapshot": map[string]any{
			"resource": str("channel"), "fromSeq": fc.seq,
			"state": map[string]any{
				"title": "bash", "cols": 80, "rows": 24, "isPty": true,
				"content":   []any{map[string]any{"type": "unclassified", "value": "$ "}},
				"lifecycle": map[string]any{"status": "running"},
				"claim":     map[string]any{"kind": "client", "clientId": fc.clientID},
			},
		}})
	case "ping":
		fc.reply(req.ID, nil)
	case "reconnect":
		fc.clientID = str("clientId")
		fc.reply(req.ID, map[string]any{
			"type": "replay", "missing": []string{"ahp-terminal:/gone"},
			"actions": []any{map[string]any{
				"channel": "ahp-terminal:/t1", "serverSeq": 90,
				"action": map[string]any{"type": "terminal/data", "data": "x"},
			}},
		})
	case "dispatchAction":
		var seq int64
		_ = json.Unmarshal(p["clientSeq"], &seq)
		var action map[string]any
		_ = json.Unmarshal(p["action"], &action)
		fc.push(str("channel"), action, map[string]any{"clientId": fc.clientID, "clientSeq": seq})
		if action["type"] == "terminal/input" {
			fc.push(str("channel"), map[string]any{"type": "terminal/data", "data": action["data"]}, nil)
		}
	case "x-test/push":
		// Answer first (if a request), then send the frames in params.frames verbatim.
		var frames []json.RawMessage
		_ = json.Unmarshal(p["frames"], &frames)
		if req.ID != nil {
			fc.reply(req.ID, nil)
		}
		for _, fr := range frames {
			fc.send(string(fr))
		}
	case "x-test/hold":
		fc.held = req.ID
		fc.send(`{"jsonrpc":"2.0","method":"x-test/held","params":{"channel":"ahp-root://"}}`)
	case "x-test/release":
		fc.reply(req.ID, "release")
		fc.reply(fc.held, "hold")
	case "x-test/close":
		var code int
		_ = json.Unmarshal(p["code"], &code)
		_ = fc.conn.Close(websocket.StatusCode(code), str("reason"))
		return false
	default:
		if req.ID != nil {
			fc.fail(req.ID, -32601, "This host does not serve "+req.Method+" yet", map[string]any{"method": req.Method})
		}
	}
	return true
}

// serveFlood writes 16 KiB frames until one cannot be written for a while,
// i.e. until the client has stopped reading and every buffer is full.
func (f *fakeServer) serveFlood(w http.ResponseWriter, r *http.Request) {
	f.handlers.Add(1)
	defer f.handlers.Done()
	conn, ok := f.accept(w, r)
	if !ok {
		return
	}
	defer func() { _ = conn.CloseNow() }()
	payload := strings.Repeat("y", 16<<10)
	for n := 0; ; n++ {
		frame, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "action", "params": map[string]any{
			"channel": "ahp-terminal:/t1", "serverSeq": n + 1,
			"action": map[string]any{"type": "terminal/data", "data": payload},
		}})
		// A deadline, not a sleep: the write either completes or proves the reader stalled.
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		err := conn.Write(ctx, websocket.MessageText, frame)
		cancel()
		if err != nil {
			f.flooded <- n
			return
		}
	}
}

// RootURI is the root channel, spelled out so the fake does not lean on the package under test.
const RootURI = "ahp-root://"
