package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"
)

// fakeAHP is a scripted AHP host. script answers each request; n counts
// the connections, from 1, so that a script can tell the first from the
// one that resumes it.
type fakeAHP struct {
	srv *httptest.Server

	mu       sync.Mutex
	conns    int
	requests []fakeRequest
}

type fakeRequest struct {
	conn   int
	method string
	params map[string]any
}

func newFakeAHP(t *testing.T, script func(conn *websocket.Conn, n int, method string, id any, params map[string]any)) *fakeAHP {
	f := &fakeAHP{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		f.mu.Lock()
		f.conns++
		n := f.conns
		f.mu.Unlock()
		for {
			_, raw, err := ws.Read(context.Background())
			if err != nil {
				return
			}
			var msg struct {
				ID     any            `json:"id"`
				Method string         `json:"method"`
				Params map[string]any `json:"params"`
			}
			if json.Unmarshal(raw, &msg) != nil {
				continue
			}
			f.mu.Lock()
			f.requests = append(f.requests, fakeRequest{conn: n, method: msg.Method, params: msg.Params})
			f.mu.Unlock()
			script(ws, n, msg.Method, msg.ID, msg.Params)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// calls lists "conn:method" for every request received.
func (f *fakeAHP) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.requests {
		out = append(out, string(rune('0'+r.conn))+":"+r.method)
	}
	return out
}

func (f *fakeAHP) request(method string, conn int) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.requests {
		if r.method == method && r.conn == conn {
			return r.params
		}
	}
	return nil
}

func wsSend(ws *websocket.Conn, v any) {
	raw, _ := json.Marshal(v)
	_ = ws.Write(context.Background(), websocket.MessageText, raw)
}

func wsAnswer(ws *websocket.Conn, id, result any) {
	wsSend(ws, map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func wsAction(ws *websocket.Conn, channel string, seq int, action map[string]any) {
	wsSend(ws, map[string]any{"jsonrpc": "2.0", "method": "action", "params": map[string]any{"channel": channel, "serverSeq": seq, "action": action}})
}

func fakeTerminal(uri string, fromSeq int, text string, exitCode *int) map[string]any {
	lifecycle := map[string]any{"status": "running"}
	if exitCode != nil {
		lifecycle = map[string]any{"status": "exited", "exitCode": *exitCode}
	}
	return map[string]any{"resource": uri, "fromSeq": fromSeq, "state": map[string]any{
		"title": "t", "content": []any{map[string]any{"type": "unclassified", "value": text}},
		"lifecycle": lifecycle, "claim": map[string]any{"kind": "client", "clientId": "x"},
	}}
}

// dropAfterFirstOutput is the first connection of every test here: it
// serves exec or attach until the first output, then drops the client as
// the daemon drops one that fell behind.
func dropAfterFirstOutput(ws *websocket.Conn, method string, id any, params map[string]any) {
	switch method {
	case "initialize":
		var snaps []any
		if subs, _ := params["initialSubscriptions"].([]any); len(subs) > 0 {
			snaps = append(snaps, map[string]any{"resource": "ahp-root://", "fromSeq": 1, "state": map[string]any{
				"agents": []any{}, "terminals": []any{map[string]any{"resource": "ahp-terminal:/t", "title": "t",
					"claim": map[string]any{"kind": "client", "clientId": "x"}, "lifecycle": map[string]any{"status": "running"}}},
			}})
		}
		wsAnswer(ws, id, map[string]any{"protocolVersion": "1.0.0", "serverSeq": 1, "snapshots": append([]any{}, snaps...)})
	case "createTerminal":
		wsAnswer(ws, id, nil)
	case "subscribe":
		uri, _ := params["channel"].(string)
		wsAnswer(ws, id, map[string]any{"snapshot": fakeTerminal(uri, 2, "", nil)})
		wsAction(ws, uri, 3, map[string]any{"type": "terminal/data", "data": "first part\n"})
		_ = ws.Close(websocket.StatusPolicyViolation, "this client fell more than 65536 bytes behind the terminal output; reconnect to resume")
	}
}

// Its standard input stays open and empty, as a script's often is, so
// that exec feeds nothing and the requests each test lists are the whole
// conversation.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runCLIIn(t, openInput(t), args...)
}

func runCLIIn(t *testing.T, stdin io.Reader, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, stdin, &out, &errOut)
	return code, out.String(), errOut.String()
}

// openInput is a standard input that has nothing and has not ended; it
// ends at the test's end, which ends exec's read of it.
func openInput(t *testing.T) io.Reader {
	r, w := io.Pipe()
	t.Cleanup(func() { _ = w.Close() })
	return r
}

// TestExecSaysItsOutputIsIncompleteWhenTheGapIsTooOldAndDisposes: exec is
// dropped, and the daemon no longer holds what it missed (it answers
// reconnect with a snapshot): exec exits 1 saying so, and disposes of the
// terminal over the new connection.
func TestExecSaysItsOutputIsIncompleteWhenTheGapIsTooOldAndDisposes(t *testing.T) {
	f := newFakeAHP(t, func(ws *websocket.Conn, n int, method string, id any, params map[string]any) {
		if n == 1 {
			dropAfterFirstOutput(ws, method, id, params)
			return
		}
		switch method {
		case "reconnect":
			subs := params["subscriptions"].([]any)
			wsAnswer(ws, id, map[string]any{"type": "snapshot", "snapshots": []any{fakeTerminal(subs[0].(string), 900, "…the newest output\n", nil)}})
		case "disposeTerminal":
			wsAnswer(ws, id, nil)
		}
	})
	code, out, errOut := runCLI(t, "exec", "--url", f.srv.URL, "--token", "sg_t", "--", "yes")
	require.Equal(t, 1, code)
	require.Equal(t, "first part\n", out, "what it wrote, it wrote once; nothing from the snapshot is passed off as the rest")
	require.Contains(t, errOut, "exec fell so far behind the command's output that the daemon no longer holds the part it missed: exec's output is incomplete, and the command is being stopped")
	require.NotContains(t, errOut, "could not dispose")
	require.Equal(t, []string{"1:initialize", "1:createTerminal", "1:subscribe", "2:reconnect", "2:disposeTerminal"}, f.calls())
	rc := f.request("reconnect", 2)
	require.Equal(t, float64(3), rc["lastSeenServerSeq"], "from the last output written")
	require.Equal(t, f.request("initialize", 1)["clientId"], rc["clientId"])
}

// TestExecThatCannotResumeStillDisposesOverAFreshConnection: the daemon
// refuses to resume exec; exec disposes of its terminal over a fresh
// connection under the same client id and exits 1 saying what happened.
func TestExecThatCannotResumeStillDisposesOverAFreshConnection(t *testing.T) {
	f := newFakeAHP(t, func(ws *websocket.Conn, n int, method string, id any, params map[string]any) {
		if n == 1 {
			dropAfterFirstOutput(ws, method, id, params)
			return
		}
		switch method {
		case "reconnect":
			wsSend(ws, map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32008, "message": "not a client this host has seen; initialize instead"}})
		case "initialize":
			wsAnswer(ws, id, map[string]any{"protocolVersion": "1.0.0", "serverSeq": 9, "snapshots": []any{}})
		case "disposeTerminal":
			wsAnswer(ws, id, nil)
		}
	})
	code, out, errOut := runCLI(t, "exec", "--url", f.srv.URL, "--token", "sg_t", "--", "yes")
	require.Equal(t, 1, code)
	require.Equal(t, "first part\n", out)
	require.Contains(t, errOut, "exec fell behind the command's output and the daemon dropped it; resuming failed: the daemon refused reconnect: not a client this host has seen")
	require.NotContains(t, errOut, "could not dispose")
	require.Equal(t, []string{"1:initialize", "1:createTerminal", "1:subscribe", "2:reconnect", "3:initialize", "3:disposeTerminal"}, f.calls())
	require.Equal(t, f.request("initialize", 1)["clientId"], f.request("initialize", 3)["clientId"], "the terminal's claim names the first connection's client id")
	require.Equal(t, f.request("createTerminal", 1)["channel"], f.request("disposeTerminal", 3)["channel"])
}

// TestAttachResumedFromASnapshotSaysOutputWasMissedAndCarriesOn: attach
// to a file is dropped and the gap is too old: it notes the loss on
// stderr, repeats nothing into the file, and follows the terminal to its
// end over the new connection.
func TestAttachResumedFromASnapshotSaysOutputWasMissedAndCarriesOn(t *testing.T) {
	f := newFakeAHP(t, func(ws *websocket.Conn, n int, method string, id any, params map[string]any) {
		if n == 1 {
			dropAfterFirstOutput(ws, method, id, params)
			return
		}
		if method != "reconnect" {
			return
		}
		wsAnswer(ws, id, map[string]any{"type": "snapshot", "snapshots": []any{
			map[string]any{"resource": "ahp-root://", "fromSeq": 900, "state": map[string]any{"agents": []any{}, "terminals": []any{
				map[string]any{"resource": "ahp-terminal:/t", "title": "t", "claim": map[string]any{"kind": "client", "clientId": "x"}, "lifecycle": map[string]any{"status": "running"}},
			}}},
			fakeTerminal("ahp-terminal:/t", 900, "first part\nmissed\n", nil),
		}})
		wsAction(ws, "ahp-terminal:/t", 901, map[string]any{"type": "terminal/data", "data": "live\n"})
		wsAction(ws, "ahp-terminal:/t", 902, map[string]any{"type": "terminal/exited", "exitCode": 0})
	})
	code, out, errOut := runCLI(t, "attach", "t", "--url", f.srv.URL, "--token", "sg_t")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "first part\nlive\n", out, "the terminal's output only, none of it twice")
	require.Contains(t, errOut, "shellgate: fell behind the terminal's output and was dropped by the daemon; reconnected, but some output was missed\n")
	require.Contains(t, errOut, "ahp-terminal:/t exited with code 0")
	rc := f.request("reconnect", 2)
	require.ElementsMatch(t, []any{"ahp-root://", "ahp-terminal:/t"}, rc["subscriptions"])
	require.Equal(t, float64(3), rc["lastSeenServerSeq"])
}
