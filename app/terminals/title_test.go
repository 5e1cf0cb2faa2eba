package terminals_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/clock"
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/terminal"
)

func titlesOf(events []hub.Event) []string {
	var out []string
	for _, ev := range events {
		if a, ok := ev.Action.(terminal.TitleChanged); ok {
			out = append(out, a.Title)
		}
	}
	return out
}

// A pty process that sets its title with OSC 0 or OSC 2 retitles its
// terminal and the root list; the sequence itself stays in the output.
// Titles come at most one per TitleInterval, and the last one set within
// the interval is the one sent, on the fake clock.
func TestProcessTitleRetitlesTheTerminalAtMostOncePerInterval(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	f := newHost(t, terminals.Config{}, clk)
	// Each title waits for a line, so none is set before the watchers are
	// there to see it (a title set before a subscription is in the
	// snapshot, not an event).
	term := f.create(terminals.Spec{PTY: true, Command: `read go; printf '\033]0;one\007'; read x; printf '\033]2;two\007'; printf '\033]0;three\033\\'; read y`})
	w := f.watch(term.URI())
	root := &watcher{t: t, sub: hub.NewSubscriber("root", 0)}
	subscribe(t, f.host, root.sub, terminals.RootChannel)
	t.Cleanup(func() { f.hub.Remove(root.sub) })
	require.NoError(t, f.host.Apply(terminals.Dispatch{URI: term.URI(), Action: terminal.Input{Data: "\n"}}))

	w.until("the first title", func() bool { return len(titlesOf(w.events)) == 1 })
	require.Equal(t, []string{"one"}, titlesOf(w.events))
	require.Contains(t, w.text.String(), "\x1b]0;one\x07", "the title sequence is not stripped")

	require.NoError(t, f.host.Apply(terminals.Dispatch{URI: term.URI(), Action: terminal.Input{Data: "\n"}}))
	w.untilOutput("\x1b]0;three\x1b\\")
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, clk.BlockUntil(ctx, 1), "two and three came within the interval: one is held")
	require.Equal(t, []string{"one"}, titlesOf(w.events), "nothing more before the interval is over")

	clk.Advance(terminals.TitleInterval)
	w.until("the held title", func() bool { return len(titlesOf(w.events)) == 2 })
	require.Equal(t, []string{"one", "three"}, titlesOf(w.events), "the last one set wins")

	root.until("the root list with the title", func() bool {
		for i := len(root.events) - 1; i >= 0; i-- {
			if l, ok := root.events[i].Action.(terminals.TerminalsChanged); ok {
				for _, info := range l.Terminals {
					if info.URI == term.URI() {
						return info.Title == "three"
					}
				}
			}
		}
		return false
	})
	require.NoError(t, f.host.Dispose(term.URI()))
}

// A title still held when the output ends is sent before the exit.
func TestHeldTitleIsSentBeforeTheExit(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	f := newHost(t, terminals.Config{}, clk)
	term := f.create(terminals.Spec{PTY: true, Command: `read go; printf '\033]0;first\007'; read x; printf '\033]0;last\007'`})
	w := f.watch(term.URI())
	require.NoError(t, f.host.Apply(terminals.Dispatch{URI: term.URI(), Action: terminal.Input{Data: "\n"}}))
	w.until("the first title", func() bool { return len(titlesOf(w.events)) == 1 })
	require.NoError(t, f.host.Apply(terminals.Dispatch{URI: term.URI(), Action: terminal.Input{Data: "\n"}}))
	w.until("the exit", func() bool { return len(w.exits()) == 1 })
	require.Equal(t, []string{"first", "last"}, titlesOf(w.events))
	var titleAt, exitAt int
	for i, ev := range w.events {
		switch a := ev.Action.(type) {
		case terminal.TitleChanged:
			if a.Title == "last" {
				titleAt = i
			}
		case terminal.Exited:
			exitAt = i
		}
	}
	require.Less(t, titleAt, exitAt)
}

// Pipes carry no terminal: what looks like a title there is only output.
func TestTitleSequenceOnPipesIsOnlyOutput(t *testing.T) {
	f := newHost(t, terminals.Config{}, nil)
	term := f.create(terminals.Spec{Command: `printf '\033]0;nope\007'`})
	exitOf(t, term)
	w := f.watch(term.URI())
	require.Empty(t, titlesOf(w.events))
	require.Equal(t, "\x1b]0;nope\x07", w.text.String())
}
