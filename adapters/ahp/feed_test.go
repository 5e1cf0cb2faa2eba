package ahp_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/ahp"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestFedBytesReachTheProcessAsTheyAreAndTheEndEndsItsInput(t *testing.T) {
	r := newRig(t)
	c := r.dial()
	c.initialize("c1")
	uri := "ahp-terminal:/fed"
	created := c.call("createTerminal", map[string]any{"channel": uri,
		"_meta": map[string]any{"shellgate/spawn": map[string]any{"command": "od -An -tx1; echo od-done"}}})
	require.Nil(t, created["error"])
	c.call("subscribe", map[string]any{"channel": uri})

	res := c.call(ahp.FeedMethod, map[string]any{"channel": uri, "offset": 0, "bytes": b64("a\x03")})
	require.Equal(t, map[string]any{"offset": float64(2)}, res["result"], "answered with where the next feed goes on from")
	// A retry of the same bytes is answered and not written twice; the end
	// can come with the last bytes.
	res = c.call(ahp.FeedMethod, map[string]any{"channel": uri, "offset": 0, "bytes": b64("a\x03")})
	require.Equal(t, map[string]any{"offset": float64(2)}, res["result"])
	res = c.call(ahp.FeedMethod, map[string]any{"channel": uri, "offset": 2, "bytes": b64("\xffb"), "end": true})
	require.Equal(t, map[string]any{"offset": float64(4)}, res["result"])
	c.output(uri, "od-done")
	c.next("the exit", isAction(uri, "terminal/exited"))

	res = c.call(ahp.FeedMethod, map[string]any{"channel": uri, "bytes": b64("late")})
	require.Equal(t, float64(ahp.CodeInvalidRequest), errCode(res))
	require.Contains(t, errMessage(res), "has exited")
	require.Equal(t, map[string]any{"exited": true}, res["error"].(map[string]any)["data"])
}

func TestBadFeedsAreAnsweredWithWhatToChange(t *testing.T) {
	r := newRig(t)
	c := r.dial()
	c.initialize("c1")
	uri := "ahp-terminal:/cat"
	require.Nil(t, c.call("createTerminal", map[string]any{"channel": uri,
		"_meta": map[string]any{"shellgate/spawn": map[string]any{"command": "exec cat"}}})["error"])

	for _, tc := range []struct {
		params map[string]any
		code   int
		says   string
	}{
		{map[string]any{"channel": uri, "bytes": "not base64!"}, ahp.CodeInvalidParams, "bytes must be standard base64"},
		{map[string]any{"channel": uri, "bytes": 7}, ahp.CodeInvalidParams, "bytes must be a string of standard base64"},
		{map[string]any{"channel": uri, "offset": "0", "bytes": ""}, ahp.CodeInvalidParams, "offset must be an integer"},
		{map[string]any{"channel": uri, "offset": -3, "bytes": ""}, ahp.CodeInvalidParams, "offset must not be negative"},
		{map[string]any{"channel": uri, "end": "yes"}, ahp.CodeInvalidParams, "end must be true or false"},
		{map[string]any{"channel": uri, "offset": 5, "bytes": b64("x")}, ahp.CodeInvalidParams, "offset 0, the count of bytes taken so far; send again from there"},
		{map[string]any{"channel": "ahp-terminal:/none", "bytes": b64("x")}, ahp.CodeNotFound, "No terminal at ahp-terminal:/none"},
	} {
		res := c.call(ahp.FeedMethod, tc.params)
		require.Equal(t, float64(tc.code), errCode(res), "%v", tc.params)
		require.Contains(t, errMessage(res), tc.says, "%v", tc.params)
	}
	// The gap tells where to go on from, in data too.
	res := c.call(ahp.FeedMethod, map[string]any{"channel": uri, "offset": 9, "bytes": b64("x")})
	require.Equal(t, map[string]any{"offset": float64(0)}, res["error"].(map[string]any)["data"])

	// Nothing of the refused feeds was written, and the terminal still
	// takes input.
	c.call("subscribe", map[string]any{"channel": uri})
	res = c.call(ahp.FeedMethod, map[string]any{"channel": uri, "offset": 0, "bytes": b64("still here\n")})
	require.Nil(t, res["error"])
	c.output(uri, "still here\n")
	res = c.call(ahp.FeedMethod, map[string]any{"channel": uri, "end": true})
	require.Equal(t, map[string]any{"offset": float64(11)}, res["result"])
	c.next("the exit", isAction(uri, "terminal/exited"))
	res = c.call(ahp.FeedMethod, map[string]any{"channel": uri, "bytes": strings.Repeat("A", 8)})
	require.Equal(t, float64(ahp.CodeInvalidRequest), errCode(res))
}
