package ahp

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAppendStringRoundTripsThroughJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "tab\tnl\ncr\r", `q"uote\back`, "\x1b[31mred\x1b[0m\x00\x07", "日本語 🙂 é", "\u2028\u2029"} {
		enc := appendString(nil, s)
		var back string
		require.NoError(t, json.Unmarshal(enc, &back), "%q encodes to invalid JSON %s", s, enc)
		require.Equal(t, s, back)
	}
}

func BenchmarkAppendStringTerminalOutput(b *testing.B) {
	line := "\x1b[32mPASS\x1b[0m  src/components/button.test.ts (1.2 s) — ✓ renders\r\n"
	s := ""
	for len(s) < 4096 {
		s += line
	}
	buf := make([]byte, 0, 8192)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = appendString(buf[:0], s)
	}
}
