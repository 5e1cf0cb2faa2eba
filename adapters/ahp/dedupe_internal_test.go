package ahp

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func input(data string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"terminal/input","data":%q}`, data))
}

const term = "ahp-terminal:/t"

func TestDedupeWindowSuppressesAnExactRepeat(t *testing.T) {
	var w seqWindow
	ls := fingerprintOf(term, input("ls\r"))
	require.False(t, w.repeats(1, ls))
	w.applied(1, ls)
	require.True(t, w.repeats(1, ls), "the same clientSeq with the same action is a retry")
	spaced := json.RawMessage(`{ "type": "terminal/input",  "data": "ls\r" }`)
	require.True(t, w.repeats(1, fingerprintOf(term, spaced)), "white space does not make it another action")
	require.False(t, w.repeats(1, fingerprintOf("ahp-terminal:/other", input("ls\r"))), "on another terminal it is another action")
}

func TestDedupeWindowAppliesARestartedCounter(t *testing.T) {
	var w seqWindow
	for i, key := range []string{"e", "c", "h", "o"} {
		w.applied(int64(i+1), fingerprintOf(term, input(key)))
	}
	// A new client object under the same id starts again at 1, typing
	// something else: applied, and it is the new high-water mark.
	pwd := fingerprintOf(term, input("pwd\r"))
	require.False(t, w.repeats(1, pwd))
	w.applied(1, pwd)
	require.Equal(t, int64(1), w.high)
	// The old counter's 2..4 are gone: the new counter's 2 is applied even
	// though it types what the old 2 typed.
	require.False(t, w.repeats(2, fingerprintOf(term, input("c"))))
	require.Len(t, w.entries, 1)
}

func TestDedupeWindowIsBounded(t *testing.T) {
	var w seqWindow
	first := fingerprintOf(term, input("first"))
	w.applied(1, first)
	for seq := int64(2); seq <= DedupeWindow+1; seq++ {
		w.applied(seq, fingerprintOf(term, input(fmt.Sprint(seq))))
	}
	require.Len(t, w.entries, DedupeWindow, "at most DedupeWindow (%d) entries", DedupeWindow)
	require.False(t, w.repeats(1, first), "a dispatch older than the window is no longer known, so a retry of it applies")
	require.True(t, w.repeats(2, fingerprintOf(term, input("2"))), "the oldest one kept is still suppressed")
}

func TestDedupeWindowResetForgetsTheClient(t *testing.T) {
	var w seqWindow
	ls := fingerprintOf(term, input("ls\r"))
	w.applied(7, ls)
	w.reset()
	require.False(t, w.repeats(7, ls))
	require.Zero(t, w.high)
}
