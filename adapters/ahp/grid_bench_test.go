package ahp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shellgate/shellgate/adapters/ahp"
	"github.com/shellgate/shellgate/adapters/clock"
	"github.com/shellgate/shellgate/adapters/spawner/local"
	"github.com/shellgate/shellgate/adapters/transport/memory"
	"github.com/shellgate/shellgate/app/gate"
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/ports"
)

// gridBytes is what each terminal of the grid prints.
const gridBytes = 2 << 20

// BenchmarkGrid floods N terminals at once (real processes on pipes), each
// watched by the same M viewers, over in-process connections: the pumps of
// different terminals and the writers of different viewers contend for
// whatever the host and the hub share. It reports the output delivered to
// all viewers per second and the daemon's CPU (this process's, viewers
// included, though they only scan) per MB delivered. Every viewer must get
// every byte of every terminal: the benchmark fails otherwise.
func BenchmarkGrid(b *testing.B) {
	for _, g := range []struct{ terms, viewers int }{{1, 1}, {8, 1}, {1, 8}, {8, 8}, {16, 4}} {
		b.Run(fmt.Sprintf("terminals=%d/viewers=%d", g.terms, g.viewers), func(b *testing.B) { benchGrid(b, g.terms, g.viewers) })
	}
}

func benchGrid(b *testing.B, terms, viewers int) {
	// No viewer may be dropped for its pace: a viewer's bound holds all
	// the output, and there is no total cap. Flow control still paces the
	// processes by the fastest viewer.
	h := hub.New(hub.Options{MaxClientBytes: -1})
	host := terminals.New(terminals.Config{Shell: "/bin/sh", Env: []string{"PATH=" + os.Getenv("PATH")}, Dir: b.TempDir(), ScrollbackLimit: 1000}, h, local.New(), clock.System())
	srv := ahp.NewServer(terminals.NewApp(host, gate.AllowAll()), clock.System(), slog.New(slog.NewTextHandler(io.Discard, nil)), ahp.Options{QueueBytes: 2 * terms * gridBytes})
	var served sync.WaitGroup
	defer func() {
		srv.Close("done")
		served.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = host.Stop(ctx)
	}()
	readers := make([]*rawConn, viewers)
	for i := range readers {
		server, cl := memory.PipeBuffer(ports.Peer{}, memory.DefaultBuffer)
		served.Go(func() { srv.Serve(context.Background(), server) })
		readers[i] = &rawConn{b: b, c: cl}
		readers[i].call(`"initialize","params":{"protocolVersions":["1.0.0"],"clientId":"g%d"}`, i)
	}
	var cpu0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &cpu0)
	var elapsed time.Duration
	iter := 0
	for b.Loop() {
		b.StopTimer()
		iter++
		channels := make([]string, terms)
		for t := range channels {
			channels[t] = fmt.Sprintf("ahp-terminal:/grid%d-%d", iter, t)
			readers[0].call(`"createTerminal","params":{"channel":%q,"_meta":{"shellgate/spawn":{"command":"read go; head -c %d /dev/zero | tr '\\0' x"}}}`, channels[t], gridBytes)
			for _, r := range readers {
				r.call(`"subscribe","params":{"channel":%q}`, channels[t])
			}
		}
		b.StartTimer()

		start := time.Now()
		for t, ch := range channels {
			readers[0].write(`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":%q,"clientSeq":%d,"action":{"type":"terminal/input","data":"go\n"}}}`, ch, iter*terms+t)
		}
		var wg sync.WaitGroup
		errs := make([]error, viewers)
		for i, r := range readers {
			wg.Go(func() { errs[i] = r.readGrid(channels) })
		}
		wg.Wait()
		elapsed += time.Since(start)
		if err := errors.Join(errs...); err != nil {
			b.Fatal("a viewer did not get everything: ", err)
		}
		b.StopTimer()
		for _, ch := range channels {
			readers[0].call(`"disposeTerminal","params":{"channel":%q}`, ch)
		}
		b.StartTimer()
	}
	var cpu1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &cpu1)
	mb := float64(iter) * float64(terms*viewers) * gridBytes / 1e6
	cpu := time.Duration(cpu1.Utime.Nano() + cpu1.Stime.Nano() - cpu0.Utime.Nano() - cpu0.Stime.Nano())
	b.ReportMetric(mb/elapsed.Seconds(), "MB/s-delivered")
	b.ReportMetric(float64(cpu.Milliseconds())/mb, "cpu-ms/MB")
}

// readGrid reads until every channel has exited and checks each brought
// all gridBytes of its output.
func (r *rawConn) readGrid(channels []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	got := make(map[string]int, len(channels))
	heads := make(map[string][]byte, len(channels))
	exits := make(map[string][]byte, len(channels))
	for _, ch := range channels {
		heads[ch] = fmt.Appendf(nil, `"channel":%q,"action":{"type":"terminal/data","data":"`, ch)
		exits[ch] = fmt.Appendf(nil, `"channel":%q,"action":{"type":"terminal/exited"`, ch)
	}
	tail := []byte(`"},"serverSeq":`)
	left := len(channels)
	for left > 0 {
		msg, err := r.c.Read(ctx)
		if err != nil {
			return fmt.Errorf("after %v: %w", got, err)
		}
		for _, ch := range channels {
			if i := bytes.Index(msg, heads[ch]); i >= 0 {
				got[ch] += bytes.LastIndex(msg, tail) - i - len(heads[ch])
				break
			}
			if bytes.Contains(msg, exits[ch]) {
				if got[ch] != gridBytes {
					return fmt.Errorf("%s: got %d bytes of %d", ch, got[ch], gridBytes)
				}
				left--
				break
			}
		}
	}
	return nil
}
