package ahp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
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

// fanoutBytes is what one flood prints: four times a viewer's bound, so
// a stalled viewer is a whole bound behind long before the end.
const (
	fanoutBytes = 32 << 20
	fanoutBound = 8 << 20
)

// BenchmarkFanOut floods one terminal (a real process on pipes) to 1, 10
// and 50 viewers that read, plus one that never reads, over in-process
// connections. It reports the output delivered to all readers per second
// and the daemon's CPU (this process's, readers included, though they only
// scan) per MB the process printed, beside the same flood read straight
// from the process's pipe (MB/s-plain) and each viewer's rate as a ratio of
// it. Every reader must get every byte and
// stay open; the stalled viewer must be closed for falling behind: the
// benchmark fails otherwise.
func BenchmarkFanOut(b *testing.B) {
	for _, viewers := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("viewers=%d+1stalled", viewers), func(b *testing.B) { benchFanOut(b, viewers) })
	}
}

func benchFanOut(b *testing.B, viewers int) {
	h := hub.New(hub.Options{})
	host := terminals.New(terminals.Config{Shell: "/bin/sh", Env: []string{"PATH=" + os.Getenv("PATH")}, Dir: b.TempDir(), ScrollbackLimit: 1000}, h, local.New(), clock.System())
	srv := ahp.NewServer(terminals.NewApp(host, gate.AllowAll()), clock.System(), slog.New(slog.NewTextHandler(io.Discard, nil)), ahp.Options{QueueBytes: fanoutBound})
	var served sync.WaitGroup
	dial := func(buffer int) ports.Conn {
		server, cl := memory.PipeBuffer(ports.Peer{}, buffer)
		served.Go(func() { srv.Serve(context.Background(), server) })
		return cl
	}
	defer func() {
		srv.Close("done")
		served.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = host.Stop(ctx)
	}()
	readers := make([]*rawConn, viewers)
	for i := range readers {
		readers[i] = &rawConn{b: b, c: dial(memory.DefaultBuffer)}
		readers[i].call(`"initialize","params":{"protocolVersions":["1.0.0"],"clientId":"r%d"}`, i)
	}
	var cpu0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &cpu0)
	var elapsed time.Duration
	iter := 0
	for b.Loop() {
		b.StopTimer()
		iter++
		channel := fmt.Sprintf("ahp-terminal:/flood%d", iter)
		readers[0].call(`"createTerminal","params":{"channel":%q,"_meta":{"shellgate/spawn":{"command":"read go; head -c %d /dev/zero | tr '\\0' x"}}}`, channel, fanoutBytes)
		for _, r := range readers {
			r.call(`"subscribe","params":{"channel":%q}`, channel)
		}
		// Its socket takes nothing: every write to it waits.
		stalled := &rawConn{b: b, c: dial(0)}
		stalled.call(`"initialize","params":{"protocolVersions":["1.0.0"],"clientId":"stalled%d"}`, iter)
		stalled.call(`"subscribe","params":{"channel":%q}`, channel)
		b.StartTimer()

		start := time.Now()
		readers[0].write(`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":%q,"clientSeq":1,"action":{"type":"terminal/input","data":"go\n"}}}`, channel)
		var wg sync.WaitGroup
		errs := make([]error, viewers)
		for i, r := range readers {
			wg.Go(func() { errs[i] = r.readFlood(channel) })
		}
		wg.Wait()
		elapsed += time.Since(start)
		if err := errors.Join(errs...); err != nil {
			b.Fatal("a reading viewer did not get everything: ", err)
		}
		b.StopTimer()
		if err := stalled.closedBehind(); err != nil {
			b.Fatal(err)
		}
		readers[0].call(`"disposeTerminal","params":{"channel":%q}`, channel)
		b.StartTimer()
	}
	var cpu1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &cpu1)
	mb := float64(iter) * fanoutBytes / 1e6
	cpu := time.Duration(cpu1.Utime.Nano() + cpu1.Stime.Nano() - cpu0.Utime.Nano() - cpu0.Stime.Nano())
	perViewer := mb / elapsed.Seconds()
	b.ReportMetric(perViewer*float64(viewers), "MB/s-delivered")
	b.ReportMetric(float64(cpu.Milliseconds())/mb, "cpu-ms/MB")
	plain := plainFlood(b)
	b.ReportMetric(plain, "MB/s-plain")
	b.ReportMetric(perViewer/plain, "x-plain-per-viewer")
}

// plainFlood is the baseline: the same flood read straight from the
// process's pipe, no server, in MB/s.
func plainFlood(b *testing.B) float64 {
	cmd := exec.Command("/bin/sh", "-c", fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x", fanoutBytes))
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 8<<10)
	n := 0
	for {
		k, err := out.Read(buf)
		n += k
		if err != nil {
			break
		}
	}
	if err := cmd.Wait(); err != nil || n != fanoutBytes {
		b.Fatalf("plain flood: %d bytes, %v", n, err)
	}
	return float64(n) / 1e6 / time.Since(start).Seconds()
}

// rawConn is a client that writes frames and scans what it reads without
// decoding it, so the benchmark measures the server.
type rawConn struct {
	b  *testing.B
	c  ports.Conn
	id int
}

func (r *rawConn) write(format string, args ...any) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.c.Write(ctx, fmt.Appendf(nil, format, args...)); err != nil {
		r.b.Fatal(err)
	}
}

// call sends a request (method and params, as JSON fragments) and reads
// until its answer; an error answer fails the benchmark.
func (r *rawConn) call(methodAndParams string, args ...any) {
	r.id++
	r.write(`{"jsonrpc":"2.0","id":%d,"method":`+methodAndParams+`}`, append([]any{r.id}, args...)...)
	want := fmt.Appendf(nil, `"id":%d,`, r.id)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		msg, err := r.c.Read(ctx)
		if err != nil {
			r.b.Fatal(err)
		}
		if bytes.Contains(msg, want) && !bytes.Contains(msg, []byte(`"method"`)) {
			if bytes.Contains(msg, []byte(`"error"`)) {
				r.b.Fatalf("%s: %s", methodAndParams, msg)
			}
			return
		}
	}
}

// readFlood reads channel's output until its exit and checks it got all
// fanoutBytes of it.
func (r *rawConn) readFlood(channel string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	head := fmt.Appendf(nil, `"channel":%q,"action":{"type":"terminal/data","data":"`, channel)
	tail := []byte(`"},"serverSeq":`)
	got := 0
	for {
		msg, err := r.c.Read(ctx)
		if err != nil {
			return fmt.Errorf("after %d bytes: %w", got, err)
		}
		if i := bytes.Index(msg, head); i >= 0 {
			got += bytes.LastIndex(msg, tail) - i - len(head)
			continue
		}
		if bytes.Contains(msg, []byte(`"terminal/exited"`)) {
			if got != fanoutBytes {
				return fmt.Errorf("got %d bytes of %d", got, fanoutBytes)
			}
			return nil
		}
	}
}

// closedBehind reads the stalled viewer to its end and checks it was
// closed for falling behind.
func (r *rawConn) closedBehind() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		_, err := r.c.Read(ctx)
		if err == nil {
			continue
		}
		var ce *ports.CloseError
		if errors.As(err, &ce) && ce.Code == ports.ClosePolicy && bytes.Contains([]byte(ce.Reason), []byte("behind")) {
			return nil
		}
		return fmt.Errorf("the stalled viewer ended otherwise: %w", err)
	}
}
