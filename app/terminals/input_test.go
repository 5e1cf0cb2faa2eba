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

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/terminal"
)

// within runs f and fails the test if it has not returned by the deadline.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(waitFor):
		t.Fatalf("%s did not return within %v", what, waitFor)
	}
}

func TestInputToAProcessThatDoesNotReadNeverHoldsUpTheCaller(t *testing.T) {
	for _, pty := range []bool{false, true} {
		t.Run(fmt.Sprintf("pty=%v", pty), func(t *testing.T) {
			f := newHost(t, terminals.Config{}, nil)
			// Raw mode: in canonical mode a pty's line discipline drops what
			// overflows a line and never makes the writer wait.
			stuck := f.create(terminals.Spec{Command: "stty raw -echo 2>/dev/null; echo started; exec sleep 100", PTY: pty})
			f.watch(stuck.URI()).untilOutput("started")

			chunk := strings.Repeat("x", 64<<10)
			taken := 0
			var refused error
			within(t, "input to a process that does not read", func() {
				for refused == nil && taken < 4*terminals.MaxPendingInput {
					refused = f.host.Apply(terminals.Dispatch{URI: stuck.URI(), Action: terminal.Input{Data: chunk}})
					if refused == nil {
						taken += len(chunk)
					}
				}
			})
			require.ErrorIs(t, refused, terminals.ErrInputBacklog)
			require.Contains(t, refused.Error(), "bytes are waiting")
			require.GreaterOrEqual(t, taken, terminals.MaxPendingInput, "a backlog is refused only beyond the bound")

			// Another terminal of the same host takes input and answers meanwhile.
			other := f.create(terminals.Spec{Command: "exec cat", PTY: pty})
			w := f.watch(other.URI())
			within(t, "input to another terminal", func() {
				require.NoError(t, f.host.Apply(terminals.Dispatch{URI: other.URI(), Action: terminal.Input{Data: "still here\n"}}))
			})
			w.untilOutput("still here")

			// Disposing the stuck terminal ends its waiting write; the
			// host's cleanup and TestMain's leak check see it through.
			require.NoError(t, f.host.Dispose(stuck.URI()))
			require.NoError(t, f.host.Dispose(other.URI()))
		})
	}
}

func TestInputThatWaitsIsDeliveredWholeAndInOrder(t *testing.T) {
	dir := t.TempDir()
	f := newHost(t, terminals.Config{Dir: dir}, nil)
	gate := filepath.Join(dir, "gate")
	require.NoError(t, syscall.Mkfifo(gate, 0o600))
	// The process reads nothing until the test opens the gate, then copies
	// its input to its output.
	term := f.create(terminals.Spec{Command: "echo started; cat gate >/dev/null; exec cat"})
	w := f.watch(term.URI())
	w.untilOutput("started")

	var sent strings.Builder
	within(t, "input while the process reads nothing", func() {
		for i := range 8000 { // about 8 pipe buffers' worth
			line := fmt.Sprintf("line %05d of the input that waits\n", i)
			sent.WriteString(line)
			require.NoError(t, f.host.Apply(terminals.Dispatch{URI: term.URI(), Action: terminal.Input{Data: line}}))
		}
	})

	within(t, "opening the gate", func() {
		g, err := os.OpenFile(gate, os.O_WRONLY, 0)
		require.NoError(t, err)
		require.NoError(t, g.Close())
	})
	w.untilOutput("line 07999 of the input that waits\n")
	require.Equal(t, "started\n"+sent.String(), w.text.String())
	require.NoError(t, f.host.Dispose(term.URI()))
}

// A process that leaves its group (setsid) and keeps the output open cannot
// be signalled with it: when the caller's time is up, Stop still returns,
// with every pump ended, instead of waiting for an output that never ends.
func TestStopReturnsWhenItsTimeIsUpEvenIfAnEscapedProcessHoldsTheOutput(t *testing.T) {
	f := newHost(t, terminals.Config{StopGrace: 50 * time.Millisecond}, nil)
	pidFile := filepath.Join(t.TempDir(), "pid")
	// The pid is written by the process once it has left the group: the
	// parent's $! could be read (and the group signalled) before setsid
	// ran, and then the process would not have escaped at all.
	term := f.create(terminals.Spec{Command: fmt.Sprintf("setsid sh -c 'echo $$ > %s.tmp; mv %s.tmp %s; exec sleep 300' & wait", pidFile, pidFile, pidFile)})
	escaped := readPid(t, pidFile)
	t.Cleanup(func() { _ = syscall.Kill(escaped, syscall.SIGKILL) })

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var err error
	within(t, "Stop with an escaped process holding the output", func() { err = f.host.Stop(ctx) })
	require.ErrorIs(t, err, context.DeadlineExceeded)
	select {
	case <-term.Done():
	default:
		t.Fatal("the terminal's exit was not announced")
	}
}

func TestNoInputGivesTheProcessEndOfInputAtOnce(t *testing.T) {
	f := newHost(t, terminals.Config{}, nil)
	term := f.create(terminals.Spec{Command: "cat; read answer || echo no-answer", NoInput: true})
	w := f.watch(term.URI())
	w.untilOutput("no-answer")
	require.Equal(t, terminal.ExitedWith(0), exitOf(t, term))
	require.NoError(t, f.host.Apply(terminals.Dispatch{URI: term.URI(), Action: terminal.Input{Data: "late\n"}}), "input after the end is dropped")
}
