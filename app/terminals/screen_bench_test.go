package terminals_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shellgate/shellgate/adapters/clock"
	"github.com/shellgate/shellgate/adapters/screen"
	"github.com/shellgate/shellgate/adapters/spawner/local"
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

// screenFloodBytes is how much each run of the screen-model benchmark moves.
const screenFloodBytes = 32 << 20

// fullScreenFrame is one repaint of an 80×24 full-screen program, the way
// vim or htop paint: per row a cursor move, colours, text, erase to end of
// line; a status line in reverse video; a scroll region and a scroll; the
// cursor hidden while painting.
func fullScreenFrame(n int) string {
	var b strings.Builder
	b.WriteString("\x1b[?25l\x1b[1;23r")
	for row := 1; row <= 23; row++ {
		fmt.Fprintf(&b, "\x1b[%d;1H\x1b[38;5;%dm%4d \x1b[0m\x1b[1;34mfunc\x1b[0m main%d() { \x1b[32m\"frame %d\"\x1b[0m }\x1b[K", row, 100+row, row, row, n)
	}
	b.WriteString("\x1b[23;1H\n\x1b[r")
	fmt.Fprintf(&b, "\x1b[24;1H\x1b[7m -- frame %d --  CPU[|||||||     45.2%%]  Mem[||||    1.2G/8G] \x1b[0m\x1b[K\x1b[12;20H\x1b[?25h", n)
	return b.String()
}

// writeScreenFlood writes screenFloodBytes of repaints to a file, for the
// child to print. It enters the alternate screen first, as full-screen
// programs do, which is where the host starts a screen model.
func writeScreenFlood(b *testing.B) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "screen-flood")
	var buf strings.Builder
	buf.WriteString("\x1b[?1049h")
	for i := 0; buf.Len() < screenFloodBytes; i++ {
		buf.WriteString(fullScreenFrame(i))
	}
	if err := os.WriteFile(path, []byte(buf.String()[:screenFloodBytes]), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkScreenModelCost floods a pty terminal through the host without
// and with the screen model, taking turns, with plain text and with a
// full-screen program's repaints, and reports the host's CPU time per MB
// (this process only: the child printing the flood is not counted) and
// the ratio with/without.
//
//	go test -run '^$' -bench ScreenModelCost -benchtime 5x ./app/terminals/
func BenchmarkScreenModelCost(b *testing.B) {
	path := writeScreenFlood(b)
	for _, kind := range []struct {
		name, command string
		bytes         int
	}{
		{"plain", fmt.Sprintf("yes 'the quick brown fox jumps over the lazy dog 0123456789' | head -c %d", screenFloodBytes), screenFloodBytes},
		{"full-screen", "cat " + path, screenFloodBytes},
	} {
		b.Run(kind.name, func(b *testing.B) {
			var without, with cost
			for b.Loop() {
				without = without.add(floodCost(b, kind.command, kind.bytes, nil))
				with = with.add(floodCost(b, kind.command, kind.bytes, screen.New()))
			}
			mb := float64(kind.bytes) * float64(b.N) / 1e6
			b.ReportMetric(without.cpu.Seconds()*1e3/mb, "without-cpu-ms/MB")
			b.ReportMetric(with.cpu.Seconds()*1e3/mb, "with-cpu-ms/MB")
			b.ReportMetric(with.cpu.Seconds()/without.cpu.Seconds(), "cpu-with/without")
			b.ReportMetric(mb/without.wall.Seconds(), "without-MB/s")
			b.ReportMetric(mb/with.wall.Seconds(), "with-MB/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

type cost struct{ wall, cpu time.Duration }

func (c cost) add(d cost) cost { return cost{c.wall + d.wall, c.cpu + d.cpu} }

func cpuNow(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// floodCost runs command in a pty terminal of a host with screens, read
// by one subscriber, and returns how long that took and the CPU this
// process spent.
func floodCost(b *testing.B, command string, want int, screens ports.Screens) cost {
	cfg := terminals.Config{Shell: "/bin/sh", Env: []string{"PATH=" + os.Getenv("PATH")}, Screens: screens}
	return floodThroughHost(b, cfg, true, command, want)
}

// floodThroughHost runs command in a terminal of a host set up with cfg,
// read by one subscriber until it exits, and returns how long that took and
// the CPU this process spent; it fails unless want bytes arrived.
func floodThroughHost(b *testing.B, cfg terminals.Config, pty bool, command string, want int) cost {
	h := hub.New(hub.Options{})
	host := terminals.New(cfg, h, local.New(), clock.System())
	sub := hub.NewSubscriber("bench", 1<<30)
	uri := "ahp-terminal:/bench"
	ctx := context.Background()
	startCPU, start := cpuNow(b), time.Now()
	if _, err := host.Create(ctx, terminals.Spec{URI: uri, PTY: pty, Command: command, Claim: terminal.ClientHolds("bench")}); err != nil {
		b.Fatal(err)
	}
	snap := subscribe(b, host, sub, uri).Terminal
	n := len(terminal.Text(snap.Content))
	for done := snap.Lifecycle.IsExited(); !done; {
		batch, err := next(ctx, sub)
		if err != nil {
			b.Fatal(err)
		}
		for _, ev := range batch {
			switch a := ev.Action.(type) {
			case terminal.Data:
				n += len(a.Data)
			case terminal.Exited:
				done = true
			}
		}
	}
	c := cost{wall: time.Since(start), cpu: cpuNow(b) - startCPU}
	h.Remove(sub)
	if err := host.Stop(ctx); err != nil {
		b.Fatal(err)
	}
	if n < want {
		b.Fatalf("subscriber received %d of %d bytes", n, want)
	}
	return c
}

// BenchmarkIdlePtyTerminalMemory opens idle 80×24 pty terminals without
// and with the screen model and reports the heap (and RSS) the daemon
// holds for each: a shell at its prompt, on the main screen, where the
// host keeps no model; and a full-screen program that entered the
// alternate screen, drew a screen and waits, where it keeps one. The
// difference is what the model costs.
//
//	go test -run '^$' -bench IdlePtyTerminalMemory -benchtime 1x ./app/terminals/
func BenchmarkIdlePtyTerminalMemory(b *testing.B) {
	const count = 100
	heapPer := func(screens ports.Screens, command string) (float64, float64) {
		h := hub.New(hub.Options{})
		host := terminals.New(terminals.Config{Shell: "/bin/sh", Env: []string{"PATH=" + os.Getenv("PATH"), "PS1=$ "}, Screens: screens}, h, local.New(), clock.System())
		defer func() {
			if err := host.Stop(context.Background()); err != nil {
				b.Fatal(err)
			}
		}()
		before, rssBefore := memNow(), rssNow(b)
		for i := 0; i < count; i++ {
			if _, err := host.Create(context.Background(), terminals.Spec{URI: fmt.Sprintf("ahp-terminal:/idle%d", i), PTY: true, Command: command, Claim: terminal.ClientHolds("b")}); err != nil {
				b.Fatal(err)
			}
		}
		// Each prints its prompt or its screen once: wait for every one's
		// "$ " on one subscriber, gone again before the heap is read.
		sub := hub.NewSubscriber("settle", 1<<30)
		text := map[string]string{}
		var uris []string
		for i := 0; i < count; i++ {
			uris = append(uris, fmt.Sprintf("ahp-terminal:/idle%d", i))
		}
		host.SubscribeAll(sub, uris, func(snaps []terminals.ChannelSnapshot, _ uint64) {
			for _, s := range snaps {
				text[s.URI] = terminal.Text(s.Terminal.Content)
			}
		})
		ready := func() bool {
			for _, uri := range uris {
				if !strings.HasSuffix(text[uri], "$ ") {
					return false
				}
			}
			return true
		}
		for !ready() {
			batch, err := next(context.Background(), sub)
			if err != nil {
				b.Fatal(err)
			}
			for _, ev := range batch {
				if d, ok := ev.Action.(terminal.Data); ok {
					text[ev.Channel] += d.Data
				}
			}
		}
		h.Remove(sub)
		after, rssAfter := memNow(), rssNow(b)
		return float64(after.heap-before.heap) / count, float64(rssAfter-rssBefore) / count
	}
	// A full-screen program: enters the alternate screen, draws a screen
	// of text with a status line ending in "$ ", and waits.
	fullScreen := `printf '\033[?1049h\033[H\033[2J'; i=1; while [ $i -le 23 ]; do printf '\033[%d;1H%4d line of a full-screen program' $i $i; i=$((i+1)); done; printf '\033[24;1H\033[7m status \033[0m$ '; read x`
	for b.Loop() {
		for _, kind := range []struct{ name, command string }{{"shell", ""}, {"full-screen", fullScreen}} {
			without, rssWithout := heapPer(nil, kind.command)
			with, rssWith := heapPer(screen.New(), kind.command)
			b.ReportMetric(without, kind.name+"-without-heap-B/terminal")
			b.ReportMetric(with, kind.name+"-with-heap-B/terminal")
			b.ReportMetric(with-without, kind.name+"-model-heap-B/terminal")
			b.ReportMetric(rssWithout, kind.name+"-without-rss-B/terminal")
			b.ReportMetric(rssWith, kind.name+"-with-rss-B/terminal")
		}
		b.ReportMetric(0, "ns/op")
	}
}

// rssNow is this process's resident set, from /proc.
func rssNow(b *testing.B) int64 {
	raw, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		b.Fatal(err)
	}
	var size, resident int64
	if _, err := fmt.Sscan(string(raw), &size, &resident); err != nil {
		b.Fatal(err)
	}
	return resident * int64(os.Getpagesize())
}
