package screen_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/adapters/screen"
)

// BenchmarkIdleScreenMemory reports the heap one idle 80×24 screen model
// holds, with a prompt on it.
//
//	go test -run '^$' -bench IdleScreenMemory -benchtime 1x ./adapters/screen/
func BenchmarkIdleScreenMemory(b *testing.B) {
	const count = 200
	for b.Loop() {
		before := heapNow()
		screens := make([]*screen.Screen, count)
		for i := range screens {
			screens[i] = screen.NewScreen(80, 24)
			screens[i].Write("user@host:~/src/shellgate$ ")
		}
		after := heapNow()
		b.ReportMetric(float64(after-before)/count, "heap-B/screen")
		b.ReportMetric(0, "ns/op")
		for _, s := range screens {
			s.Close()
		}
		runtime.KeepAlive(screens)
	}
}

func heapNow() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkWrite feeds a screen model 1 MiB at a time: plain scrolling
// lines, and a full-screen program's repaints (no scrolling past the
// bottom), and reports MB/s. The profile of the first shows where the
// model's cost is (-cpuprofile).
//
//	go test -run '^$' -bench Write -benchtime 10x ./adapters/screen/
func BenchmarkWrite(b *testing.B) {
	plain := strings.Repeat("the quick brown fox jumps over the lazy dog 0123456789\r\n", 1<<20/56)
	var paint strings.Builder
	for i := 0; paint.Len() < 1<<20; i++ {
		for row := 1; row <= 24; row++ {
			fmt.Fprintf(&paint, "\x1b[%d;1H\x1b[38;5;%dm%4d \x1b[0mline %d of frame %d\x1b[K", row, 100+row, row, row, i)
		}
	}
	for _, kind := range []struct{ name, text string }{{"plain", plain}, {"repaint", paint.String()}} {
		b.Run(kind.name, func(b *testing.B) {
			s := screen.NewScreen(80, 24)
			defer s.Close()
			b.SetBytes(int64(len(kind.text)))
			for b.Loop() {
				s.Write(kind.text)
			}
		})
	}
}
