package userstore

import (
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEncodeThenParseGivesTheSameFile(t *testing.T) {
	f := &fileData{
		roles: map[string][]string{
			"viewer": {"*:read"},
			"odd":    {"terminal:bogus", "*:*", "null", "yes", ""},
			"empty":  {},
		},
		users: []record{
			{id: "ana", roles: []string{"admin"}, digest: sha256.Sum256([]byte("a"))},
			{id: "true", roles: []string{"viewer", "odd"}, digest: sha256.Sum256([]byte("b"))},
			{id: "123", roles: nil, digest: sha256.Sum256([]byte("c"))},
		},
	}
	data, err := f.encode()
	require.NoError(t, err)
	got, err := parse(data)
	require.NoError(t, err)
	require.Equal(t, normalise(f), normalise(got))
	require.True(t, strings.HasPrefix(string(data), "# shellgate users file"))
}

func TestEmptyFileIsADirectoryOfNobody(t *testing.T) {
	for _, content := range []string{"", "# only a comment\n", "---\n", "~\n", "users:\nroles:\n"} {
		f, err := parse([]byte(content))
		require.NoError(t, err, "%q", content)
		require.Empty(t, f.users)
		_, warnings := f.table()
		require.Contains(t, strings.Join(warnings, "\n"), "names nobody")
	}
}

func TestMalformedErrorsSayWhereAndWhat(t *testing.T) {
	tests := []struct {
		content, want string
		line          int
	}{
		{"users:\n  - id: ana\n    roles: [admin]\n    tokn: x\n", `user 1 has an unknown key tokn (known: id, roles, token, links)`, 4},
		{"users:\n  - id: ana\n    token: sha256:zz\n", "user 1's token must be sha256:<64 hex digits>", 3},
		{"roles:\n  a b: []\n", "a role name must be", 2},
		{"roles:\n  x: [a]\n  x: [b]\n", "role x is defined twice", 3},
		{"users: 3\n", "users must be a list", 1},
		{strings.Repeat("#", maxFileSize+1), "is larger than", 0},
	}
	for _, tt := range tests {
		_, err := parse([]byte(tt.content))
		var bad *MalformedError
		require.ErrorAs(t, err, &bad)
		require.Contains(t, bad.Reason, tt.want)
		require.Equal(t, tt.line, bad.Line)
	}
}

func TestUnknownKeysThatCouldBeSecretsAreNotEchoed(t *testing.T) {
	hash := "sha256:" + strings.Repeat("ab", 32)
	for _, key := range []string{hash, "sg_" + strings.Repeat("Q", 43)} {
		_, err := parse([]byte(key + ": 1\n"))
		require.Error(t, err)
		require.NotContains(t, err.Error(), key)
		require.NotContains(t, err.Error(), strings.Repeat("ab", 32))
	}
}

func TestYAMLReasonCutsQuotedText(t *testing.T) {
	_, err := parse([]byte("a: *sha256deadbeef\n"))
	require.Error(t, err)
	require.NotContains(t, err.Error(), "deadbeef")
}

func normalise(f *fileData) *fileData {
	c := f.clone()
	if c.roles == nil {
		c.roles = map[string][]string{}
	}
	for k, v := range c.roles {
		if v == nil {
			c.roles[k] = []string{}
		}
	}
	for i := range c.users {
		if c.users[i].roles == nil {
			c.users[i].roles = []string{}
		}
	}
	return c
}
