package terminals_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/clock"
	"github.com/shellgate/shellgate/adapters/spawner/fake"
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/terminal"
)

// flood is more output than a subscriber's bound in one go.
const (
	flowBytes  = 1 << 20
	highWater  = 64 << 10
	lowWater   = 16 << 10
	readBuf    = 4 << 10
	queueBound = 256 << 10 // a quarter of the flood
)

// floodHost is a host over the fake spawner whose "flood" program emits
// flowBytes of output at once, then exits 0; its hub has small marks.
func floodHost(t *testing.T) (*terminals.Host, *hub.Hub, *fake.Spawner) {
	t.Helper()
	return floodHostKeeping(t, 2*flowBytes)
}

// floodHostKeeping is floodHost with a scrollback of scrollback characters.
func floodHostKeeping(t *testing.T, scrollback int) (*terminals.Host, *hub.Hub, *fake.Spawner) {
	t.Helper()
	sp := fake.New()
	text := strings.Repeat("0123456789abcde\n", flowBytes/16)
	sp.Register("sh", func(p *fake.Process) terminal.ExitStatus {
		if p.Emit(text) != nil {
			return terminal.ExitedWith(1)
		}
		return terminal.ExitedWith(0)
	})
	h := hub.New(hub.Options{HighWater: highWater, LowWater: lowWater})
	host := terminals.New(terminals.Config{Shell: "/bin/sh", Dir: t.TempDir(), ReadBufferSize: readBuf, ScrollbackLimit: scrollback}, h, sp, clock.System())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		require.NoError(t, host.Stop(ctx))
	})
	return host, h, sp
}

func TestTerminalWhoseOnlySubscriberStopsReadingIsPausedNotDroppedAndResumes(t *testing.T) {
	host, h, sp := floodHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	// The subscriber is there before any output, so it must get all of it.
	s := h.NewSubscriber("slow", queueBound)
	defer h.Remove(s)
	term, err := host.Create(ctx, terminals.Spec{URI: "ahp-terminal:/flood", Command: "flood", Claim: terminal.ClientHolds("x")})
	require.NoError(t, err)
	subscribe(t, host, s, term.URI())
	proc, err := sp.Next(ctx)
	require.NoError(t, err)

	// Not reading: the host stops taking the process's output once the
	// subscriber holds the high-water mark.
	require.Eventually(t, func() bool { return h.Paused(term.URI()) }, waitFor, time.Millisecond)
	require.NoError(t, s.Err(), "paused, not dropped")
	require.LessOrEqual(t, h.Held(), int64(highWater+2*(readBuf+200)), "the pump stopped reading near the mark (the subscriber is the hub's only one)")
	require.Greater(t, proc.Unread(), flowBytes-queueBound, "the rest waits in the process's pipe")
	select {
	case <-term.Done():
		t.Fatal("the exit was announced before the output drained")
	default:
	}

	// Reading again: everything arrives, in order, and then the exit.
	got := readToExit(ctx, t, s, "the subscriber is never dropped")
	require.Equal(t, flowBytes, len(got))
	require.Equal(t, strings.Repeat("0123456789abcde\n", flowBytes/16), got)
	require.Equal(t, 0, exitOf(t, term).Code)
}

// A terminal paused for its only viewer goes on once a viewer that reads
// joins: nothing else would wake it, since the stalled one takes nothing
// and the waiting process writes nothing.
func TestPausedTerminalGoesOnOnceAViewerThatReadsJoins(t *testing.T) {
	host, h, _ := floodHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	stalled := h.NewSubscriber("stalled", queueBound)
	defer h.Remove(stalled)
	term, err := host.Create(ctx, terminals.Spec{URI: "ahp-terminal:/flood", Command: "flood", Claim: terminal.ClientHolds("x")})
	require.NoError(t, err)
	subscribe(t, host, stalled, term.URI())
	require.Eventually(t, func() bool { return h.Pauses() >= 1 }, waitFor, time.Millisecond,
		"the pump waits for its only viewer")

	reader := h.NewSubscriber("reader", 0)
	defer h.Remove(reader)
	subscribe(t, host, reader, term.URI())
	readToExit(ctx, t, reader, "the process went on, to its exit")
	require.Equal(t, 0, exitOf(t, term).Code)
	var slow *hub.SlowError
	require.ErrorAs(t, stalled.Err(), &slow, "the stalled viewer, left behind by a bound, was dropped")
}

func TestTerminalWithoutSubscribersKeepsDrainingIntoTheScrollback(t *testing.T) {
	host, _, sp := floodHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	term, err := host.Create(ctx, terminals.Spec{URI: "ahp-terminal:/alone", Command: "flood", Claim: terminal.ClientHolds("x")})
	require.NoError(t, err)
	st, err := term.Wait(ctx)
	require.NoError(t, err, "nobody watches, nothing waits")
	require.Equal(t, 0, st.Code)
	proc := sp.Processes()[0]
	require.Zero(t, proc.Unread())
	snap, err := host.Snapshot(term.URI())
	require.NoError(t, err)
	require.Len(t, terminal.Text(snap.Content), flowBytes, "all of it is in the scrollback")
}

// A terminal created to await its viewer reads nothing before its first
// subscriber, so that subscriber gets every byte, although the process
// wrote sixteen times the scrollback and exited before it came.
func TestTerminalAwaitingItsViewerHoldsItsOutputUntilTheFirstSubscribe(t *testing.T) {
	host, h, sp := floodHostKeeping(t, flowBytes/16)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	term, err := host.Create(ctx, terminals.Spec{URI: "ahp-terminal:/held", Command: "flood", Claim: terminal.ClientHolds("x"), AwaitViewer: true})
	require.NoError(t, err)
	proc, err := sp.Next(ctx)
	require.NoError(t, err)
	proc.Wait()
	require.Equal(t, flowBytes, proc.Unread(), "not a byte was read before anyone subscribed")

	s := h.NewSubscriber("late", 0)
	defer h.Remove(s)
	snap := subscribe(t, host, s, term.URI())
	got := terminal.Text(snap.Terminal.Content)
	require.Empty(t, got, "the snapshot is taken before the hold ends")
	out := readToExit(ctx, t, s, "the held output, then the exit")
	require.Equal(t, strings.Repeat("0123456789abcde\n", flowBytes/16), out)
	require.Equal(t, 0, exitOf(t, term).Code)
}

// Killing or disposing of a terminal that awaits its viewer ends the hold:
// its output drains and its exit is announced, though nobody subscribed.
func TestKillOrDisposeEndsTheWaitForAViewer(t *testing.T) {
	for _, end := range []string{"kill", "dispose"} {
		t.Run(end, func(t *testing.T) {
			host, _, sp := floodHost(t)
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			term, err := host.Create(ctx, terminals.Spec{URI: "ahp-terminal:/held", Command: "flood", Claim: terminal.ClientHolds("x"), AwaitViewer: true})
			require.NoError(t, err)
			proc, err := sp.Next(ctx)
			require.NoError(t, err)
			proc.Wait()
			if end == "kill" {
				_ = term.Kill() // the fake has exited already: only the hold matters
			} else {
				require.NoError(t, host.Dispose(term.URI()))
			}
			_, err = term.Wait(ctx)
			require.NoError(t, err, "the exit is announced")
			require.Zero(t, proc.Unread(), "the output was read to its end")
		})
	}
}

// readToExit reads s's events up to the terminal's exit and returns the
// output among them; an error on the way fails the test with what.
func readToExit(ctx context.Context, t *testing.T, s *hub.Subscriber, what string) string {
	t.Helper()
	var out strings.Builder
	for {
		batch, err := next(ctx, s)
		require.NoError(t, err, what)
		for _, ev := range batch {
			switch a := ev.Action.(type) {
			case terminal.Data:
				out.WriteString(a.Data)
			case terminal.Exited:
				return out.String()
			}
		}
	}
}
