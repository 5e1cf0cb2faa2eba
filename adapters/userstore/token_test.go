package userstore_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/userstore"
)

func TestNewTokenIsPrefixedBase64URLOf32RandomBytes(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		tok, err := userstore.NewToken()
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(tok, "sg_"))
		require.Len(t, tok, len("sg_")+43)
		require.NotContains(t, tok, "=")
		require.False(t, seen[tok])
		seen[tok] = true
	}
}

func TestHashTokenIsPrefixedSHA256Hex(t *testing.T) {
	sum := sha256.Sum256([]byte("sg_x"))
	require.Equal(t, "sha256:"+hex.EncodeToString(sum[:]), userstore.HashToken("sg_x"))
}
