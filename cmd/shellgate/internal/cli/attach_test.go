package cli

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDetachSequenceIsFoundAcrossReadsAndCanBeEscaped(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reads  []string
		sent   string
		detach bool
	}{
		{"plain typing passes", []string{"ls -l\r"}, "ls -l\r", false},
		{"Ctrl-] then d detaches", []string{"ab\x1dd", "never sent"}, "ab", true},
		{"split over two reads", []string{"ab\x1d", "dtail"}, "ab", true},
		{"Ctrl-] twice sends one", []string{"\x1d\x1dd"}, "\x1dd", false},
		{"Ctrl-] then another key sends both", []string{"\x1dq"}, "\x1dq", false},
		{"a d alone is a d", []string{"d", "dd"}, "ddd", false},
		{"arrow keys pass", []string{"\x1b[A\x1b[B"}, "\x1b[A\x1b[B", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f detachFilter
			var sent []byte
			detached := false
			for _, r := range tc.reads {
				out, detach := f.feed([]byte(r))
				sent = append(sent, out...)
				if detach {
					detached = true
					break
				}
			}
			require.Equal(t, tc.sent, string(sent))
			require.Equal(t, tc.detach, detached)
		})
	}
}

func TestInputKeepsASplitCharacterForTheNextRead(t *testing.T) {
	euro := []byte("€") // three bytes
	text, carry := completeUTF8(append([]byte("price "), euro[:2]...))
	require.Equal(t, "price ", text)
	require.Equal(t, euro[:2], carry)
	text, carry = completeUTF8(append(carry, euro[2], '!'))
	require.Equal(t, "€!", text)
	require.Empty(t, carry)

	// A byte that can never start a character is sent, not held.
	text, carry = completeUTF8([]byte{'a', 0xff})
	require.Equal(t, "a\xff", text)
	require.Empty(t, carry)
}

func TestAnswersToDrawnHistoryAreNotTyped(t *testing.T) {
	answers := "\x1b[?62;22c\x1b[5;1R\x1b]11;rgb:0000/0000/0000\x1b\\"
	for _, tc := range []struct {
		name  string
		reads []string
		typed string
	}{
		{"answers then the fence's, in one read", []string{answers + statusAnswer + "ls\r"}, "ls\r"},
		{"the fence's answer split across reads", []string{answers + "\x1b[", "0", "nls\r"}, "ls\r"},
		{"split after its ESC", []string{answers + "\x1b", "[0nx"}, "x"},
		{"nothing after it", []string{answers + statusAnswer}, ""},
		{"a lone ESC before it is dropped too", []string{"\x1b", "\x1b[0n", "q"}, "q"},
		{"typing before and between the answers passes", []string{"echo hi\r\x1b[?62;22c", "ls" + statusAnswer + "x"}, "echo hi\rlsx"},
		{"an arrow key before the fence's answer is lost", []string{"\x1b[A\x1bOB" + statusAnswer + "\x1b[C"}, "\x1b[C"},
		{"an OSC answer ended by BEL", []string{"\x1b]11;rgb:0/0/0\a" + statusAnswer}, ""},
		{"a DCS answer split across reads", []string{"\x1bP1$r0m\x1b", "\\" + statusAnswer}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f answerFence
			f.expect(time.Hour)
			var typed []byte
			for _, r := range tc.reads {
				typed = append(typed, f.filter([]byte(r))...)
			}
			require.Equal(t, tc.typed, string(typed))
			require.Equal(t, "after", string(f.filter([]byte("after"))), "once answered, input passes")
		})
	}
}

func TestTwoFencesWaitForTwoAnswers(t *testing.T) {
	var f answerFence
	f.expect(time.Hour)
	f.expect(time.Hour)
	require.Equal(t, "a", string(f.filter([]byte("\x1b[?62;22ca\x1b[0n\x1b[5;1R"))))
	require.Equal(t, "\x1b[Dc", string(f.filter([]byte("\x1b[0n\x1b[Dc"))), "after the second answer, keys pass")
}

func TestATerminalThatNeverAnswersGetsItsInputBack(t *testing.T) {
	var f answerFence
	f.expect(time.Millisecond)
	deadline := time.Now().Add(time.Minute)
	for string(f.filter([]byte("k"))) != "k" {
		require.True(t, time.Now().Before(deadline), "input stayed fenced off")
		runtime.Gosched()
	}
}

func TestDetachResetsTheScrollRegionWithoutMovingTheCursor(t *testing.T) {
	r := detachReset(false)
	require.Contains(t, r, "\x1b7\x1b[r\x1b8")
	require.NotContains(t, r, "\x1b[?1049l", "the main screen stays when the program never left it")
	require.True(t, strings.HasPrefix(detachReset(true), "\x1b[?1049l"))
}

func TestAlternateScreenIsFollowedInAllItsModes(t *testing.T) {
	for _, m := range []string{"47", "1047", "1049"} {
		on, off := altSwitch("x\x1b[?" + m + "hy")
		require.Greater(t, on, off, m)
		on, off = altSwitch("\x1b[?" + m + "hy\x1b[?" + m + "l")
		require.Greater(t, off, on, m)
	}
}
