package terminal_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/domain/terminal"
)

func TestTitleScannerFindsOSC0And2(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     string
		found    bool
	}{
		{"OSC 0 ended by BEL", "\x1b]0;build-box\x07", "build-box", true},
		{"OSC 2 ended by ST", "\x1b]2;vim main.go\x1b\\", "vim main.go", true},
		{"text around it", "$ ls\r\n\x1b]0;user@host: ~\x07\x1b[32m$\x1b[0m ", "user@host: ~", true},
		{"the last of several wins", "\x1b]0;one\x07x\x1b]2;two\x07", "two", true},
		{"an empty title", "\x1b]2;\x07", "", true},
		{"UTF-8 kept", "\x1b]0;日本 🙂\x07", "日本 🙂", true},
		{"invalid UTF-8 replaced", "\x1b]0;a\xffb\x07", "a\uFFFDb", true},
		{"OSC 1 is the icon name, not the title", "\x1b]1;icon\x07", "", false},
		{"OSC 7 is not a title", "\x1b]7;file:///tmp\x07", "", false},
		{"OSC 133 is not a title", "\x1b]133;A\x07", "", false},
		{"unfinished", "\x1b]0;half", "", false},
		{"CAN cancels it", "\x1b]0;no\x18pe\x07", "", false},
		{"a CSI is not an OSC", "\x1b[0;31m\x07", "", false},
		{"no number", "\x1b];x\x07", "", false},
		{"ESC ESC ] still starts one", "\x1b\x1b]0;t\x07", "t", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s terminal.TitleScanner
			got, found := s.Feed([]byte(tc.in))
			require.Equal(t, tc.found, found)
			require.Equal(t, tc.want, got)
		})
	}
}

// A title split across reads at any byte is still found, once.
func TestTitleScannerJoinsATitleSplitAcrossReads(t *testing.T) {
	in := []byte("ab\x1b]0;split title\x1b\\cd")
	for cut := 0; cut <= len(in); cut++ {
		var s terminal.TitleScanner
		t1, ok1 := s.Feed(in[:cut])
		t2, ok2 := s.Feed(in[cut:])
		require.True(t, ok1 != ok2, "cut at %d: found exactly once", cut)
		if ok1 {
			require.Equal(t, "split title", t1)
		} else {
			require.Equal(t, "split title", t2)
		}
	}
}

func TestTitleScannerLetsGoOfARunawayString(t *testing.T) {
	var s terminal.TitleScanner
	_, found := s.Feed([]byte("\x1b]0;" + strings.Repeat("x", terminal.MaxTitleBytes+1) + "\x07"))
	require.False(t, found, "longer than MaxTitleBytes (%d) is no title", terminal.MaxTitleBytes)
	title, found := s.Feed([]byte("\x1b]2;next\x07"))
	require.True(t, found)
	require.Equal(t, "next", title)
}

func BenchmarkTitleScannerOnPlainOutput(b *testing.B) {
	chunk := []byte(strings.Repeat("\x1b[32mPASS\x1b[0m src/a.test.ts — ok\r\n", 100))
	var s terminal.TitleScanner
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		s.Feed(chunk)
	}
}
