package risk

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// budgetCases are lines too long, too deep or too wide to analyse fully.
// Each is forbidden (issue 12, point 7): a person shown "high" could
// approve padding that hides a forbidden command. Where a command name is
// cheap to find, its own reason is still given (reason).
var budgetCases = map[string]struct {
	cmd    string
	reason string
}{
	"many statements":        {strings.Repeat("ls; ", 5000), ""},
	"padding hides kill":     {strings.Repeat("ls; ", 5000) + "kill 1", "R7"},
	"megabyte of spaces":     {strings.Repeat(" ", 1<<20) + "; reboot", "R8"},
	"megabyte comment":       {"# " + strings.Repeat("a", 1<<20) + "\nkill -9 1", "R7"},
	"megabyte word":          {"echo " + strings.Repeat("a", 1<<20), ""},
	"megabyte unparseable":   {strings.Repeat("a", 1<<20) + " '", ""},
	"deep substitutions":     {strings.Repeat("$(", 200) + "ls" + strings.Repeat(")", 200), ""},
	"deep eval":              {"bash -c '" + strings.Repeat("eval ", 300) + "ls'", ""},
	"nested loops":           {strings.Repeat("for i in 1 2 3 4 5 6 7 8; do ", 12) + "ls" + strings.Repeat("; done", 12), ""},
	"long pipeline":          {strings.Repeat("cat | ", 5000) + "cat", ""},
	"deep process subst":     {strings.Repeat("cat <(", 200) + "ls" + strings.Repeat(")", 200), ""},
	"functions then padding": {strings.Repeat("f() { ls; }; ", 10) + strings.Repeat("ls; ", 5000), ""},
	"half megabyte and":      {strings.Repeat("echo hi && ", 50000) + "shutdown now", "R8"},
}

func TestLinesBeyondTheAnalysisBudgetAreForbidden(t *testing.T) {
	for name, tc := range budgetCases {
		t.Run(name, func(t *testing.T) {
			got := Classify(tc.cmd)
			require.Equal(t, Forbidden, got.Level, "reasons %q", got.Reasons)
			require.True(t, hasReason(got, "R2 analysis budget"), "want a reason saying the budget ran out, got %q", got.Reasons)
			if tc.reason != "" {
				require.True(t, hasReason(got, tc.reason), "want %q among %q", tc.reason, got.Reasons)
			}
		})
	}
}

// Ordinary long work stays within the budget and keeps its real verdict.
func TestOrdinaryLongLinesKeepTheirVerdict(t *testing.T) {
	for name, tc := range map[string]ruleCase{
		"200 echoes":      {strings.Repeat("echo hi; ", 200), Safe, "R15"},
		"20 kB word":      {"echo " + strings.Repeat("a", 20000), Safe, "R15"},
		"100 mkdirs":      {strings.Repeat("mkdir -p build/x && ", 100) + "ls", Moderate, "R14"},
		"200 kB here-doc": {"cat > notes.txt <<'EOF'\n" + strings.Repeat("some text; more | text\n", 8000) + "EOF", Moderate, "R14"},
	} {
		t.Run(name, func(t *testing.T) {
			got := Classify(tc.cmd)
			require.Equal(t, tc.want, got.Level, "reasons %q", got.Reasons)
			require.True(t, hasReason(got, tc.reason), "want %q among %q", tc.reason, got.Reasons)
		})
	}
}
