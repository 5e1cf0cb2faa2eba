package risk

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Every command the classifier knows must cope with odd argument lists
// (none, lone dashes, options missing their values, unknown values) and
// still answer with a reason.
func TestEveryKnownCommandHandlesOddArguments(t *testing.T) {
	suffixes := []string{"", " -", " --", " -- -", " -c", " -e", " -o", " -f", " -x", " -rf", " -p",
		" $X", " \"$X\"/", " a b c", " -c ''", " = =", " ::: a", " exec", " run", " -v /:/h x", " -- sh -c 'ls'"}
	for _, name := range handlerNames() {
		for _, s := range suffixes {
			got := Classify(name + s)
			require.NotEmpty(t, got.Reasons, "%q", name+s)
			require.True(t, got.Level >= Safe && got.Level <= Forbidden, "%q", name+s)
		}
	}
}

func TestHandlerNamesAreSortedAndUnique(t *testing.T) {
	names := handlerNames()
	require.Greater(t, len(names), 400)
	for i := 1; i < len(names); i++ {
		require.Less(t, names[i-1], names[i])
	}
}

// Every command name is registered by exactly one family: building the
// registry again panics on none of them, and a second registration of a
// name panics.
func TestEachCommandIsRegisteredOnce(t *testing.T) {
	require.NotPanics(t, func() { buildRegistry() })
	r := registry{}
	r.add(levelHandler(Safe, "R15 read-only"), "x")
	require.PanicsWithValue(t, `risk: command "x" is registered twice`, func() {
		r.add(levelHandler(High, "R20 unknown executable"), "x")
	})
}

// Every git subcommand in the table answers, with and without arguments.
func TestEveryGitSubcommandInTheTableAnswers(t *testing.T) {
	require.Greater(t, len(gitVerbs), 80)
	for verb := range gitVerbs {
		for _, s := range []string{"", " -f", " --dry-run", " -- .", " $X"} {
			got := Classify("git " + verb + s)
			require.NotEmpty(t, got.Reasons, "git %s%s", verb, s)
			require.NotContains(t, got.Reasons[0], "R20", "git %s%s is in the table", verb, s)
		}
	}
}
