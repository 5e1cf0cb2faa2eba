package terminals_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shellgate/shellgate/adapters/clock"
	"github.com/shellgate/shellgate/adapters/fdlimit"
	"github.com/shellgate/shellgate/adapters/spawner/local"
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/terminal"
)

// BenchmarkOpenFileCheckCost starts and ends the same short terminal on a
// host without the open-file check and on one with it, taking turns, while
// 100 idle terminals hold open files (so /proc/self/fd has something to
// count), and reports both and their ratio (with/without) side by side,
// and what one count costs alone.
//
//	go test -run '^$' -bench OpenFileCheckCost -benchtime 200x ./app/terminals/
func BenchmarkOpenFileCheckCost(b *testing.B) {
	newBenchHost := func(cfg terminals.Config) *terminals.Host {
		cfg.Dir, cfg.Shell = b.TempDir(), "/bin/sh"
		h := terminals.New(cfg, hub.New(hub.Options{}), local.New(), clock.System())
		b.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = h.Stop(ctx)
		})
		return h
	}
	without := newBenchHost(terminals.Config{})
	with := newBenchHost(terminals.Config{Descriptors: fdlimit.New(), DescriptorReserve: 64})
	for i := range 100 {
		if _, err := without.Create(context.Background(), terminals.Spec{URI: fmt.Sprintf("ahp-terminal:/idle-%d", i), Claim: terminal.ClientHolds("b"), Command: "read x"}); err != nil {
			b.Fatal(err)
		}
	}
	run := func(h *terminals.Host, n int) time.Duration {
		start := time.Now()
		t, err := h.Create(context.Background(), terminals.Spec{URI: fmt.Sprintf("ahp-terminal:/run-%d", n), Claim: terminal.ClientHolds("b"), Command: "true"})
		if err != nil {
			b.Fatal(err)
		}
		<-t.Done()
		if err := h.Dispose(t.URI()); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var plain, checked time.Duration
	n := 0
	for b.Loop() {
		n++
		plain += run(without, n)
		checked += run(with, n)
	}
	start := time.Now()
	for range 1000 {
		if _, _, err := fdlimit.New().Free(); err != nil {
			b.Fatal(err)
		}
	}
	count := time.Since(start) / 1000
	b.ReportMetric(float64(plain.Microseconds())/float64(n), "without-µs/start")
	b.ReportMetric(float64(checked.Microseconds())/float64(n), "with-µs/start")
	b.ReportMetric(checked.Seconds()/plain.Seconds(), "with/without")
	b.ReportMetric(float64(count.Nanoseconds())/1e3, "µs/count")
	b.ReportMetric(0, "ns/op")
}
