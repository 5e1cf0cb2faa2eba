package access_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/domain/access"
)

func FuzzParseGrant(f *testing.F) {
	for _, s := range []string{
		"terminal:input", "*:*", "*:read", "terminal:write", "audit:read", "computer:get",
		"read:computer", "a:b:c", ":", "", "*:", "session:*", "Terminal:input", "x+y.z-1:list",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := access.ParseGrant(s)
		if err != nil {
			require.NotEmpty(t, err.Error())
			return
		}
		// Exact input only: what parses is what String() writes back.
		require.Equal(t, s, g.String())
		again, err := access.ParseGrant(g.String())
		require.NoError(t, err)
		require.Equal(t, g, again)
		// Covering must never panic, whatever the pair.
		for _, op := range access.Operations() {
			_ = g.Covers(op)
		}
		_ = g.Covers(access.Operation(s))
	})
}
