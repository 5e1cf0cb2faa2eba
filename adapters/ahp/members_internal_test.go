package ahp

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// The fast reads must answer exactly what encoding/json answers, for every
// input: each case is checked against it, and the fuzz target below keeps
// looking for one that is not.
var memberCases = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a" : "x" , "b":[1,{"c":"}"}],"d":{"e":null}}`,
	`{"a":"x","a":"y"}`, `{"k\u0041y":true}`, `{"é":"ü"}`, `{"a":"\"quoted\" \\ back"}`,
	`{"a":-0,"b":12.5e3,"c":false}`, "{\n\t\"a\":\r\n1\n}", `[]`, `[{"a":1}]`, `null`, `"s"`, `12`,
	`{"a":"` + "\xff\xfe" + `"}`, `{"` + "\xff" + `":1}`, `{"data":"\u0003\u001b[A"}`,
}

func TestObjectMembersReadsWhatEncodingJSONReads(t *testing.T) {
	for _, in := range memberCases {
		checkMembers(t, []byte(in))
	}
}

func checkMembers(t *testing.T, in []byte) {
	t.Helper()
	if !json.Valid(in) {
		return
	}
	var want map[string]json.RawMessage
	wantErr := json.Unmarshal(in, &want)
	got, ok := objectMembers(in)
	if wantErr != nil || want == nil {
		require.False(t, ok, "%q is not an object", in)
		return
	}
	require.True(t, ok, "%q", in)
	require.Equal(t, len(want), len(got), "%q", in)
	for k, v := range want {
		require.Equal(t, string(v), string(got[k]), "%q: member %q", in, k)
	}
	for _, v := range got {
		checkLeaves(t, v)
	}
}

func checkLeaves(t *testing.T, v []byte) {
	t.Helper()
	var ws string
	wsErr := json.Unmarshal(v, &ws)
	s, ok := jsonString(v)
	require.Equal(t, wsErr == nil, ok, "%q as a string", v)
	require.Equal(t, ws, s, "%q as a string", v)
	var wn int64
	wnErr := json.Unmarshal(v, &wn)
	n, ok := jsonInt(v)
	require.Equal(t, wnErr == nil, ok, "%q as an integer", v)
	require.Equal(t, wn, n, "%q as an integer", v)
}

func TestLeavesReadWhatEncodingJSONReads(t *testing.T) {
	for _, v := range []string{
		`"x"`, `""`, `"a\nb"`, `"\u00e9"`, `"é"`, "\"\xff\"", `null`, `true`, `1`, `-1`, `0`,
		`123456789012345678`, `1234567890123456789`, `9223372036854775807`, `9223372036854775808`,
		`-9223372036854775808`, `1.0`, `1e3`, `-`, `"5"`, `{}`, `[]`,
	} {
		checkLeaves(t, []byte(v))
	}
	_, ok := jsonString(nil)
	require.False(t, ok, "a missing member is not a string")
	_, ok = jsonInt(nil)
	require.False(t, ok, "a missing member is not a number")
}

func FuzzObjectMembers(f *testing.F) {
	for _, in := range memberCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkMembers(t, in) })
}
