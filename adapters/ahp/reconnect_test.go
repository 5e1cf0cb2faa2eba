package ahp_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/ahp"
	"github.com/shellgate/shellgate/adapters/clock"
	"github.com/shellgate/shellgate/adapters/spawner/fake"
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
)

func TestADroppedClientIsRememberedForTheGracePeriodOnly(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	h := hub.New(hub.Options{})
	host := terminals.New(terminals.Config{Shell: "/bin/sh", Env: []string{"PATH=" + os.Getenv("PATH")}, Dir: t.TempDir()}, h, fake.New(), clk)
	srv := ahp.NewServer(host, clk, slog.New(slog.NewTextHandler(io.Discard, nil)), ahp.Options{ReconnectGrace: time.Minute})
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
