package cli

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/userstore"
)

// clientCmd is the ls command with the root's flags, parsed from args.
func clientCmd(t *testing.T, args ...string) *cobra.Command {
	t.Helper()
	root := newRootCmd()
	ls, _, err := root.Find([]string{"ls"})
	require.NoError(t, err)
	require.NoError(t, ls.ParseFlags(args))
	return ls
}

func TestRemoteComesFromFlagsThenEnvironmentThenCredentialsFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, userstore.WriteClientCredentials(filepath.Join(dir, "credentials.json"), "http://127.0.0.1:7000", "sg_file"))
	t.Setenv("SHELLGATE_URL", "")
	t.Setenv("SHELLGATE_TOKEN", "")
	t.Setenv("SHELLGATE_DATA_DIR", "")

	for _, tc := range []struct {
		name      string
		env       map[string]string
		args      []string
		want      remote
		wantError string
	}{
		{name: "the file alone", args: []string{"--data-dir", dir},
			want: remote{url: "http://127.0.0.1:7000", token: "sg_file"}},
		{name: "the data directory from the environment", env: map[string]string{"SHELLGATE_DATA_DIR": dir},
			want: remote{url: "http://127.0.0.1:7000", token: "sg_file"}},
		{name: "flags over everything", env: map[string]string{"SHELLGATE_URL": "http://env:1", "SHELLGATE_TOKEN": "sg_env"},
			args: []string{"--data-dir", dir, "--url", "http://flag:1", "--token", "sg_flag"},
			want: remote{url: "http://flag:1", token: "sg_flag"}},
		{name: "environment over the file", env: map[string]string{"SHELLGATE_URL": "http://env:1", "SHELLGATE_TOKEN": "sg_env"},
			args: []string{"--data-dir", dir},
			want: remote{url: "http://env:1", token: "sg_env"}},
		{name: "a token with the file's URL", args: []string{"--data-dir", dir, "--token", "sg_flag"},
			want: remote{url: "http://127.0.0.1:7000", token: "sg_flag"}},
		{name: "the file's own URL gets the file's token", args: []string{"--data-dir", dir, "--url", "http://127.0.0.1:7000/"},
			want: remote{url: "http://127.0.0.1:7000/", token: "sg_file"}},
		{name: "another URL never gets the file's token", args: []string{"--data-dir", dir, "--url", "http://elsewhere:7000"},
			wantError: "no token for http://elsewhere:7000"},
		{name: "nothing at all", args: []string{"--data-dir", t.TempDir()},
			wantError: "no daemon to talk to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			got, err := resolveRemote(clientCmd(t, tc.args...))
			if tc.wantError != "" {
				require.ErrorContains(t, err, tc.wantError)
				require.NotContains(t, err.Error(), "sg_file")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestScrubHidesTheTokenButKeepsExitCodes(t *testing.T) {
	r := remote{token: "sg_secret"}
	require.EqualError(t, r.scrub(errors.New("bad sg_secret here")), "bad <token> here")
	require.Equal(t, exitCodeError(3), r.scrub(exitCodeError(3)))
	require.NoError(t, r.scrub(nil))
}

func TestPrintableDefusesControlCharacters(t *testing.T) {
	require.Equal(t, `build \x1b]0;owned\x07 \u009b ok\tnext\n`, printable("build \x1b]0;owned\x07 \u009b ok\tnext\n"))
	require.Equal(t, "héllo — ✓", printable("héllo — ✓"))
}
