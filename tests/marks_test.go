package tests

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/tests/ahpclient"
)

// TestShellReportsItsCommandsUnderAPty runs a real bash and zsh under a pty,
// as a person would type into them, and reads back what shellgate's own
// shell integration reports: directory, commands, exit codes, durations —
// with no mark bytes left in the output clients see.
// subscribeDetecting subscribes c to ch and waits until the shell there
// has announced command detection: in the snapshot, when it did before the
// subscription (on a loaded machine the subscription can come after the
// shell's whole start), else by the action.
func subscribeDetecting(ctx context.Context, t *testing.T, c *ahpclient.Client, ch, what string) {
	t.Helper()
	snap, rpcErr, err := c.Subscribe(ctx, ch)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	state, err := snap.Terminal()
	require.NoError(t, err)
	if state.SupportsCommandDetection != nil && *state.SupportsCommandDetection {
		return
	}
	_, err = c.WaitAction(ctx, ahpclient.Match(ch, "terminal/commandDetectionAvailable"))
	require.NoError(t, err, what)
}

func TestShellReportsItsCommandsUnderAPty(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"bash", "zsh"} {
		t.Run(name, func(t *testing.T) {
			shell, err := exec.LookPath(name)
			if err != nil {
				t.Skipf("%s is not installed (.ci/run installs it)", name)
			}
			d := startDaemon(t)
			ctx := ctxT(t)
			c := d.dial(t, ahpclient.DialOptions{})
			initialize(t, c, "marks-"+name)
			_, err = c.Dispatch(ctx, ahpclient.RootChannel, map[string]any{"type": "root/configChanged", "config": map[string]any{"defaultShell": shell}})
			require.NoError(t, err)
			ch := "ahp-terminal:/" + name
			home := t.TempDir()
			rpcErr, err := c.CreateTerminal(ctx, ahpclient.CreateParams{Channel: ch, Meta: map[string]any{
				"shellgate/spawn": map[string]any{"pty": true, "env": map[string]string{"HOME": home, "ZDOTDIR": home, "PS1": "$ "}},
			}})
			require.NoError(t, err)
			require.Nil(t, rpcErr)
			subscribeDetecting(ctx, t, c, ch, "the shell announces command detection")

			typeLine := func(s string) {
				t.Helper()
				_, err := c.Dispatch(ctx, ch, ahpclient.InputAction(s+"\r"))
				require.NoError(t, err)
			}
			finished := func() ahpclient.ActionView {
				t.Helper()
				e, err := c.WaitAction(ctx, ahpclient.Match(ch, "terminal/commandFinished"))
				require.NoError(t, err)
				return e.View()
			}
			executed := func() ahpclient.ActionView {
				t.Helper()
				e, err := c.WaitAction(ctx, ahpclient.Match(ch, "terminal/commandExecuted"))
				require.NoError(t, err)
				return e.View()
			}

			typeLine("cd /tmp")
			e, err := c.WaitAction(ctx, ahpclient.Match(ch, "terminal/cwdChanged"))
			require.NoError(t, err)
			require.Equal(t, "file:///tmp", *e.View().Cwd)

			typeLine("false")
			require.Equal(t, "false", *executed().CommandLine)
			f := finished()
			require.Equal(t, 1, *f.ExitCode)

			// The duration runs from the daemon's reading of the shell's
			// "executed" mark to its reading of the "finished" one, so a
			// read delayed on a loaded machine shortens it (one loaded run
			// measured 198 ms for a sleep 0.2): it is at least the sleep
			// less a generous lag, and never more than the test itself saw.
			typed := time.Now()
			typeLine("sleep 1")
			require.Equal(t, "sleep 1", *executed().CommandLine)
			f = finished()
			seen := time.Since(typed)
			require.Equal(t, 0, *f.ExitCode)
			require.GreaterOrEqual(t, *f.DurationMs, int64(500))
			require.LessOrEqual(t, *f.DurationMs, seen.Milliseconds())

			typeLine("echo abx\x7fc") // a typo, mended with backspace
			require.Equal(t, "echo abc", *executed().CommandLine)
			finished()

			out := c.Output(ch)
			require.Contains(t, out, "abc")
			for _, mark := range []string{"\x1b]133;", "\x1b]633;", "\x1b]7;"} {
				require.False(t, strings.Contains(out, mark), "the output clients see holds %q", mark)
			}
			snap, _, err := c.Subscribe(ctx, ch)
			require.NoError(t, err)
			state, err := snap.Terminal()
			require.NoError(t, err)
			require.True(t, *state.SupportsCommandDetection)
		})
	}
}

func TestAPipeTerminalNeverAnnouncesCommandDetection(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	d := startDaemon(t)
	ctx := ctxT(t)
	c := d.dial(t, ahpclient.DialOptions{})
	initialize(t, c, "pipes")
	rpcErr, err := c.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/p", Meta: map[string]any{
		"shellgate/spawn": map[string]any{"command": bash, "args": []string{"-i"}},
	}})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, _, err = c.Subscribe(ctx, "ahp-terminal:/p")
	require.NoError(t, err)
	_, err = c.Dispatch(ctx, "ahp-terminal:/p", ahpclient.InputAction("false; echo done-$((3*3))\n"))
	require.NoError(t, err)
	_, err = c.WaitOutput(ctx, "ahp-terminal:/p", "done-9")
	require.NoError(t, err)
	for _, e := range c.Actions() {
		require.NotContains(t, e.Type, "command", "pipes have no command boundaries")
	}
	snap, _, err := c.Subscribe(ctx, "ahp-terminal:/p")
	require.NoError(t, err)
	state, err := snap.Terminal()
	require.NoError(t, err)
	require.False(t, *state.SupportsCommandDetection)
	require.False(t, *state.IsPty)
}
