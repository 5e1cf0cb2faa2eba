package terminals_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/clock"
	"github.com/shellgate/shellgate/adapters/spawner/fake"
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

// tap collects what OnOutput is given, per stream and in arrival order.
type tap struct {
	mu     sync.Mutex
	byName map[terminals.Stream]*strings.Builder
	order  []terminals.Stream
}

func newTap() *tap {
	return &tap{byName: map[terminals.Stream]*strings.Builder{
		terminals.Stdout: {}, terminals.Stderr: {},
	}}
}

func (c *tap) on(stream terminals.Stream, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byName[stream].Write(data)
	c.order = append(c.order, stream)
}

func (c *tap) text(stream terminals.Stream) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byName[stream].String()
}

func TestOutputTapOnPipesKeepsStdoutAndStderrApartWhileTheScrollbackHasBoth(t *testing.T) {
	f := newHost(t, terminals.Config{}, nil)
	c := newTap()
	term := f.create(terminals.Spec{Command: "echo out; echo err >&2; echo more", OnOutput: c.on})

	require.Equal(t, 0, exitOf(t, term).Code)
	require.Equal(t, "out\nmore\n", c.text(terminals.Stdout), "every tap call returned before Done")
	require.Equal(t, "err\n", c.text(terminals.Stderr))
	w := f.watch(term.URI())
	for _, line := range []string{"out\n", "err\n", "more\n"} {
		require.Contains(t, w.text.String(), line, "viewers see both streams")
	}
	require.Len(t, w.text.String(), len("out\nerr\nmore\n"))
}

func TestWithoutATapStderrStaysMergedIntoTheOneStream(t *testing.T) {
	f := newHost(t, terminals.Config{}, nil)
	term := f.create(terminals.Spec{Command: "echo out; echo err >&2; echo more"})
	require.Equal(t, 0, exitOf(t, term).Code)
	w := f.watch(term.URI())
	require.Equal(t, "out\nerr\nmore\n", w.text.String(), "one pipe keeps the order exactly")
}

func TestOutputTapUnderAPtyGetsEverythingAsStdout(t *testing.T) {
	f := newHost(t, terminals.Config{}, nil)
	c := newTap()
	term := f.create(terminals.Spec{Command: "echo out; echo err >&2", PTY: true, OnOutput: c.on})
	require.Equal(t, 0, exitOf(t, term).Code)
	require.Contains(t, c.text(terminals.Stdout), "out")
	require.Contains(t, c.text(terminals.Stdout), "err")
	require.Empty(t, c.text(terminals.Stderr))
}

func TestOutputTapWithTheFakeSpawnerSeesEachStream(t *testing.T) {
	sp := fake.New()
	sp.Register("sh", func(p *fake.Process) terminal.ExitStatus {
		_ = p.Emit("to stdout\n")
		_ = p.EmitStderr("to stderr\n")
		return terminal.ExitedWith(4)
	})
	h := hub.New(hub.Options{})
	host := terminals.New(terminals.Config{Shell: "/bin/sh", Dir: t.TempDir()}, h, sp, clock.System())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		require.NoError(t, host.Stop(ctx))
	})
	c := newTap()
	term, err := host.Create(context.Background(), terminals.Spec{
		URI: "ahp-terminal:/tap", Command: "whatever", Claim: terminal.ClientHolds("x"), OnOutput: c.on,
	})
	require.NoError(t, err)
	require.Equal(t, 4, exitOf(t, term).Code)
	require.NoError(t, term.StartError())
	require.Equal(t, "to stdout\n", c.text(terminals.Stdout))
	require.Equal(t, "to stderr\n", c.text(terminals.Stderr))
	require.True(t, sp.Processes()[0].Spec().SeparateStderr, "a tap asks the spawner to keep stderr apart")

	snap, err := host.Snapshot(term.URI())
	require.NoError(t, err)
	require.Contains(t, terminal.Text(snap.Content), "to stdout\n")
	require.Contains(t, terminal.Text(snap.Content), "to stderr\n")
}

func TestSpawnFailureIsTappedAsStderrAndReportedByStartError(t *testing.T) {
	sp := fake.New()
	refused := errors.New("no such shell")
	sp.FailWhen(func(ports.SpawnSpec) bool { return true }, refused)
	h := hub.New(hub.Options{})
	host := terminals.New(terminals.Config{Shell: "/bin/sh", Dir: t.TempDir()}, h, sp, clock.System())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		require.NoError(t, host.Stop(ctx))
	})
	c := newTap()
	term, err := host.Create(context.Background(), terminals.Spec{
		URI: "ahp-terminal:/nostart", Command: "true", Claim: terminal.ClientHolds("x"), OnOutput: c.on,
	})
	require.NoError(t, err)
	require.Equal(t, terminal.CouldNotStart(), exitOf(t, term))
	require.ErrorIs(t, term.StartError(), refused)
	require.Contains(t, c.text(terminals.Stderr), "cannot start /bin/sh")
}
