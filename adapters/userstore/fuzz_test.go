package userstore

import (
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func FuzzLoadUsersFile(f *testing.F) {
	hash := formatDigest(sha256.Sum256([]byte("sg_ana")))
	for _, seed := range []string{
		"",
		"users: []\n",
		"roles:\n  viewer: [\"*:read\"]\nusers:\n  - {id: ana, roles: [admin], token: " + hash + "}\n",
		`{"users":[{"id":"ana","roles":["admin"],"token":"` + hash + `"}]}`,
		"users:\n  - id: ana\n    token: sg_ana\n",
		"users: [\n",
		"a: &x [1]\nb: *x\n",
		"users:\n  - {id: ana, roles: [admin], token: " + hash + "}\n---\nusers: []\n",
		"roles: {x: [terminal:bogus, read:computer]}\nusers: [{id: ana, roles: [x, nope], token: " + hash + "}]\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, warnings, err := load("users.yaml", 0o600, data)
		if err != nil {
			require.Nil(t, d)
			// Nobody: the store answers from a nil directory.
			require.Equal(t, -1, lookupIndex(d, "sg_ana"))
			// A hash in the input is never repeated by the error.
			if i := strings.Index(string(data), "sha256:"); i >= 0 && len(data) >= i+71 {
				require.NotContains(t, err.Error(), string(data[i:i+71]))
			}
			return
		}
		require.NotNil(t, d.roles)
		_ = warnings
		// What the store would write back reads as the same directory.
		out, err := d.file.encode()
		require.NoError(t, err)
		again, err := parse(out)
		require.NoError(t, err)
		require.Equal(t, normalise(d.file), normalise(again))
		// Lookups against whatever parsed never panic.
		_ = lookupIndex(d, "sg_ana")
		for _, u := range d.file.users {
			_ = d.roles.Allows(principalOf(u, time.Now()), "terminal:input")
		}
	})
}

// lookupIndex is what Store.Lookup does once it holds a directory.
func lookupIndex(d *directory, token string) int {
	if d == nil {
		return -1
	}
	i, _ := match(d.file.users, token, time.Now())
	return i
}
