package terminal_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/domain/terminal"
)

func TestPathFromURI(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"file:///tmp", "/tmp", true},
		{"file:///tmp/my%20dir", "/tmp/my dir", true},
		{"file://host/etc", "/etc", true},
		{"file:///tmp/C%23", "/tmp/C#", true},
		{"/var/log/", "/var/log", true},
		{"relative/dir", "", false},
		{"http://x/y", "", false},
		{"file:relative", "", false},
	}
	for _, tt := range tests {
		got, err := terminal.PathFromURI(tt.in)
		if !tt.ok {
			require.Error(t, err, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		require.Equal(t, tt.want, got)
	}
}

func TestURIFromPathRoundTrips(t *testing.T) {
	for _, p := range []string{"/tmp", "/tmp/my dir", "/tmp/C#", "/tmp/a?b", "/tmp/日本"} {
		back, err := terminal.PathFromURI(terminal.URIFromPath(p))
		require.NoError(t, err)
		require.Equal(t, p, back)
	}
	require.Equal(t, "file:///tmp/my%20dir", terminal.URIFromPath("/tmp/my dir"))
}
