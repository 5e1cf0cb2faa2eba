package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeHost is a scripted AHP host: each request is answered by script,
// which may also push frames of its own first.
type fakeHost struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	header http.Header
	frames []map[string]any // everything the client sent
	got    chan struct{}
	script func(conn *websocket.Conn, msg map[string]any)
}

func newFakeHost(t *testing.T, script func(conn *websocket.Conn, msg map[string]any)) *fakeHost {
	h := &fakeHost{t: t, script: script, got: make(chan struct{}, 1000)}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer sg_wrong" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.mu.Lock()
		h.header = r.Header.Clone()
		h.mu.Unlock()
		conn, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer conn.CloseNow()
		for {
			_, raw, err := conn.Read(context.Background())
			if err != nil {
				return
			}
			var msg map[string]any
			if json.Unmarshal(raw, &msg) != nil {
				continue
			}
			h.mu.Lock()
			h.frames = append(h.frames, msg)
			h.mu.Unlock()
			h.got <- struct{}{}
			if h.script != nil {
				h.script(conn, msg)
			}
		}
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// auth is the Authorization header of the last upgrade.
func (h *fakeHost) auth() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.header.Get("Authorization")
}

func send(conn *websocket.Conn, v any) {
	raw, _ := json.Marshal(v)
	_ = conn.Write(context.Background(), websocket.MessageText, raw)
}

func answer(conn *websocket.Conn, msg map[string]any, result any) {
	send(conn, map[string]any{"jsonrpc": "2.0", "id": msg["id"], "result": result})
}

func action(channel string, seq int, a map[string]any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "method": "action", "params": map[string]any{"channel": channel, "serverSeq": seq, "action": a}}
}

func dialFake(t *testing.T, h *fakeHost, token string) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, h.srv.URL, Options{Token: token, ClientID: "cli-test"})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestSubscribeDeliversOnlyWhatFollowsTheSnapshot(t *testing.T) {
	h := newFakeHost(t, func(conn *websocket.Conn, msg map[string]any) {
		if msg["method"] != "subscribe" {
			return
		}
		// An envelope the snapshot already holds arrives after it (as
		// from an earlier subscription), then a new one.
		answer(conn, msg, map[string]any{"snapshot": map[string]any{
			"resource": "ahp-terminal:/t", "fromSeq": 10,
			"state": map[string]any{"title": "sh", "content": []any{map[string]any{"type": "unclassified", "value": "old "}},
				"lifecycle": map[string]any{"status": "running"}, "claim": map[string]any{"kind": "client", "clientId": "x"}, "isPty": true},
		}})
		send(conn, action("ahp-terminal:/t", 9, map[string]any{"type": "terminal/data", "data": "doubled "}))
		send(conn, action("ahp-terminal:/t", 10, map[string]any{"type": "terminal/data", "data": "doubled "}))
		send(conn, action("ahp-terminal:/t", 11, map[string]any{"type": "terminal/data", "data": "new"}))
		send(conn, action("ahp-terminal:/t", 12, map[string]any{"type": "terminal/exited", "exitCode": 3}))
	})
	c := dialFake(t, h, "sg_token")
	require.Equal(t, "Bearer sg_token", h.auth())
	snap, err := c.Subscribe(ctx(t), "ahp-terminal:/t")
	require.NoError(t, err)
	state, err := snap.Terminal()
	require.NoError(t, err)
	require.Equal(t, "old ", state.Text())
	require.True(t, state.IsPty)
	exited, _ := state.Exited()
	require.False(t, exited)

	env := <-c.Actions()
	require.Equal(t, uint64(11), env.ServerSeq)
	require.Equal(t, "new", env.Action.Data)
	env = <-c.Actions()
	require.Equal(t, "terminal/exited", env.Action.Type)
	require.Equal(t, 3, *env.Action.ExitCode)
	require.Equal(t, uint64(12), c.LastServerSeq())
}

func TestErrorAnswersNameTheRequestAndTheCode(t *testing.T) {
	h := newFakeHost(t, func(conn *websocket.Conn, msg map[string]any) {
		send(conn, map[string]any{"jsonrpc": "2.0", "id": msg["id"], "error": map[string]any{
			"code": -32009, "message": "sam may not terminal:create here", "data": map[string]any{},
		}})
	})
	c := dialFake(t, h, "sg_token")
	err := c.CreateTerminal(ctx(t), CreateParams{Channel: "ahp-terminal:/x"})
	require.EqualError(t, err, "the daemon refused createTerminal: sam may not terminal:create here (-32009 PermissionDenied)")
	var rpcErr *RPCError
	require.ErrorAs(t, err, &rpcErr)
	require.Equal(t, -32009, rpcErr.Code)
}

func TestCreateTerminalSaysWhatToRunInMeta(t *testing.T) {
	h := newFakeHost(t, func(conn *websocket.Conn, msg map[string]any) { answer(conn, msg, nil) })
	c := dialFake(t, h, "")
	require.Empty(t, h.auth())
	require.NoError(t, c.CreateTerminal(ctx(t), CreateParams{
		Channel: "ahp-terminal:/p", Name: "true", Spawn: &Spawn{Command: "true", Args: []string{}},
	}))
	h.mu.Lock()
	params := h.frames[0]["params"].(map[string]any)
	h.mu.Unlock()
	require.Equal(t, map[string]any{"kind": "client", "clientId": "cli-test"}, params["claim"])
	require.Equal(t, map[string]any{"command": "true", "args": []any{}, "pty": false}, params["_meta"].(map[string]any)[SpawnMetaKey],
		"empty args are kept: they make the command a program, not a shell line")
}

func TestDispatchNumbersReachTheWireInOrder(t *testing.T) {
	h := newFakeHost(t, nil)
	c := dialFake(t, h, "")
	errs := make(chan error, 50)
	for i := range 50 {
		go func() { errs <- c.Input(context.Background(), "ahp-terminal:/t", fmt.Sprint(i)) }()
	}
	for range 50 {
		require.NoError(t, <-errs)
	}
	for range 50 {
		select {
		case <-h.got:
		case <-time.After(10 * time.Second):
			t.Fatal("the host did not get every dispatch")
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, f := range h.frames {
		require.Equal(t, "dispatchAction", f["method"])
		require.Equal(t, float64(i+1), f["params"].(map[string]any)["clientSeq"])
	}
}

func TestConnectionEndSaysWhyAndFailsWaitingRequests(t *testing.T) {
	h := newFakeHost(t, func(conn *websocket.Conn, msg map[string]any) {
		_ = conn.Close(websocket.StatusGoingAway, "shellgate is stopping")
	})
	c := dialFake(t, h, "")
	_, err := c.Subscribe(ctx(t), "ahp-terminal:/t")
	require.ErrorContains(t, err, "the daemon closed the connection: shellgate is stopping (1001)")
	_, open := <-c.Actions()
	require.False(t, open)
	require.ErrorContains(t, c.Err(), "shellgate is stopping")
}

func TestRefusedTokenIsReportedWithoutTheToken(t *testing.T) {
	h := newFakeHost(t, nil)
	_, err := Dial(ctx(t), h.srv.URL+"/?token=sg_query", Options{Token: "sg_wrong"})
	require.ErrorContains(t, err, "refused the token (HTTP 401)")
	require.NotContains(t, err.Error(), "sg_wrong")
	require.NotContains(t, err.Error(), "sg_query")
}

func TestURLsAcceptWhatServeWritesAndWhatPeopleType(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:7681":   "ws://127.0.0.1:7681/",
		"https://host:1/":         "wss://host:1/",
		"127.0.0.1:7681":          "ws://127.0.0.1:7681/",
		"ws://127.0.0.1:7681/ahp": "ws://127.0.0.1:7681/ahp",
	} {
		got, err := WebSocketURL(in)
		require.NoError(t, err)
		require.Equal(t, want, got, in)
	}
	base, err := HTTPURL("wss://host:1/?token=x")
	require.NoError(t, err)
	require.Equal(t, "https://host:1", base)
	_, err = WebSocketURL("http://me:sg_pw@host:1")
	require.Error(t, err)
	require.NotContains(t, err.Error(), "sg_pw")
	require.Equal(t, "ahp-terminal:/x", TerminalURI("x"))
	require.Equal(t, "ahp-terminal:/x", TerminalURI("ahp-terminal:/x"))
	require.Equal(t, "x", TerminalID("ahp-terminal:/x"))
}

func TestRESTReadsTheSeedsErrorShapeAndNoticesAMissingAPI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("Authorization") != "Bearer sg_token":
			w.WriteHeader(http.StatusUnauthorized)
		case strings.HasSuffix(r.URL.Path, "/approve"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"status":"error","code":"session_not_found","error":"no session s1"}`))
		case r.URL.Path == AgentAPIPrefix+"/sessions":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"status":"success","total":0,"sessions":[]}`))
		default:
			http.Error(w, "upgrade", http.StatusUpgradeRequired)
		}
	}))
	defer srv.Close()
	api, err := NewREST(srv.URL, "sg_token")
	require.NoError(t, err)
	var list struct {
		Total int `json:"total"`
	}
	require.NoError(t, api.Do(ctx(t), "GET", AgentAPIPrefix+"/sessions", nil, &list))
	err = api.Do(ctx(t), "POST", AgentAPIPrefix+"/sessions/s1/approve", map[string]any{"approved": true}, nil)
	require.EqualError(t, err, "the daemon refused POST /api/agent-terminal/sessions/s1/approve: HTTP 404 session_not_found: no session s1")
	require.ErrorIs(t, api.Do(ctx(t), "GET", "/api/elsewhere", nil, nil), ErrAgentAPINotServed)
}
