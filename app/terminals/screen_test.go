package terminals_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/screen"
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/ports"
)

// countedScreens makes real screen models and counts those not yet closed.
type countedScreens struct {
	mu   sync.Mutex
	live int
}

func (c *countedScreens) NewScreen(cols, rows int) ports.Screen {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live++
	return &countedScreen{Screen: screen.NewScreen(cols, rows), owner: c}
}

func (c *countedScreens) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.live
}

type countedScreen struct {
	*screen.Screen
	owner *countedScreens
}

func (s *countedScreen) Close() {
	s.owner.mu.Lock()
	s.owner.live--
	s.owner.mu.Unlock()
	s.Screen.Close()
}

func TestIdlePtyShellHoldsNoScreenModel(t *testing.T) {
	screens := &countedScreens{}
	f := newHost(t, terminals.Config{Screens: screens}, nil)
	term := f.create(terminals.Spec{PTY: true})
	w := f.watch(term.URI())
	require.NoError(t, term.Write("echo she''ll-is-up\n"))
	w.untilOutput("shell-is-up")
	require.Zero(t, screens.count(), "a shell on the main screen needs no model")
	require.Empty(t, subscribe(t, f.host, hub.NewSubscriber("late", 0), term.URI()).Screen,
		"no screen in the snapshot: viewers draw the scrollback")
}

func TestScreenModelLivesWhileTheAlternateScreenIsShown(t *testing.T) {
	screens := &countedScreens{}
	// Without the mark reader, which would hold back a trailing ESC (it
	// may start a mark), each read reaches the query filter as it came.
	f := newHost(t, terminals.Config{Screens: screens, PassMarks: true}, nil)
	// Prints each line it reads, escapes and all, without a line feed:
	// each line is one write, so each part below is its own read.
	term := f.create(terminals.Spec{PTY: true, Cols: 40, Rows: 10,
		Command: `stty -echo; echo ready; while IFS= read -r line; do printf '%b' "$line"; done`})
	w := f.watch(term.URI())
	w.untilOutput("ready")
	var printed strings.Builder
	print := func(part string) {
		t.Helper()
		require.NoError(t, term.Write(strings.ReplaceAll(part, "\x1b", `\0033`)+"\n"))
		printed.WriteString(part)
		all := printed.String()
		w.until("the part printed", func() bool { return strings.HasSuffix(w.text.String(), all) })
	}
	late := func() string {
		return subscribe(t, f.host, hub.NewSubscriber("late", 0), term.URI()).Screen
	}

	for _, mode := range []string{"1049", "1047", "47"} {
		enter, leave := "\x1b[?"+mode+"h", "\x1b[?"+mode+"l"
		for cut := 1; cut < len(enter); cut++ {
			print(enter[:cut])
			require.Zero(t, screens.count(), "%q is not yet a switch", enter[:cut])
			print(enter[cut:] + "\x1b[3;2Hfull-screen")
			require.Equal(t, 1, screens.count(), "entering the alternate screen, cut at byte %d, starts a model", cut)
			drawn := screen.NewScreen(40, 10)
			drawn.Write(late())
			require.Equal(t, " full-screen", drawn.Rows()[2], "the snapshot draws the program's screen")
			drawn.Close()

			print(leave[:cut])
			require.Equal(t, 1, screens.count(), "%q is not yet a switch", leave[:cut])
			print(leave[cut:] + "$ ")
			require.Zero(t, screens.count(), "leaving the alternate screen, cut at byte %d, drops the model", cut)
			require.Empty(t, late())
		}
	}

	print("\x1b[?1049hstill open")
	require.Equal(t, 1, screens.count())
	require.NoError(t, term.Write("\x04")) // end of input: the loop, and the program, end
	exitOf(t, term)
	require.Zero(t, screens.count(), "a program that exits drops its model")
	require.Empty(t, late())
}
