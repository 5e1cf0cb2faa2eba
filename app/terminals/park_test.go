package terminals_test

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/terminal"
)

// A pump parks after this much quiet in these tests: short, so each test
// sees its terminals park; how long the machine takes to get there does
// not matter, the tests wait for it.
const quickPark = 5 * time.Millisecond

func waitParked(t *testing.T, host *terminals.Host, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return host.ParkedPumps() == n }, waitFor, time.Millisecond,
		"%d pumps parked, not %d", host.ParkedPumps(), n)
}

// An idle terminal's pump ends its goroutine, and output brings it back
// with nothing lost, on a pty and on pipes, as often as the terminal goes
// quiet.
func TestAQuietTerminalsPumpParksAndItsOutputWakesIt(t *testing.T) {
	for _, pty := range []bool{true, false} {
		t.Run(fmt.Sprintf("pty=%v", pty), func(t *testing.T) {
			f := newHost(t, terminals.Config{ParkAfter: quickPark}, nil)
			term := f.create(terminals.Spec{PTY: pty})
			w := f.watch(term.URI())
			for i := 1; i <= 3; i++ {
				waitParked(t, f.host, 1)
				require.NoError(t, f.host.Apply(terminals.Dispatch{URI: term.URI(), Action: terminal.Input{Data: fmt.Sprintf("echo woke$((%d*10))\n", i)}}))
				w.untilOutput(fmt.Sprintf("woke%d0", i))
			}
			waitParked(t, f.host, 1)
			require.NoError(t, f.host.Apply(terminals.Dispatch{URI: term.URI(), Action: terminal.Input{Data: "exit 3\n"}}))
			require.Equal(t, terminal.ExitedWith(3), exitOf(t, term))
			require.Equal(t, 0, f.host.ParkedPumps())
			w.until("the exit", func() bool { return len(w.exits()) == 1 })
		})
	}
}

func TestDisposingAParkedTerminalEndsIt(t *testing.T) {
	f := newHost(t, terminals.Config{ParkAfter: quickPark}, nil)
	a := f.create(terminals.Spec{PTY: true})
	b := f.create(terminals.Spec{})
	waitParked(t, f.host, 2)
	require.NoError(t, f.host.Dispose(a.URI()))
	exitOf(t, a)
	require.NoError(t, f.host.Dispose(b.URI()))
	exitOf(t, b)
	require.Equal(t, 0, f.host.ParkedPumps())
}

// With a parked pump, as without (input_test.go), an escaped process that
// holds the output open cannot keep Stop from returning once its time is
// up: closing the output wakes the pump.
func TestStopEndsAParkedPumpWhoseOutputAnEscapedProcessHolds(t *testing.T) {
	f := newHost(t, terminals.Config{StopGrace: 50 * time.Millisecond, ParkAfter: quickPark}, nil)
	pidFile := filepath.Join(t.TempDir(), "pid")
	term := f.create(terminals.Spec{Command: fmt.Sprintf(`setsid sh -c 'echo $$ > %s.tmp; mv %s.tmp %s; exec sleep 300' & wait`, pidFile, pidFile, pidFile)})
	escaped := readPid(t, pidFile)
	t.Cleanup(func() { _ = syscall.Kill(escaped, syscall.SIGKILL) })
	waitParked(t, f.host, 1)

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var err error
	within(t, "Stop with a parked pump", func() { err = f.host.Stop(ctx) })
	require.ErrorIs(t, err, context.DeadlineExceeded)
	<-term.Done()
	require.Equal(t, 0, f.host.ParkedPumps())
}

// A negative ParkAfter keeps every pump's goroutine, through a pause in
// the output longer than DefaultParkAfter (so a negative taken for the
// default would show too).
func TestNegativeParkAfterNeverParks(t *testing.T) {
	f := newHost(t, terminals.Config{ParkAfter: -1}, nil)
	term := f.create(terminals.Spec{PTY: true})
	w := f.watch(term.URI())
	require.NoError(t, f.host.Apply(terminals.Dispatch{URI: term.URI(), Action: terminal.Input{Data: "sleep 1.5; echo done$((1+1))\n"}}))
	w.untilOutput("done2")
	require.Zero(t, f.host.Parks(), "a pump parked")
	require.NoError(t, f.host.Apply(terminals.Dispatch{URI: term.URI(), Action: terminal.Input{Data: "exit\n"}}))
	exitOf(t, term)
}
