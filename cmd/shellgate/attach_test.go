package main

import (
	"testing"

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
