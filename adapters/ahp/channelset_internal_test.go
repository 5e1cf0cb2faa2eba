package ahp

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestChannelSetIsASetBeforeAndAfterItOutgrowsItsList: adding, finding and
// removing agree with a map at every size, across the switch to one.
func TestChannelSetIsASetBeforeAndAfterItOutgrowsItsList(t *testing.T) {
	var s channelSet
	want := map[string]bool{}
	check := func() {
		t.Helper()
		require.ElementsMatch(t, keys(want), s.names())
		for i := range 3 * fewChannels {
			ch := fmt.Sprintf("ahp-terminal:/t%d", i)
			require.Equal(t, want[ch], s.has(ch), ch)
		}
	}
	check()
	for i := range 2 * fewChannels {
		ch := fmt.Sprintf("ahp-terminal:/t%d", i)
		s.add(ch)
		s.add(ch) // twice is once
		want[ch] = true
		check()
	}
	require.NotNil(t, s.many, "a long set is a map")
	for i := 0; i < 2*fewChannels; i += 3 {
		ch := fmt.Sprintf("ahp-terminal:/t%d", i)
		s.remove(ch)
		delete(want, ch)
		check()
	}

	var few channelSet
	few.add("a")
	few.add("b")
	few.remove("a")
	few.remove("missing")
	require.Equal(t, []string{"b"}, few.names())
	require.Nil(t, few.many, "a short set stays a list")
}

func keys(m map[string]bool) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	return out
}
