package screen_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shellgate/shellgate/adapters/screen"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// vimLike is what vim sends on start (less its queries, which the host
// takes out): alternate screen, application keys, scroll region, mouse,
// bracketed paste, a hidden cursor while it paints, colours.
const vimLike = "\x1b[?1049h\x1b[22;0;0t\x1b[?1h\x1b=\x1b[H\x1b[2J\x1b[1;23r\x1b[?25l" +
	"\x1b[1;1H\x1b[38;5;130m  1 \x1b[0mpackage main\r\n\x1b[38;5;130m  2 \x1b[0m\r\n" +
	"\x1b[94m~                                                                               \x1b[0m" +
	"\x1b[24;1H\x1b[1m-- INSERT --\x1b[0m\x1b[24;63H1,1           All" +
	"\x1b[?1000h\x1b[?1006h\x1b[?2004h\x1b[1;5H\x1b[?25h\x1b[6 q"

func TestSerializedScreenDrawsTheSameScreenOnABlankTerminal(t *testing.T) {
	tests := []struct {
		name, output string
		cols, rows   int
	}{
		{"plain lines", "$ ls\r\na  b  c\r\n$ ", 80, 24},
		{"colours and attributes", "\x1b[1;31mred bold\x1b[0m \x1b[48;2;10;20;30mtrue bg\x1b[0m \x1b[4;3munder\x1b[0m", 80, 24},
		{"scrolled past the bottom", strings.Repeat("line\r\n", 40) + "last", 40, 10},
		{"scroll region and origin mode", "\x1b[3;8r\x1b[?6h\x1b[2;4Hinside", 80, 10},
		{"full last column", strings.Repeat("x", 20) + "\r\n" + strings.Repeat("y", 20), 20, 4},
		{"wide characters", "日本語 ok", 20, 4},
		{"vim on the alternate screen", "$ vim main.go\r\n" + vimLike, 80, 24},
		{"vim quit", "$ vim main.go\r\n" + vimLike + "\x1b[?1000l\x1b[?1006l\x1b[?2004l\x1b[?1l\x1b>\x1b[r\x1b[?1049l\x1b[0 q$ ", 80, 24},
		{"cursor hidden, keypad, bracketed paste", "\x1b[?25l\x1b=\x1b[?2004hwait", 80, 24},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := screen.NewScreen(tt.cols, tt.rows)
			defer src.Close()
			src.Write(tt.output)
			replayed := screen.NewScreen(tt.cols, tt.rows)
			defer replayed.Close()
			replayed.Write(src.Serialize())
			require.Equal(t, src.Rows(), replayed.Rows())
			require.Equal(t, src.Serialize(), replayed.Serialize(), "cells, modes, region, cursor")
		})
	}
}

func TestScreenShowsWhatVimShows(t *testing.T) {
	s := screen.NewScreen(80, 24)
	defer s.Close()
	s.Write("$ vim main.go\r\n" + vimLike)
	rows := s.Rows()
	require.Equal(t, "  1 package main", rows[0])
	require.Equal(t, "-- INSERT --                                                  1,1           All", rows[23])
	ser := s.Serialize()
	require.Contains(t, ser, "$ vim main.go", "the main screen is drawn under the alternate one")
	for _, want := range []string{"\x1b[?1049h", "\x1b[1;23r", "\x1b[?1h", "\x1b=", "\x1b[?1000h", "\x1b[?1006h", "\x1b[?2004h", "\x1b[1;5H", "\x1b[6 q"} {
		require.Contains(t, ser, want)
	}
	require.NotContains(t, ser, "\x1b[?25l", "the cursor is shown again")
}

func TestScreenAfterVimQuitIsTheShellsWithTheModesUndone(t *testing.T) {
	s := screen.NewScreen(80, 24)
	defer s.Close()
	s.Write("$ vim main.go\r\n" + vimLike + "\x1b[?1000l\x1b[?1006l\x1b[?2004l\x1b[?1l\x1b>\x1b[r\x1b[?1049l\x1b[0 q")
	require.Equal(t, "$ vim main.go", s.Rows()[0])
	ser := s.Serialize()
	for _, gone := range []string{"\x1b[?1049h", "\x1b[1;23r", "\x1b[?1000h", "\x1b[?2004h", "\x1b="} {
		require.NotContains(t, ser, gone)
	}
}

func TestScreenNeverAnswersAndNeverBlocks(t *testing.T) {
	s := screen.NewScreen(80, 24)
	defer s.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Each of these makes the emulator answer into a pipe nobody reads.
		s.Write("\x1b[c\x1b[>c\x1b[5n\x1b[6n\x1b[?6n\x1b[4$p\x1b[?1$p\x1b]10;?\a\x1b]11;?\a\x1b]12;?\x1b\\\x1b[?2048h")
		s.Resize(100, 30)
		s.Write("after")
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the screen model blocked on an answer nobody reads")
	}
	require.Equal(t, "after", strings.TrimSpace(s.Rows()[0]))
}

func TestResizeResetsTheScrollRegion(t *testing.T) {
	s := screen.NewScreen(80, 24)
	defer s.Close()
	s.Write("\x1b[2;10r")
	require.Regexp(t, `\x1b\[2;10r`, s.Serialize())
	s.Resize(100, 30)
	require.NotRegexp(t, `\x1b\[\d+;\d+r`, s.Serialize(), "no region after a resize")
}

func TestPlainFloodShowsWhatFeedingEveryLineShows(t *testing.T) {
	long := strings.Repeat("wrap-me-", 23)
	tests := []struct{ name, before, flood string }{
		{"CR LF lines", "$ yes\r\n", strings.Repeat("y\r\n", 200) + "tail"},
		{"long lines that wrap", "", strings.Repeat(long+"\r\n", 90) + long},
		{"bare line feeds (a staircase)", "", strings.Repeat("ab\n", 100)},
		{"mixed, with tabs and backspaces", "prompt$ ", strings.Repeat("a\tb\bc\r\n\n", 70) + "x\ry"},
		{"fewer lines than a screen", "\x1b[5;10Hmid", "one\r\ntwo\r\n"},
		{"after colours", "\x1b[31mred ", strings.Repeat("still red\r\n", 60)},
		{"more than is held back", "", numbered(30000)},
		{"one line longer than is held back", "", strings.Repeat("x", 200<<10) + "\r\nend"},
		{"one long line from an odd column, no line feed", "abc", strings.Repeat("abcdefg", 30<<10) + "yz"},
		{"a long line after lines", "", numbered(100) + strings.Repeat("0123456", 20<<10)},
		{"a long line with autowrap off", "\x1b[?7l", strings.Repeat("abcdefg", 30<<10)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fast := screen.NewScreen(40, 10)
			defer fast.Close()
			fast.Write(tt.before)
			// In pieces, as reads cut it.
			for i := 0; i < len(tt.flood); i += 37 {
				fast.Write(tt.flood[i:min(i+37, len(tt.flood))])
			}
			every := screen.NewScreen(40, 10)
			defer every.Close()
			every.Write(tt.before)
			// An escape after each piece makes the model take it at once.
			for i := 0; i < len(tt.flood); i += 37 {
				every.Write(tt.flood[i:min(i+37, len(tt.flood))] + "\x1b[?2004l")
			}
			require.Equal(t, every.Rows(), fast.Rows())
			require.Equal(t, every.Serialize(), fast.Serialize())
		})
	}
}

// numbered is n numbered lines, each ended by CR LF.
func numbered(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "line %d\r\n", i)
	}
	return b.String()
}

func TestModelStartedOnTheAlternateScreenLeavesTheViewersMainScreenAlone(t *testing.T) {
	s := screen.NewScreen(80, 24)
	defer s.Close()
	s.Write(vimLike)
	ser := s.Serialize()
	enter := strings.Index(ser, "\x1b[?1049h")
	require.GreaterOrEqual(t, enter, 0, "the alternate screen is entered")
	require.NotContains(t, ser[:enter], "\x1b[2J", "the main screen, which the viewer drew from the scrollback, is not cleared")
	require.Equal(t, "  1 package main", s.Rows()[0])
}
