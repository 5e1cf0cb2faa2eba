package main

import (
	"runtime/debug"
	"strings"
)

// buildCommit is the commit a build was made from when the toolchain could
// not record it itself (-buildvcs=false, a git worktree, a source tarball):
// go build -ldflags "-X main.buildCommit=$(git rev-parse HEAD)".
var buildCommit string

// version says which build this is: the module's version when installed
// from a tagged release, else "devel", with the commit and the date it was
// made and "+dirty" when the build had uncommitted changes. Go records the
// VCS settings when it builds from a checkout (go build, go install ./...),
// so nothing has to be passed with -ldflags.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "shellgate (no build information)"
	}
	return versionOf(info)
}

// versionOf is version for given build information, so it can be tested
// without a real build.
func versionOf(info *debug.BuildInfo) string {
	v := info.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var revision, at string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	var b strings.Builder
	b.WriteString("shellgate " + v)
	if revision == "" {
		revision = buildCommit
	}
	if revision != "" {
		if len(revision) > 12 {
			revision = revision[:12]
		}
		b.WriteString(" commit " + revision)
		if dirty {
			b.WriteString("+dirty")
		}
		if at != "" {
			b.WriteString(" (" + at + ")")
		}
	} else {
		b.WriteString(" (commit unknown: built without version control information)")
	}
	b.WriteString(" " + info.GoVersion)
	return b.String()
}
