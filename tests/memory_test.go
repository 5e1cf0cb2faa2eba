package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/tests/ahpclient"
)

// rssKiB is a process's resident set, from /proc.
func rssKiB(t *testing.T, pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// TestClientsThatDoNotReadHoldNoMoreThanTheTotalCap is benchmark-style:
// it prints what the daemon held. Twenty viewers that never read, beside
// one that does, each could hold a whole bound (4 MiB, 80 MiB in all);
// max_client_memory (16 MiB) caps them together, shedding the one furthest
// behind first, and the reader gets everything.
func TestClientsThatDoNotReadHoldNoMoreThanTheTotalCap(t *testing.T) {
	const (
		bound = 4 << 20
		total = 16 << 20
		n     = 12 << 20
		idle  = 20
	)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, "client_queue_bytes: %d\nmax_client_memory: %d\n", bound, total), 0o600))
	d := startDaemon(t, "--config", cfg)
	ctx := ctxT(t)
	// The reader reads through the same small window as the others: what
	// the daemon sees of each is then its pace, not how much its kernel
	// takes in before it reads (an autotuned receive buffer grows to
	// megabytes, and a reader the test process has not scheduled yet
	// would look like one that stopped).
	reader := d.dial(t, ahpclient.DialOptions{HTTPClient: smallWindow()})
	_, _, err := reader.Initialize(ctx, "reader", nil, nil)
	require.NoError(t, err)
	// First a warm-up that the reader reads to its end and the others
	// do not: they start the flood already behind, under the high-water
	// mark and far under the cap, so that a reader this loaded machine
	// does not schedule for a while still counts as nearer than any of
	// them (the cap sheds by what arrived since each last held less than
	// the mark; without the warm-up, a reader that had read nothing yet
	// tied with the others, and the cap once picked it).
	const (
		channel = "ahp-terminal:/flood"
		warm    = 512 << 10
	)
	rpcErr, err := reader.CreateTerminal(ctx, ahpclient.CreateParams{Channel: channel, Meta: spawn(fmt.Sprintf(
		"read go; head -c %d /dev/zero | tr '\\0' w; echo; echo warm-done; read go; head -c %d /dev/zero | tr '\\0' x; echo; echo flood-done", warm, n), false)})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, _, err = reader.Subscribe(ctx, channel)
	require.NoError(t, err)
	for i := range idle {
		c := d.dial(t, ahpclient.DialOptions{HTTPClient: smallWindow()})
		_, _, err := c.Initialize(ctx, fmt.Sprintf("idle%d", i), nil, nil)
		require.NoError(t, err)
		_, _, err = c.Subscribe(ctx, channel)
		require.NoError(t, err)
		c.PauseReading()
	}
	_, err = reader.Dispatch(ctx, channel, ahpclient.InputAction("go\n"))
	require.NoError(t, err)
	_, err = reader.WaitOutput(ctx, channel, "warm-done")
	require.NoError(t, err)
	require.Zero(t, d.metric("shellgate_slow_clients_dropped_total"), "the warm-up sheds nobody")
	rssBefore := rssKiB(t, d.cmd.Process.Pid)

	// Sample what the daemon says it holds while the flood runs.
	var peak float64
	var sampling sync.WaitGroup
	stop := make(chan struct{})
	sampling.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				peak = max(peak, d.metric("shellgate_client_bytes_held"))
			}
		}
	})
	_, err = reader.Dispatch(ctx, channel, ahpclient.InputAction("go\n"))
	require.NoError(t, err)
	// Twelve MiB to twenty-one viewers under -race outlast the usual
	// patience on a loaded machine: the wait is longer (a deadline, not a
	// budget), as waitExited's is.
	flood, cancel := context.WithTimeout(context.Background(), 4*patience)
	defer cancel()
	text, err := reader.WaitOutput(flood, channel, "flood-done")
	close(stop)
	sampling.Wait()
	require.NoError(t, err)
	require.Equal(t, n, strings.Count(text, "x"), "the reader got everything")
	require.Len(t, text, n+len("\n\nflood-done"))
	rssAfter := rssKiB(t, d.cmd.Process.Pid)
	dropped := d.metric("shellgate_slow_clients_dropped_total")
	t.Logf("%d viewers that do not read and one that does, %d MiB flood: peak held %.1f MiB (cap %d MiB, %d × bound %d MiB = %d MiB uncapped), %v shed; daemon RSS %.1f → %.1f MiB, heap in use %.1f MiB",
		idle, n>>20, peak/(1<<20), total>>20, idle, bound>>20, idle*bound>>20, dropped,
		float64(rssBefore)/1024, float64(rssAfter)/1024, d.metric("go_memstats_heap_inuse_bytes")/(1<<20))
	require.LessOrEqual(t, peak, float64(total), "what every client holds together stays under max_client_memory")
	require.GreaterOrEqual(t, dropped, float64(1), "the cap was reached, so the ones furthest behind were shed")
	select {
	case <-reader.Closed():
		t.Fatal("the reading viewer was shed")
	default:
	}
}

// TestDepartedClientsKeepNothingButTheirCursor is benchmark-style: it
// prints the daemon's heap after many clients each took a large snapshot
// and left, within their reconnect grace.
func TestDepartedClientsKeepNothingButTheirCursor(t *testing.T) {
	const clients = 60
	d := startDaemon(t)
	ctx := ctxT(t)
	owner := d.dial(t, ahpclient.DialOptions{})
	_, _, err := owner.Initialize(ctx, "owner", nil, nil)
	require.NoError(t, err)
	// About 190 KB of scrollback: every snapshot of it is that big. The
	// output waits for the owner's go: written before it subscribed, it
	// would be in its snapshot alone, never in the output it waits on.
	rpcErr, err := owner.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/big", Meta: spawn("read go; head -c 190000 /dev/zero | tr '\\0' x; echo; echo big-done; read x", false)})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, _, err = owner.Subscribe(ctx, "ahp-terminal:/big")
	require.NoError(t, err)
	_, err = owner.Dispatch(ctx, "ahp-terminal:/big", ahpclient.InputAction("go\n"))
	require.NoError(t, err)
	_, err = owner.WaitOutput(ctx, "ahp-terminal:/big", "big-done")
	require.NoError(t, err)
	heapBefore := d.metric("go_memstats_heap_inuse_bytes")
	for i := range clients {
		// Each client's steps have their own deadline: sixty snapshots of
		// 190 KB under -race, beside other tests, outlast one patience.
		ctx := ctxT(t)
		c := d.dial(t, ahpclient.DialOptions{})
		_, _, err := c.Initialize(ctx, fmt.Sprintf("visitor%d", i), nil, nil)
		require.NoError(t, err)
		snap, rpcErr, err := c.Subscribe(ctx, "ahp-terminal:/big")
		require.NoError(t, err)
		require.Nil(t, rpcErr)
		state, err := snap.Terminal()
		require.NoError(t, err)
		require.Contains(t, state.Text(), "big-done")
		require.NoError(t, c.Close())
	}
	require.Eventually(t, func() bool { return d.metric("shellgate_connections") == 1 }, patience, 10*time.Millisecond)
	heapAfter := d.metric("go_memstats_heap_inuse_bytes")
	t.Logf("%d clients each took a 190 KB snapshot and left: heap in use %.1f → %.1f MiB (%.1f KiB per departed client, garbage not yet collected included), RSS %.1f MiB, %v bytes held for clients",
		clients, heapBefore/(1<<20), heapAfter/(1<<20), (heapAfter-heapBefore)/1024/clients, float64(rssKiB(t, d.cmd.Process.Pid))/1024, d.metric("shellgate_client_bytes_held"))
	require.Zero(t, d.metric("shellgate_client_bytes_held"), "nothing is held for a client that left")
}
