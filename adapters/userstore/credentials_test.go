package userstore_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/userstore"
)

func TestClientCredentialsRoundTripWithMode0600(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shellgate", "client.json")
	require.NoError(t, userstore.WriteClientCredentials(path, "http://127.0.0.1:9187/", "sg_first"))
	require.Equal(t, fs.FileMode(0o600), mode(t, path))

	c, err := userstore.ReadClientCredentials(path)
	require.NoError(t, err)
	require.Equal(t, userstore.ClientCredentials{URL: "http://127.0.0.1:9187/", Token: "sg_first"}, c)

	require.NoError(t, os.Chmod(path, 0o644))
	require.NoError(t, userstore.WriteClientCredentials(path, "http://127.0.0.1:9999/", "sg_second"))
	require.Equal(t, fs.FileMode(0o600), mode(t, path))
	c, err = userstore.ReadClientCredentials(path)
	require.NoError(t, err)
	require.Equal(t, "sg_second", c.Token)
}

func TestClientCredentialsNeedBothFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "client.json")
	require.Error(t, userstore.WriteClientCredentials(path, "", "sg_x"))
	require.Error(t, userstore.WriteClientCredentials(path, "http://x/", ""))
	_, err := os.Stat(path)
	require.ErrorIs(t, err, fs.ErrNotExist)

	writeInPlace(t, path, `{"url": "http://x/"}`)
	_, err = userstore.ReadClientCredentials(path)
	require.ErrorContains(t, err, "lacks a url or a token")
}

func TestClientCredentialsErrorsNeverQuoteTheToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "client.json")
	writeInPlace(t, path, `{"url": "http://x/", "token": ["sg_secretvalue"]}`)
	_, err := userstore.ReadClientCredentials(path)
	require.Error(t, err)
	require.NotContains(t, err.Error(), "sg_secretvalue")

	_, err = userstore.ReadClientCredentials(filepath.Join(t.TempDir(), "none.json"))
	require.ErrorIs(t, err, fs.ErrNotExist)
}
