package terminal_test

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/domain/terminal"
)

func TestDecoderJoinsSequencesSplitAtEveryByte(t *testing.T) {
	text := []byte("a é 日 🙂 z")
	for cut := 0; cut <= len(text); cut++ {
		var d terminal.Decoder
		got := d.Decode(text[:cut]) + d.Decode(text[cut:]) + d.Flush()
		require.Equal(t, string(text), got, "cut at %d", cut)
	}
}

func TestDecoderFeedsOneByteAtATime(t *testing.T) {
	text := []byte("日本語 🙂 ok")
	var d terminal.Decoder
	var got string
	for i := range text {
		got += d.Decode(text[i : i+1])
	}
	require.Equal(t, string(text), got+d.Flush())
}

func TestDecoderReplacesInvalidBytes(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"lone continuation", []byte{'a', 0x80, 'b'}, "a\uFFFDb"},
		{"invalid start", []byte{0xFF, 'x'}, "\uFFFDx"},
		{"truncated then ascii", []byte{0xE6, 0x97, 'x'}, "\uFFFD\uFFFDx"},
		{"overlong", []byte{0xC0, 0xAF}, "\uFFFD\uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d terminal.Decoder
			got := d.Decode(tt.in) + d.Flush()
			require.Equal(t, tt.want, got)
			require.True(t, utf8.ValidString(got))
		})
	}
}

func TestDecoderFlushReplacesAHeldSequence(t *testing.T) {
	var d terminal.Decoder
	require.Equal(t, "a", d.Decode([]byte{'a', 0xE6, 0x97}))
	require.Equal(t, "\uFFFD\uFFFD", d.Flush())
}
