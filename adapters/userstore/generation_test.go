package userstore

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestGenerationMovesOnEveryChangeOfTheAnswersAndOnlyThen: a connection
// re-checks what it decided only when the generation moves, so it must
// move for an edit by another process, a file that goes bad or missing,
// and an expired sign-in link, and stay put while nothing changed.
func TestGenerationMovesOnEveryChangeOfTheAnswersAndOnlyThen(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "users.yaml")
	daemon, err := Open(path)
	require.NoError(t, err)
	defer daemon.Close()
	daemon.now = func() time.Time { return now }
	cli, err := Open(path) // another process's store on the same file
	require.NoError(t, err)
	defer cli.Close()
	cli.now = daemon.now
	_, _, err = cli.Bootstrap("ana")
	require.NoError(t, err)

	steps := []struct {
		name  string
		do    func(t *testing.T)
		moves bool
	}{
		{"nothing happened", func(*testing.T) {}, false},
		{"someone was added", func(t *testing.T) {
			_, err := cli.Add("sam", "member")
			require.NoError(t, err)
		}, true},
		{"still nothing", func(*testing.T) {}, false},
		{"a sign-in link was made", func(t *testing.T) {
			_, err := cli.AddLink("sam", 15*time.Minute)
			require.NoError(t, err)
		}, true},
		{"the link is still good", func(*testing.T) { now = now.Add(14 * time.Minute) }, false},
		{"the link expired", func(*testing.T) { now = now.Add(time.Minute) }, true},
		{"time passes with no link left", func(*testing.T) { now = now.Add(time.Hour) }, false},
		{"someone was removed", func(t *testing.T) { require.NoError(t, cli.Remove("sam")) }, true},
		{"the file went missing", func(t *testing.T) { require.NoError(t, os.Remove(path)) }, true},
		{"and stays missing", func(*testing.T) {}, false},
		{"it was made again", func(t *testing.T) {
			_, err := cli.Add("sam", "member")
			require.NoError(t, err)
		}, true},
		{"it became writable by others", func(t *testing.T) { require.NoError(t, os.Chmod(path, 0o622)) }, true},
		{"going missing then lets in nobody, as before", func(t *testing.T) { require.NoError(t, os.Remove(path)) }, false},
	}
	// The first call settles whatever the store saw as it opened.
	gen := daemon.Generation()
	for _, step := range steps {
		step.do(t)
		next := daemon.Generation()
		if step.moves {
			require.NotEqual(t, gen, next, step.name)
		} else {
			require.Equal(t, gen, next, step.name)
		}
		gen = next
	}
}
