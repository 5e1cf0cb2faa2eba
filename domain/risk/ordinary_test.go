package risk

import "testing"

// Issue 12, point 9: ordinary work is not a false alarm.
func TestOrdinaryWorkIsNotAFalseAlarm(t *testing.T) {
	runRuleCases(t, []ruleCase{
		// A function defined and called in the line is its body.
		{"f() { ls; }; f", Safe, "R15"},
		{"function build { make; }; build", Moderate, "R14"},
		{"build() { go build ./...; }; build && echo ok", Moderate, "R14"},
		// A function defined and never called adds nothing.
		{"cleanup() { rm -rf \"$TMPDIR/work\"; }; echo hi", Safe, "R15"},
		{"function deploy() { kubectl apply -f k8s/; }", Safe, "R15"},
		// Well-known CLIs: reads are read-only queries (like kubectl get),
		// writes act remotely.
		{"gh pr view 12", Safe, "R15"},
		{"gh run list --limit 5", Safe, "R15"},
		{"gh pr create --fill", High, "R11"},
		{"gh repo delete x --yes", Dangerous, "R10"},
		// Commands that only look.
		{"shellcheck x.sh", Safe, "R15"},
		{"git push --force --dry-run", Moderate, "R11"},
		{"apt-get install -s nginx", Safe, "R15"},
		{"pip install --dry-run requests", Moderate, "R11"},
		{"kubectl apply --dry-run=client -f x.yaml", Safe, "R15"},
		{"rsync -avn src/ dst/", Safe, "R15"},
		{"helm upgrade --dry-run x ./chart", Safe, "R15"},
		// ... and commands that look but also write or reach the network.
		{"ruff check --fix", Moderate, "R14"},
		{"npm outdated", Moderate, "R11"},
	})
}

// What stays as risky as it was: a definition that shadows a command or
// has a forbidden body, and a function that does run.
func TestDefinitionsThatStillCount(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"rm() { echo; }; rm -rf /", Forbidden, "R9a"},
		{"ls() { kill 1; }", Forbidden, "R7"},
		{"f() { kill 1; }", Forbidden, "R7"},
		{"cleanup() { rm -rf /tmp/w; }; trap cleanup EXIT", Dangerous, "R10"},
		{"f() { rm -rf /tmp/w; }; f", Dangerous, "R10"},
		{"ls() { rm -rf build; }", Dangerous, "R10"},
	})
}
