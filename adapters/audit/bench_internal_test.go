package audit

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// noSync measures what the fsync costs; the log itself never skips it.
type noSync struct{ *os.File }

func (noSync) Sync() error { return nil }

// BenchmarkRecord measures one record (a typical execute line) with and
// without the fsync that makes it durable. Set AUDIT_BENCH_DIR to measure
// the disk the daemon's data directory is on.
func BenchmarkRecord(b *testing.B) {
	dir := os.Getenv("AUDIT_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	e := ev
	e.SessionID, e.AgentID, e.AgentRole, e.Risk, e.Status = "550e8400-e29b-41d4-a716-446655440000", "chat_agent_1", "chat_agent", "safe", "success"
	e.Reasons = []string{"R1 read-only command"}
	for _, tc := range []struct {
		name string
		sync bool
	}{{"fsync", true}, {"no-fsync", false}} {
		b.Run(tc.name, func(b *testing.B) {
			path := filepath.Join(dir, "bench-"+tc.name+".log")
			l, err := Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer os.Remove(path)
			defer l.Close()
			if !tc.sync {
				l.f = noSync{l.f.(*os.File)}
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := l.Record(ctx, e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
