package ahp_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/shellgate/shellgate/adapters/ahp"
	"github.com/shellgate/shellgate/adapters/clock"
	"github.com/shellgate/shellgate/adapters/spawner/pty"
	"github.com/shellgate/shellgate/adapters/transport/memory"
	"github.com/shellgate/shellgate/app/gate"
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/ports"
)

// BenchmarkKeystrokeThroughCat times one typed key through the router to a
// real `cat` under a pty in raw mode and back: the dispatch frame in, the
// frame carrying the key's output out, over an in-process connection (no
// network), so what it measures is the daemon's own work per key: decoding,
// the grant check, the write to the pty, the pump's read, the encoding.
func BenchmarkKeystrokeThroughCat(b *testing.B) {
	h := hub.New(hub.Options{})
	host := terminals.New(terminals.Config{Shell: "/bin/sh", Env: []string{"PATH=" + os.Getenv("PATH")}, Dir: os.TempDir()}, h, pty.New(), clock.System())
	srv := ahp.NewServer(terminals.NewApp(host, gate.AllowAll()), clock.System(), slog.New(slog.NewTextHandler(io.Discard, nil)), ahp.Options{})
	ctx := context.Background()
	server, cl := memory.Pipe(ports.Peer{})
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ctx, server) }()
	c := &client{t: &testing.T{}, conn: cl}
	c.initialize("bench")
	const uri = "ahp-terminal:/keys"
	_ = c.call("createTerminal", map[string]any{"channel": uri,
		"_meta": map[string]any{"shellgate/spawn": map[string]any{"command": "stty raw -echo; echo R; exec cat", "pty": true}}})
	_ = c.call("subscribe", map[string]any{"channel": uri})
	// Wait for cat: its R says the line discipline is raw.
	for seen := []byte(nil); !bytes.Contains(seen, []byte(`"data":"R`)); {
		msg, err := cl.Read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		seen = msg
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		key := 'a' + byte(i%26)
		frame := fmt.Sprintf(`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":%q,"clientSeq":%d,"action":{"type":"terminal/input","data":"%c"}}}`, uri, i+1, key)
		if err := cl.Write(ctx, []byte(frame)); err != nil {
			b.Fatal(err)
		}
		want := []byte(fmt.Sprintf(`"type":"terminal/data","data":"%c"`, key))
		for {
			msg, err := cl.Read(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if bytes.Contains(msg, want) {
				break
			}
		}
	}
	b.StopTimer()
	_ = cl.Close(ports.CloseNormal, "")
	<-done
	srv.Close("")
	_ = host.Stop(ctx)
}
