package terminal_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/domain/terminal"
)

func TestScrollbackKeepsExactlyTheNewestCharacters(t *testing.T) {
	const limit = 1000
	var all strings.Builder
	b := terminal.Scrollback{Limit: limit}
	// Mixed-width characters in chunks of varying size, so trims land
	// everywhere, including next to multi-byte characters.
	chunk := "héllo wörld — 日本語 🙂\n"
	for i := 0; i < 500; i++ {
		piece := chunk[:len(chunk)-(i%3)] // may cut mid-character: fix below
		piece = strings.ToValidUTF8(piece, "")
		all.WriteString(piece)
		b.Append(piece)
		require.LessOrEqual(t, b.Chars(), limit)
	}
	got := terminal.Text(b.Parts())
	want := []rune(all.String())
	require.Equal(t, string(want[len(want)-limit:]), got)
	require.True(t, utf8.ValidString(got))
	require.Equal(t, limit, utf8.RuneCountInString(got))
}

func TestScrollbackChunkLargerThanLimitKeepsItsTail(t *testing.T) {
	b := terminal.Scrollback{Limit: 5}
	b.Append("ab")
	b.Append("0123456789")
	require.Equal(t, "56789", terminal.Text(b.Parts()))
	require.Equal(t, 5, b.Chars())
}

func TestScrollbackTrimsAcrossCommandParts(t *testing.T) {
	b := terminal.Scrollback{Limit: 10}
	b.Append("prompt$ ")                                       // 8
	b.StartCommand(terminal.CommandInfo{ID: "c1", Line: "ls"}) // output goes here
	b.Append("one two three")                                  // 13
	parts := b.Parts()
	require.Len(t, parts, 1, "the oldest part went entirely")
	require.Equal(t, terminal.PartCommand, parts[0].Kind)
	require.Equal(t, " two three", parts[0].Text)
	require.Equal(t, 10, b.Chars())
	require.True(t, b.FinishCommand("c1", nil, nil), "the running command survived the trim")
}

func TestScrollbackDefaultLimitIs200000(t *testing.T) {
	b := terminal.Scrollback{}
	line := strings.Repeat("x", 999) + "\n"
	for i := 0; i < 300; i++ {
		b.Append(line)
	}
	require.Equal(t, terminal.DefaultScrollbackLimit, b.Chars())
	require.Equal(t, 200_000, terminal.DefaultScrollbackLimit)
}

func BenchmarkScrollbackAppend4KiB(b *testing.B) {
	chunk := strings.Repeat("output line of a build log\r\n", 146)
	s := terminal.Scrollback{}
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		s.Append(chunk)
	}
}

func TestScrollbackByteAtATimeStaysExact(t *testing.T) {
	b := terminal.Scrollback{Limit: 3000}
	var all []rune
	for i := 0; i < 10000; i++ {
		r := rune('a' + i%26)
		if i%7 == 0 {
			r = 'é'
		}
		all = append(all, r)
		b.Append(string(r))
	}
	require.Equal(t, string(all[len(all)-3000:]), terminal.Text(b.Parts()))
}
