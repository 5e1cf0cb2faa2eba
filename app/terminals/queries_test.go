package terminals_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/screen"
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/terminal"
)

func TestScrollbackKeepsNoQueryWhileLiveViewersGetThemWhole(t *testing.T) {
	for _, pty := range []bool{false, true} {
		f := newHost(t, terminals.Config{}, nil)
		// The program waits until a viewer is there, then asks DA1, CPR
		// and the background colour, each split across writes.
		term := f.create(terminals.Spec{PTY: pty, Command: `read go; printf 'a\033['; printf 'c\033[6'; printf 'n\033]11;'; printf '?\033\\b\n'`})
		live := f.watch(term.URI())
		require.NoError(t, term.Write("go\n"))
		exitOf(t, term)
		live.until("the exit", func() bool { return len(live.exits()) == 1 })
		require.Contains(t, live.text.String(), "a\x1b[c\x1b[6n\x1b]11;?\x1b\\b", "live output is whole")

		late := f.watch(term.URI())
		text := late.text.String()
		require.Contains(t, text, "ab")
		require.NotContains(t, text, "\x1b[c")
		require.NotContains(t, text, "\x1b[6n")
		require.NotContains(t, text, "\x1b]11;")
		snap, err := f.host.Snapshot(term.URI())
		require.NoError(t, err)
		require.Equal(t, text, terminal.Text(snap.Content))
	}
}

func TestPtySnapshotCarriesTheCurrentScreenAndPipesNone(t *testing.T) {
	f := newHost(t, terminals.Config{Screens: screen.New()}, nil)
	tty := f.create(terminals.Spec{PTY: true, Cols: 40, Rows: 10, Command: `printf '\033[?1049h\033[2;5Hfull-screen'; read x`})
	w := f.watch(tty.URI())
	w.untilOutput("full-screen")
	snap := subscribe(t, f.host, hub.NewSubscriber("late", 0), tty.URI())
	require.NotEmpty(t, snap.Screen)
	drawn := screen.NewScreen(40, 10)
	defer drawn.Close()
	drawn.Write(snap.Screen)
	require.Equal(t, "    full-screen", drawn.Rows()[1])
	require.Len(t, drawn.Rows(), 10)

	require.NoError(t, f.host.Apply(terminals.Dispatch{URI: tty.URI(), Action: terminal.Resized{Cols: 50, Rows: 12}}))
	resized := screen.NewScreen(50, 12)
	defer resized.Close()
	resized.Write(subscribe(t, f.host, hub.NewSubscriber("later", 0), tty.URI()).Screen)
	require.Equal(t, "    full-screen", resized.Rows()[1], "the model follows the size")

	pipe := f.create(terminals.Spec{Command: "echo hi"})
	exitOf(t, pipe)
	require.Empty(t, subscribe(t, f.host, hub.NewSubscriber("pipe", 0), pipe.URI()).Screen)
}
