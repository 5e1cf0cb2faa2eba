package terminals_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/shellgate/shellgate/adapters/clock"
	"github.com/shellgate/shellgate/adapters/spawner/local"
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

// floodBytes is how much each throughput run moves.
const floodBytes = 64 << 20

// flood prints floodBytes of printable text as fast as the child can.
var flood = fmt.Sprintf("yes 'the quick brown fox jumps over the lazy dog 0123456789' | head -c %d", floodBytes)

// BenchmarkThroughput moves the same flood through a plain read loop and
// through the host to one subscriber, on pipes and on a pty, and reports
// both rates and their ratio (host/plain) side by side.
//
//	go test -run '^$' -bench Throughput -benchtime 3x ./app/terminals/
func BenchmarkThroughput(b *testing.B) {
	for _, mode := range []struct {
		name           string
		pty, passMarks bool
	}{{"pipe", false, false}, {"pty", true, false}} {
		pty := mode.pty
		b.Run(mode.name, func(b *testing.B) {
			var plain, host time.Duration
			for b.Loop() {
				plain += plainReadLoop(b, pty)
				host += throughHost(b, pty, mode.passMarks)
			}
			mb := float64(floodBytes) * float64(b.N) / 1e6
			b.ReportMetric(mb/plain.Seconds(), "plain-MB/s")
			b.ReportMetric(mb/host.Seconds(), "host-MB/s")
			b.ReportMetric(plain.Seconds()/host.Seconds(), "host/plain")
			b.ReportMetric(0, "ns/op")
		})
	}
}

func floodSpec(pty bool) ports.SpawnSpec {
	return ports.SpawnSpec{Program: "/bin/sh", Args: []string{"-c", flood}, PTY: pty, Env: []string{"PATH=" + os.Getenv("PATH"), "TERM=dumb"}, Cols: 80, Rows: 24}
}

func plainReadLoop(b *testing.B, pty bool) time.Duration {
	start := time.Now()
	p, err := local.New().Spawn(context.Background(), floodSpec(pty))
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, terminals.DefaultReadBufferSize)
	n := 0
	for {
		k, err := p.Read(buf)
		n += k
		if err == io.EOF {
			break
		} else if err != nil {
			b.Fatal(err)
		}
	}
	p.Wait()
	_ = p.Close()
	elapsed := time.Since(start)
	if n < floodBytes {
		b.Fatalf("plain loop read %d of %d bytes", n, floodBytes)
	}
	return elapsed
}

func throughHost(b *testing.B, pty, passMarks bool) time.Duration {
	cfg := terminals.Config{Shell: "/bin/sh", Env: []string{"PATH=" + os.Getenv("PATH")}, PassMarks: passMarks}
	return floodThroughHost(b, cfg, pty, flood, floodBytes).wall
}

// BenchmarkTitleWatchCost floods a pty terminal with plain output through
// the host with process titles (OSC 0/2) watched, and with watching off,
// taking turns, and reports how much longer watching takes.
//
//	go test -run '^$' -bench TitleWatchCost -benchtime 10x ./app/terminals/
func BenchmarkTitleWatchCost(b *testing.B) {
	var watched, unwatched time.Duration
	for b.Loop() {
		watched += throughHost(b, true, false)
		terminals.SetTitlesOff(true)
		unwatched += throughHost(b, true, false)
		terminals.SetTitlesOff(false)
	}
	mb := float64(floodBytes) * float64(b.N) / 1e6
	b.ReportMetric(mb/watched.Seconds(), "titles-watched-MB/s")
	b.ReportMetric(mb/unwatched.Seconds(), "titles-off-MB/s")
	b.ReportMetric(watched.Seconds()/unwatched.Seconds(), "watched/off")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkIdleTerminalMemory opens idle terminals (a shell waiting on its
// pipe) and reports the heap and goroutine stack the daemon holds for each,
// excluding the child processes.
//
//	go test -run '^$' -bench IdleTerminalMemory -benchtime 1x ./app/terminals/
func BenchmarkIdleTerminalMemory(b *testing.B) {
	const count = 200
	for b.Loop() {
		h := hub.New(hub.Options{})
		host := terminals.New(terminals.Config{Shell: "/bin/sh", Env: []string{"PATH=" + os.Getenv("PATH")}}, h, local.New(), clock.System())
		before := memNow()
		for i := 0; i < count; i++ {
			if _, err := host.Create(context.Background(), terminals.Spec{URI: fmt.Sprintf("ahp-terminal:/idle%d", i), Claim: terminal.ClientHolds("b")}); err != nil {
				b.Fatal(err)
			}
		}
		after := memNow()
		b.ReportMetric(float64(after.heap-before.heap)/count, "heap-B/terminal")
		b.ReportMetric(float64(after.stack-before.stack)/count, "stack-B/terminal")
		b.ReportMetric(0, "ns/op")
		if err := host.Stop(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

type mem struct{ heap, stack uint64 }

func memNow() mem {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return mem{heap: m.HeapAlloc, stack: m.StackInuse}
}

// BenchmarkMarkReaderCost floods a pty terminal with plain output through
// the host with shell-integration marks read, and with them passed through
// as output, taking turns, and reports how much longer reading them takes.
//
//	go test -run '^$' -bench MarkReaderCost -benchtime 10x ./app/terminals/
func BenchmarkMarkReaderCost(b *testing.B) {
	var read, passed time.Duration
	for b.Loop() {
		read += throughHost(b, true, false)
		passed += throughHost(b, true, true)
	}
	mb := float64(floodBytes) * float64(b.N) / 1e6
	b.ReportMetric(mb/read.Seconds(), "marks-read-MB/s")
	b.ReportMetric(mb/passed.Seconds(), "marks-passed-MB/s")
	b.ReportMetric(read.Seconds()/passed.Seconds(), "read/passed")
	b.ReportMetric(0, "ns/op")
}
