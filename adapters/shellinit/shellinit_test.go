package shellinit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPrepareRewritesAnInteractiveBash(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sg")
	rc := filepath.Join(dir, "bash", "shellgate.bash")
	tests := []struct {
		name     string
		program  string
		args     []string
		wantArgs []string
		startup  string
	}{
		{"no arguments", "bash", nil, []string{"--rcfile", rc}, "rc"},
		{"absolute path", "/usr/bin/bash", []string{"-i"}, []string{"--rcfile", rc, "-i"}, "rc"},
		{"login flag becomes the profiles", "bash", []string{"-l"}, []string{"--rcfile", rc}, "login"},
		{"long login flag", "bash", []string{"--login", "-i"}, []string{"--rcfile", rc, "-i"}, "login"},
		{"login inside a cluster", "bash", []string{"-il"}, []string{"--rcfile", rc, "-i"}, "login"},
		{"login without profiles reads nothing", "bash", []string{"--login", "--noprofile"}, []string{"--rcfile", rc, "--noprofile"}, "none"},
		{"set -o takes its argument", "bash", []string{"-o", "vi", "+O", "histappend"}, []string{"--rcfile", rc, "-o", "vi", "+O", "histappend"}, "rc"},
		{"other long options kept", "bash", []string{"--noediting"}, []string{"--rcfile", rc, "--noediting"}, "rc"},
		{"a trailing -- is harmless", "bash", []string{"--"}, []string{"--rcfile", rc}, "rc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := []string{"HOME=/home/dev", "SHELLGATE_BASH_STARTUP=stale", "PATH=/bin"}
			orig := append([]string(nil), env...)
			args, newEnv, ok, err := Prepare(dir, tt.program, tt.args, env)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, tt.wantArgs, args)
			require.Equal(t, []string{"HOME=/home/dev", "PATH=/bin", "SHELLGATE_BASH_STARTUP=" + tt.startup}, newEnv)
			require.Equal(t, orig, env, "the caller's env is not modified")
			require.FileExists(t, rc)
		})
	}
}

func TestPrepareLeavesAnythingElseAlone(t *testing.T) {
	tests := []struct {
		name    string
		program string
		args    []string
	}{
		{"bash -c", "bash", []string{"-c", "ls"}},
		{"bash -c in a cluster", "bash", []string{"-lc", "ls"}},
		{"bash script", "bash", []string{"build.sh"}},
		{"bash script after --", "bash", []string{"--", "build.sh"}},
		{"bash reading stdin", "bash", []string{"-s"}},
		{"bash with its own rcfile", "bash", []string{"--rcfile", "/etc/x"}},
		{"bash without rc", "bash", []string{"--norc"}},
		{"bash posix", "bash", []string{"--posix"}},
		{"restricted bash", "bash", []string{"-r"}},
		{"bash -o missing its argument", "bash", []string{"-o"}},
		{"zsh -c", "zsh", []string{"-c", "ls"}},
		{"zsh without rcs", "zsh", []string{"-f"}},
		{"zsh --no-rcs", "zsh", []string{"--no-rcs"}},
		{"zsh script", "zsh", []string{"x.zsh"}},
		{"zsh -ic", "zsh", []string{"-ic", "ls"}},
		{"another shell", "fish", nil},
		{"sh", "/bin/sh", nil},
		{"a name that only contains bash", "/opt/mybash", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sg")
			env := []string{"HOME=/home/dev"}
			args, newEnv, ok, err := Prepare(dir, tt.program, tt.args, env)
			require.NoError(t, err)
			require.False(t, ok)
			require.Equal(t, tt.args, args)
			require.Equal(t, env, newEnv)
			require.NoDirExists(t, dir, "nothing is written for a shell left alone")
		})
	}
}

func TestPreparePointsZshAtItsDirectoryAndRemembersTheUsers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sg")
	ours := filepath.Join(dir, "zsh")
	tests := []struct {
		name    string
		args    []string
		env     []string
		wantEnv []string
	}{
		{
			name:    "no ZDOTDIR of the user's",
			env:     []string{"HOME=/home/dev"},
			wantEnv: []string{"HOME=/home/dev", "ZDOTDIR=" + ours},
		},
		{
			name:    "the user's ZDOTDIR is kept for the scripts",
			args:    []string{"-l"},
			env:     []string{"ZDOTDIR=/home/dev/.config/zsh", "HOME=/home/dev"},
			wantEnv: []string{"HOME=/home/dev", "SHELLGATE_USER_ZDOTDIR=/home/dev/.config/zsh", "ZDOTDIR=" + ours},
		},
		{
			name:    "an empty ZDOTDIR is still the user's",
			args:    []string{"-o", "vi", "-i"},
			env:     []string{"ZDOTDIR=", "SHELLGATE_USER_ZDOTDIR=stale"},
			wantEnv: []string{"SHELLGATE_USER_ZDOTDIR=", "ZDOTDIR=" + ours},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, env, ok, err := Prepare(dir, "/usr/bin/zsh", tt.args, tt.env)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, tt.args, args)
			require.Equal(t, tt.wantEnv, env)
			for _, f := range []string{".zshenv", ".zprofile", ".zshrc"} {
				require.FileExists(t, filepath.Join(ours, f))
			}
		})
	}
}

func TestPrepareWritesTheScriptsPrivatelyAndOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sg")
	_, _, ok, err := Prepare(dir, "bash", nil, nil)
	require.NoError(t, err)
	require.True(t, ok)

	for _, d := range []string{dir, filepath.Join(dir, "bash"), filepath.Join(dir, "zsh")} {
		info, err := os.Stat(d)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o700), info.Mode().Perm(), d)
	}
	rc := filepath.Join(dir, "bash", "shellgate.bash")
	info, err := os.Stat(rc)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	want, err := scripts.ReadFile("scripts/bash.sh")
	require.NoError(t, err)
	have, err := os.ReadFile(rc)
	require.NoError(t, err)
	require.Equal(t, want, have)

	// A second terminal finds the scripts in place and rewrites nothing.
	before, err := os.Stat(rc)
	require.NoError(t, err)
	_, _, _, err = Prepare(dir, "bash", nil, nil)
	require.NoError(t, err)
	after, err := os.Stat(rc)
	require.NoError(t, err)
	require.True(t, os.SameFile(before, after), "the file was replaced")

	// A script someone changed is put back.
	require.NoError(t, os.WriteFile(rc, []byte("echo pwned\n"), 0o600))
	_, _, _, err = Prepare(dir, "bash", nil, nil)
	require.NoError(t, err)
	have, err = os.ReadFile(rc)
	require.NoError(t, err)
	require.Equal(t, want, have)

	entries, err := os.ReadDir(filepath.Join(dir, "bash"))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")
}

func TestPrepareRefusesADirectoryOthersMayWrite(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777))
	args, env, ok, err := Prepare(dir, "bash", []string{"-i"}, []string{"HOME=/x"})
	require.ErrorContains(t, err, "writable by group or others")
	require.False(t, ok)
	require.Equal(t, []string{"-i"}, args)
	require.Equal(t, []string{"HOME=/x"}, env)
}
