package userstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestASignInLinkSignsInAsItsPersonUntilItExpires(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "users.yaml"))
	require.NoError(t, err)
	defer s.Close()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	_, _, err = s.Bootstrap("ana")
	require.NoError(t, err)
	own, err := s.Add("sam", "member")
	require.NoError(t, err)

	link, err := s.AddLink("sam", 15*time.Minute)
	require.NoError(t, err)
	require.NotEqual(t, own, link)
	raw, err := os.ReadFile(s.Path())
	require.NoError(t, err)
	require.NotContains(t, string(raw), link, "the file holds the link's hash only")
	require.Contains(t, string(raw), "expires: \"2026-12-01T12:15:00Z\"")

	p, ok := s.Lookup(link)
	require.True(t, ok)
	require.Equal(t, "sam", p.ID)
	require.Equal(t, []string{"member"}, p.Roles)
	current, ok := s.Principal("sam")
	require.True(t, ok)
	require.True(t, current.Holds(p.Credential), "a sign-in made with the link is current")
	byOwn, ok := s.Lookup(own)
	require.True(t, ok)
	require.NotEqual(t, byOwn.Credential, p.Credential, "the link is a credential of its own")

	// Expired: the link signs nobody in, and a sign-in made with it is no
	// longer current; the person's own token is untouched.
	now = now.Add(15 * time.Minute)
	_, ok = s.Lookup(link)
	require.False(t, ok)
	current, _ = s.Principal("sam")
	require.False(t, current.Holds(p.Credential))
	require.True(t, current.Holds(byOwn.Credential))

	// The next edit drops it from the file.
	_, err = s.Add("vic", "viewer")
	require.NoError(t, err)
	raw, err = os.ReadFile(s.Path())
	require.NoError(t, err)
	require.False(t, strings.Contains(string(raw), "links:"), string(raw))
}

func TestASignInLinksLifetimeIsBounded(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "users.yaml"))
	require.NoError(t, err)
	defer s.Close()
	_, _, err = s.Bootstrap("ana")
	require.NoError(t, err)
	for _, d := range []time.Duration{0, -time.Minute, MaxLinkLifetime + time.Second} {
		_, err := s.AddLink("ana", d)
		require.ErrorIs(t, err, ErrInvalidLifetime, d)
	}
	_, err = s.AddLink("nobody", time.Minute)
	require.ErrorIs(t, err, ErrUnknownUser)
}
