package ahp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/ahp"
	"github.com/shellgate/shellgate/adapters/clock"
	"github.com/shellgate/shellgate/adapters/spawner/local"
	"github.com/shellgate/shellgate/adapters/transport/memory"
	"github.com/shellgate/shellgate/app/gate"
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/ports"
)

// FuzzRouterFrames feeds arbitrary frames to an initialized connection: the
// router never panics, answers every request (a frame with an id and a
// method), and a terminal another connection owns keeps working.
//
//	go test -run '^$' -fuzz FuzzRouterFrames -fuzztime 60s ./adapters/ahp/
func FuzzRouterFrames(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"channel":"ahp-root://"}}`,
		`{"jsonrpc":"2.0","id":"x","method":"subscribe","params":{"channel":"ahp-terminal:/keep"}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/keep","clientSeq":1,"action":{"type":"terminal/input","data":"x"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"createTerminal","params":{"channel":"ahp-terminal:/f","claim":{"kind":"session"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"disposeTerminal","params":{"channel":"ahp-terminal:/keep"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersions":["9.9.9"],"clientId":"z"}}`,
		`[1,2,3]`, `{`, `null`, `{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":5,"method":"dispatchAction","params":{"channel":"ahp-root://","action":{"type":"root/configChanged","config":{"defaultShell":"/bin/sh"}}}}`,
	} {
		f.Add([]byte(seed))
	}
	h := hub.New(hub.Options{})
	host := terminals.New(terminals.Config{Shell: "/bin/sh", Env: []string{"PATH=" + os.Getenv("PATH")}, Dir: os.TempDir()}, h, local.New(), clock.System())
	srv := ahp.NewServer(terminals.NewApp(host, gate.AllowAll()), clock.System(), slog.New(slog.NewTextHandler(io.Discard, nil)), ahp.Options{})
	ctx := context.Background()
	keep, err := host.Create(ctx, terminals.Spec{URI: "ahp-terminal:/keep", Claim: claimOf("owner"), Command: "cat"})
	require.NoError(f, err)
	f.Cleanup(func() {
		srv.Close("fuzzing over")
		require.NoError(f, host.Stop(ctx))
	})
	var mu sync.Mutex // one input at a time: they share the host
	f.Fuzz(func(t *testing.T, frame []byte) {
		mu.Lock()
		defer mu.Unlock()
		server, cl := memory.Pipe(ports.Peer{})
		done := make(chan struct{})
		go func() { defer close(done); srv.Serve(ctx, server) }()
		defer func() { _ = cl.Close(ports.CloseNormal, ""); <-done }()
		c := &client{t: t, conn: cl}
		c.initialize("fuzz")

		wantID := requestID(frame)
		c.sendRaw(string(frame))
		c.sendRaw(`{"jsonrpc":"2.0","id":"sentinel","method":"ping","params":{"channel":"ahp-root://"}}`)
		answered := false
		rctx, cancel := context.WithTimeout(ctx, deadline)
		defer cancel()
		for {
			raw, err := cl.Read(rctx)
			if err != nil {
				// Only a refused version closes the connection, after answering.
				require.True(t, answered, "connection closed without answering %q: %v", frame, err)
				break
			}
			var m map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(raw, &m), "the host sent invalid JSON")
			if string(m["id"]) == `"sentinel"` {
				break
			}
			if wantID != "" && string(m["id"]) == wantID {
				answered = true
			}
		}
		if wantID != "" && wantID != `"sentinel"` {
			require.True(t, answered, "request %q was not answered", frame)
		}
		// A frame that does not name the other terminal leaves it running.
		named := bytes.Contains(frame, []byte("keep"))
		if _, err := host.Get("ahp-terminal:/keep"); err != nil || isDone(keep) {
			require.True(t, named, "the other terminal was affected by %q", frame)
			_ = host.Dispose("ahp-terminal:/keep")
			keep, err = host.Create(ctx, terminals.Spec{URI: "ahp-terminal:/keep", Claim: claimOf("owner"), Command: "cat"})
			require.NoError(t, err)
		}
	})
}

func isDone(t *terminals.Terminal) bool {
	select {
	case <-t.Done():
		return true
	default:
		return false
	}
}

// requestID is the id of a frame that is a request, as JSON; "" otherwise.
func requestID(frame []byte) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(frame, &m) != nil {
		return ""
	}
	id, ok := m["id"]
	var method string
	if !ok || string(id) == "null" || json.Unmarshal(m["method"], &method) != nil || method == "" {
		return ""
	}
	var num json.Number
	var str string
	if json.Unmarshal(id, &str) != nil && (id[0] == '"' || json.Unmarshal(id, &num) != nil) {
		return "" // an id that is neither a number nor a string is answered with id null
	}
	compact, err := json.Marshal(json.RawMessage(id))
	if err != nil {
		return ""
	}
	return string(compact)
}
