package ahp_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/shellgate/shellgate/adapters/ahp"
	"github.com/shellgate/shellgate/adapters/clock"
	"github.com/shellgate/shellgate/adapters/spawner/fake"
	"github.com/shellgate/shellgate/adapters/transport/memory"
	"github.com/shellgate/shellgate/app/gate"
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/ports"
)

// BenchmarkDispatchEchoRoundTrip times one typed key through the router:
// the dispatch frame in, the input's echo out, over an in-process
// connection (no network, no process).
func BenchmarkDispatchEchoRoundTrip(b *testing.B) {
	h := hub.New(hub.Options{})
	host := terminals.New(terminals.Config{Shell: "/bin/sh", Env: []string{"PATH=" + os.Getenv("PATH")}, Dir: os.TempDir()}, h, fake.New(), clock.System())
	srv := ahp.NewServer(terminals.NewApp(host, gate.AllowAll()), clock.System(), slog.New(slog.NewTextHandler(io.Discard, nil)), ahp.Options{})
	ctx := context.Background()
	server, cl := memory.Pipe(ports.Peer{})
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ctx, server) }()
	c := &client{t: &testing.T{}, conn: cl}
	c.initialize("bench")
	_ = c.call("createTerminal", map[string]any{"channel": "ahp-terminal:/b"})
	_ = c.call("subscribe", map[string]any{"channel": "ahp-terminal:/b"})
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		frame := fmt.Sprintf(`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/b","clientSeq":%d,"action":{"type":"terminal/input","data":"x"}}}`, i+1)
		if err := cl.Write(ctx, []byte(frame)); err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := cl.Read(ctx); err != nil {
				b.Fatal(err)
			}
			break
		}
	}
	b.StopTimer()
	_ = cl.Close(ports.CloseNormal, "")
	<-done
	srv.Close("")
	_ = host.Stop(ctx)
}
