package main

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVersionNamesTheCommitAndWhetherTheTreeWasClean(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	cases := []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"a checkout", debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Version: "(devel)"},
			Settings: settings("vcs.revision", "dc81c87aa1b2c3d4e5f6", "vcs.time", "2026-12-01T20:00:00Z", "vcs.modified", "false")},
			"shellgate devel commit dc81c87aa1b2 (2026-12-01T20:00:00Z) go1.26"},
		{"uncommitted changes", debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Version: "(devel)"},
			Settings: settings("vcs.revision", "dc81c87", "vcs.modified", "true")},
			"shellgate devel commit dc81c87+dirty go1.26"},
		{"a tagged release", debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Version: "v1.2.3"},
			Settings: settings("vcs.revision", "0123456789abcdef")},
			"shellgate v1.2.3 commit 0123456789ab go1.26"},
		{"no version control", debug.BuildInfo{GoVersion: "go1.26"},
			"shellgate devel (commit unknown: built without version control information) go1.26"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, versionOf(&tc.info))
		})
	}
}

func TestVersionFallsBackToTheCommitGivenAtLinkTime(t *testing.T) {
	old := buildCommit
	t.Cleanup(func() { buildCommit = old })
	buildCommit = "0123456789abcdef0123"
	got := versionOf(&debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Version: "(devel)"}})
	require.Equal(t, "shellgate devel commit 0123456789ab go1.26", got)
}
