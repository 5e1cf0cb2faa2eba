package client

import (
	"context"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"
)

// drain reads Actions until it closes and returns what it delivered.
func drain(t *testing.T, c *Client) []Envelope {
	t.Helper()
	var got []Envelope
	timeout := time.After(10 * time.Second)
	for {
		select {
		case env, ok := <-c.Actions():
			if !ok {
				return got
			}
			got = append(got, env)
		case <-timeout:
			t.Fatal("the connection did not end")
		}
	}
}

func terminalSnapshot(uri string, fromSeq int, text string) map[string]any {
	return map[string]any{"resource": uri, "fromSeq": fromSeq, "state": map[string]any{
		"title": "sh", "content": []any{map[string]any{"type": "unclassified", "value": text}},
		"lifecycle": map[string]any{"status": "running"}, "claim": map[string]any{"kind": "client", "clientId": "cli-test"},
	}}
}

// TestResumeReplaysWhatTheDroppedConnectionMissed: the daemon drops a
// client that fell behind; Resume asks for everything after the last
// envelope delivered, on the subscribed channels, under the same client id,
// and numbers actions on from the old connection's.
func TestResumeReplaysWhatTheDroppedConnectionMissed(t *testing.T) {
	const uri = "ahp-terminal:/t"
	reconnects := make(chan map[string]any, 1)
	h := newFakeHost(t, func(conn *websocket.Conn, msg map[string]any) {
		switch msg["method"] {
		case "subscribe":
			answer(conn, msg, map[string]any{"snapshot": terminalSnapshot(uri, 5, "old ")})
			send(conn, action(uri, 6, map[string]any{"type": "terminal/data", "data": "a"}))
			_ = conn.Close(websocket.StatusPolicyViolation, "this client fell more than 100 bytes behind the terminal output; reconnect to resume")
		case "reconnect":
			reconnects <- msg["params"].(map[string]any)
			answer(conn, msg, map[string]any{"type": "replay", "missing": []any{}, "actions": []any{
				map[string]any{"channel": uri, "serverSeq": 7, "action": map[string]any{"type": "terminal/data", "data": "b"}},
				map[string]any{"channel": uri, "serverSeq": 8, "action": map[string]any{"type": "terminal/data", "data": "c"}},
			}})
			send(conn, action(uri, 9, map[string]any{"type": "terminal/exited", "exitCode": 0}))
		}
	})
	c := dialFake(t, h, "sg_token")
	require.NoError(t, c.Input(ctx(t), uri, "x"))
	require.NoError(t, c.Input(ctx(t), uri, "y"))
	_, _, err := c.Resume(ctx(t))
	require.ErrorIs(t, err, ErrStillConnected)
	_, err = c.Subscribe(ctx(t), uri)
	require.NoError(t, err)

	got := drain(t, c)
	require.Len(t, got, 1)
	require.Equal(t, "a", got[0].Action.Data)
	var ce *ConnectionError
	require.ErrorAs(t, c.Err(), &ce)
	require.True(t, ce.FellBehind())
	require.True(t, Resumable(c.Err()))

	n, res, err := c.Resume(ctx(t))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, n.Close()) })
	params := <-reconnects
	require.Equal(t, "cli-test", params["clientId"])
	require.Equal(t, float64(6), params["lastSeenServerSeq"])
	require.Equal(t, []any{uri}, params["subscriptions"])
	require.Equal(t, "cli-test", n.ClientID())

	require.True(t, res.Replay)
	require.False(t, res.IsMissing(uri))
	require.Len(t, res.Actions, 2)
	require.Equal(t, "b", res.Actions[0].Action.Data)
	require.Equal(t, uint64(8), res.Actions[1].ServerSeq)
	env := <-n.Actions()
	require.Equal(t, "terminal/exited", env.Action.Type)
	require.Equal(t, uint64(9), n.LastServerSeq())

	require.NoError(t, n.Input(ctx(t), uri, "z"))
	require.Eventually(t, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		last := h.frames[len(h.frames)-1]
		return last["method"] == "dispatchAction" && last["params"].(map[string]any)["clientSeq"] == float64(3)
	}, 10*time.Second, time.Millisecond, "the new connection numbers its actions on from the old one's")
}

// TestResumeAfterTooLongAGapGivesSnapshots: when the daemon no longer
// holds the gap it answers with snapshots, and envelopes they already
// reflect are not delivered.
func TestResumeAfterTooLongAGapGivesSnapshots(t *testing.T) {
	const uri = "ahp-terminal:/t"
	h := newFakeHost(t, func(conn *websocket.Conn, msg map[string]any) {
		switch msg["method"] {
		case "initialize":
			answer(conn, msg, map[string]any{"protocolVersion": "1.0.0", "serverSeq": 1, "snapshots": []any{
				map[string]any{"resource": RootChannel, "fromSeq": 1, "state": map[string]any{"agents": []any{}, "terminals": []any{}}},
			}})
		case "subscribe":
			answer(conn, msg, map[string]any{"snapshot": terminalSnapshot(uri, 2, "")})
			_ = conn.Close(websocket.StatusPolicyViolation, "behind")
		case "reconnect":
			answer(conn, msg, map[string]any{"type": "snapshot", "snapshots": []any{terminalSnapshot(uri, 900, "newest")}})
			send(conn, action(uri, 900, map[string]any{"type": "terminal/data", "data": "in the snapshot"}))
			send(conn, action(uri, 901, map[string]any{"type": "terminal/data", "data": "after it"}))
		}
	})
	c := dialFake(t, h, "")
	_, err := c.Initialize(ctx(t), RootChannel)
	require.NoError(t, err)
	_, err = c.Subscribe(ctx(t), uri)
	require.NoError(t, err)
	drain(t, c)

	n, res, err := c.Resume(ctx(t))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, n.Close()) })
	require.False(t, res.Replay)
	snap, ok := res.Snapshot(uri)
	require.True(t, ok)
	state, err := snap.Terminal()
	require.NoError(t, err)
	require.Equal(t, "newest", state.Text())
	require.True(t, res.IsMissing(RootChannel), "the root channel got no snapshot")
	env := <-n.Actions()
	require.Equal(t, "after it", env.Action.Data)
}

func TestResumeIsOnlyForConnectionsTheDaemonDroppedOrLost(t *testing.T) {
	require.True(t, Resumable(&ConnectionError{Code: 1008, Reason: "behind"}))
	require.True(t, Resumable(&ConnectionError{Err: context.DeadlineExceeded}))
	require.False(t, Resumable(&ConnectionError{Code: 1001, Reason: "shellgate is stopping"}))
	require.False(t, Resumable(ErrClosed))
	require.False(t, Resumable(nil))

	// A daemon that does not remember the client: the refusal comes back,
	// and Reopen still reaches it under the same id.
	h := newFakeHost(t, func(conn *websocket.Conn, msg map[string]any) {
		switch msg["method"] {
		case "reconnect":
			send(conn, map[string]any{"jsonrpc": "2.0", "id": msg["id"], "error": map[string]any{"code": -32008, "message": "cli-test is not a client this host has seen; initialize instead"}})
		case "initialize":
			answer(conn, msg, map[string]any{"protocolVersion": "1.0.0", "serverSeq": 1, "snapshots": []any{}})
		case "subscribe":
			answer(conn, msg, map[string]any{"snapshot": terminalSnapshot("ahp-terminal:/t", 1, "")})
			_ = conn.Close(websocket.StatusPolicyViolation, "behind")
		}
	})
	c := dialFake(t, h, "")
	_, err := c.Subscribe(ctx(t), "ahp-terminal:/t")
	require.NoError(t, err)
	drain(t, c)
	_, _, err = c.Resume(ctx(t))
	var rpcErr *RPCError
	require.ErrorAs(t, err, &rpcErr)
	require.Equal(t, -32008, rpcErr.Code)
	fresh, err := c.Reopen(ctx(t))
	require.NoError(t, err)
	require.NoError(t, fresh.Close())
	h.mu.Lock()
	defer h.mu.Unlock()
	last := h.frames[len(h.frames)-1]
	require.Equal(t, "initialize", last["method"])
	require.Equal(t, "cli-test", last["params"].(map[string]any)["clientId"])
}
