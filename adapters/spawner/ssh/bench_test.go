package ssh_test

import (
	"context"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/shellgate/shellgate/adapters/spawner/contract"
	"github.com/shellgate/shellgate/adapters/spawner/pipe"
	"github.com/shellgate/shellgate/ports"
)

// firstByte starts `echo hi` on sp and returns how long the first byte of
// its output took from the Spawn call, then drains and releases it.
func firstByte(b *testing.B, sp ports.Spawner) time.Duration {
	b.Helper()
	start := time.Now()
	p, err := sp.Spawn(context.Background(), contract.ShellSpec(`echo hi`))
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 64)
	if _, err := p.Read(buf); err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	_, _ = io.Copy(io.Discard, p)
	p.Wait()
	_ = p.Close()
	return took
}

// BenchmarkFirstByteSSHAgainstLocal alternates a local pipe and a process
// over the shared SSH connection (sshd on loopback, so the figure is the
// protocol's and sshd's cost, not a network's), and reports both means
// and their ratio.
func BenchmarkFirstByteSSHAgainstLocal(b *testing.B) {
	local := pipe.New()
	var localSum, sshSum time.Duration
	firstByte(b, shared) // the connection is dialled once, not timed
	b.ResetTimer()
	for range b.N {
		localSum += firstByte(b, local)
		sshSum += firstByte(b, shared)
	}
	n := float64(b.N)
	b.ReportMetric(float64(localSum.Microseconds())/n/1000, "local-ms")
	b.ReportMetric(float64(sshSum.Microseconds())/n/1000, "ssh-ms")
	b.ReportMetric(float64(sshSum)/float64(localSum), "ssh/local")
}

// idleTerminals is how many idle processes BenchmarkIdleTerminalMemory
// keeps open at once on each spawner.
const idleTerminals = 100

// heapWith returns the Go heap in use while idleTerminals `cat`s started
// on sp wait for input, less the heap before them.
func heapWith(b *testing.B, sp ports.Spawner) float64 {
	b.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	procs := make([]ports.Process, 0, idleTerminals)
	for range idleTerminals {
		p, err := sp.Spawn(context.Background(), ports.SpawnSpec{Program: "cat", Env: contract.ShellEnv()})
		if err != nil {
			b.Fatal(err)
		}
		procs = append(procs, p)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	for _, p := range procs {
		_ = p.CloseInput()
	}
	for _, p := range procs {
		_, _ = io.Copy(io.Discard, p)
		p.Wait()
		_ = p.Close()
	}
	return float64(int64(after.HeapInuse) - int64(before.HeapInuse))
}

// BenchmarkIdleTerminalMemory measures the daemon-side heap each idle
// process costs, over SSH and on local pipes, side by side. (The remote
// process itself costs the remote machine what it would cost locally.)
func BenchmarkIdleTerminalMemory(b *testing.B) {
	local := pipe.New()
	var localSum, sshSum float64
	for range b.N {
		localSum += heapWith(b, local)
		sshSum += heapWith(b, shared)
	}
	n := float64(b.N) * idleTerminals
	b.ReportMetric(localSum/n/1024, "local-KiB/terminal")
	b.ReportMetric(sshSum/n/1024, "ssh-KiB/terminal")
}
