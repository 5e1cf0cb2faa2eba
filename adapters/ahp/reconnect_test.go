package ahp_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/ahp"
	"github.com/shellgate/shellgate/adapters/clock"
	"github.com/shellgate/shellgate/adapters/spawner/fake"
	"github.com/shellgate/shellgate/app/gate"
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
)

func TestADroppedClientIsRememberedForTheGracePeriodOnly(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	h := hub.New(hub.Options{})
	host := terminals.New(terminals.Config{Shell: "/bin/sh", Env: []string{"PATH=" + os.Getenv("PATH")}, Dir: t.TempDir()}, h, fake.New(), clk)
	srv := ahp.NewServer(terminals.NewApp(host, gate.AllowAll()), clk, slog.New(slog.NewTextHandler(io.Discard, nil)), ahp.Options{ReconnectGrace: time.Minute})
	r := &rig{t: t, host: host, srv: srv}
	t.Cleanup(func() {
		srv.Close("over")
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		require.NoError(t, host.Stop(ctx))
	})

	drop := func(c *client) {
		t.Helper()
		require.NoError(t, c.conn.Close(1000, ""))
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		require.NoError(t, clk.BlockUntil(ctx, 1), "the server arms the grace timer when the client drops")
	}
	reconnect := func(c *client, id string) map[string]any {
		return c.call("reconnect", map[string]any{"clientId": id, "lastSeenServerSeq": 0, "subscriptions": []string{"ahp-root://"}})
	}

	first := r.dial()
	first.initialize("phone")
	drop(first)
	clk.Advance(59 * time.Second)
	back := r.dial()
	res := reconnect(back, "phone")
	require.Nil(t, res["error"], "within the grace period the client resumes: %v", res)
	require.Equal(t, "replay", res["result"].(map[string]any)["type"])

	drop(back)
	clk.Advance(time.Minute)
	late := r.dial()
	res = reconnect(late, "phone")
	require.Equal(t, float64(-32008), errCode(res))
	require.Contains(t, errMessage(res), "is not a client this host has seen")
}

// A client that reconnects starts its clientSeq at 1 again, as the
// official clients do for every new client object. A retry of what it had
// applied is answered as applied and runs once; anything else it sends is
// applied, under whatever number (D18).
func TestReconnectedClientWithAFreshCounterLosesNoKeys(t *testing.T) {
	r := newRig(t)
	first := r.dial()
	first.initialize("kb", "ahp-root://")
	require.NotContains(t, first.call("createTerminal", map[string]any{"channel": "ahp-terminal:/kb", "_meta": map[string]any{"shellgate/spawn": map[string]any{"command": "cat"}}}), "error")
	sub := first.call("subscribe", map[string]any{"channel": "ahp-terminal:/kb"})
	require.Nil(t, sub["error"])
	first.dispatchInput("ahp-terminal:/kb", 1, "one\n")
	first.output("ahp-terminal:/kb", "one\n")
	first.dispatchInput("ahp-terminal:/kb", 2, "two\n")
	first.output("ahp-terminal:/kb", "two\n")
	require.NoError(t, first.conn.Close(1000, ""))

	back := r.dial()
	res := back.call("reconnect", map[string]any{"clientId": "kb", "lastSeenServerSeq": 0, "subscriptions": []string{"ahp-root://", "ahp-terminal:/kb"}})
	require.Nil(t, res["error"], "%v", res)

	// The retry of 2 is echoed as applied, and cat does not see it again.
	back.dispatchInput("ahp-terminal:/kb", 2, "two\n")
	echo := back.next("the repeat's echo", func(m map[string]any) bool {
		if !isAction("ahp-terminal:/kb", "terminal/input")(m) {
			return false
		}
		return m["params"].(map[string]any)["origin"].(map[string]any)["clientSeq"] == float64(2)
	})
	require.NotContains(t, echo["params"], "rejectionReason")

	// A fresh counter: 1 again, with other keys. Applied, and so are the
	// numbers after it, even where they repeat an old number's keys.
	back.dispatchInput("ahp-terminal:/kb", 1, "three\n")
	back.dispatchInput("ahp-terminal:/kb", 2, "two\n")
	back.output("ahp-terminal:/kb", "three\ntwo\n")

	var all strings.Builder
	snap := back.call("subscribe", map[string]any{"channel": "ahp-terminal:/kb"})
	for _, p := range snap["result"].(map[string]any)["snapshot"].(map[string]any)["state"].(map[string]any)["content"].([]any) {
		all.WriteString(p.(map[string]any)["value"].(string))
	}
	require.Equal(t, "one\ntwo\nthree\ntwo\n", all.String(), "the retry ran once; the restarted counter's keys all ran")
}
