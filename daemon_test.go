package shellgate

import (
	"context"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/goleak"

	"github.com/shellgate/shellgate/adapters/spawner/fake"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

func TestMain(m *testing.M) {
	// The daemon's sandbox runs its helper as this binary.
	if code, ok := Helper(os.Args); ok {
		os.Exit(code)
	}
	goleak.VerifyTestMain(m,
		// The thread children are forked on lives as long as the process.
		goleak.IgnoreTopFunction("github.com/shellgate/shellgate/adapters/spawner/internal/proc.spawnThread"))
}

// newDaemon, daemonOptions and boundAddr are the names these tests were
// written with, from when the graph lived in cmd/shellgate.
func newDaemon(cfg Config, logOut io.Writer, extra ...fx.Option) *Daemon {
	return New(cfg, logOut, extra...)
}

func daemonOptions(cfg Config, logOut io.Writer) fx.Option { return Options(cfg, logOut) }

func boundAddr(d *Daemon) string { return d.Addr() }

func testConfig(t *testing.T) Config {
	cfg := defaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.LogLevel = "error"
	return cfg
}

func TestProductionGraphValidates(t *testing.T) {
	require.NoError(t, fx.ValidateApp(daemonOptions(testConfig(t), io.Discard)))
}

func TestDaemonStartsServesHealthAndStopsCleanly(t *testing.T) {
	d := newDaemon(testConfig(t), io.Discard)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, d.Start(ctx))
	resp, err := http.Get("http://" + boundAddr(d) + "/healthz")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), `"status":"ok"`)
	require.Contains(t, string(body), `"sandbox":{`)
	require.NoError(t, d.Stop(ctx))
}

func TestSpawnerSwapsForTheFakeInOneLine(t *testing.T) {
	sp := fake.New()
	var host *terminals.Host
	d := newDaemon(testConfig(t), io.Discard,
		fx.Decorate(func(ports.Spawner) ports.Spawner { return sp }),
		fx.Populate(&host),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, d.Start(ctx))
	term, err := host.Create(ctx, terminals.Spec{URI: "ahp-terminal:/f", Claim: terminal.ClientHolds("c")})
	require.NoError(t, err)
	require.NotNil(t, term)
	require.NoError(t, d.Stop(ctx))
	require.Len(t, sp.Processes(), 1, "the host spawned through the fake")
}
