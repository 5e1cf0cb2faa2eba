package risk

import "testing"

// Issue 12, point 1: a file written and then run in the same line is
// classified by what was written when that is known, and is at least high
// when it is not.
func TestFilesWrittenThenRunAreClassifiedByContent(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"echo 'rm -rf /' > x.sh; sh x.sh", Forbidden, "R9a"},
		{"printf 'kill 1\\n' > f; bash f", Forbidden, "R7"},
		{"cat > run.sh <<'EOF'\nreboot\nEOF\nbash run.sh", Forbidden, "R8"},
		{"echo 'reboot' | tee t.sh; . t.sh", Forbidden, "R8"},
		{"tee s.sh <<< 'kill 1' >/dev/null; source s.sh", Forbidden, "R7"},
		{"echo 'kill 1' > s; chmod +x s; ./s", Forbidden, "R7"},
		{"echo 'reboot' >> x.sh && bash x.sh", Forbidden, "R8"},
		{"echo 'import os; os.system(\"reboot\")' > k.py; python3 k.py", Forbidden, "R8"},
		{"printf '#!/usr/bin/env python3\\nimport os\\nos.system(\"reboot\")\\n' > k; chmod +x k; ./k", Forbidden, "R8"},
		{"echo 'reboot' > x.sh; echo x.sh | xargs sh", Forbidden, "R8"},
		{"printf 'all:\\n\\treboot\\n' > Makefile; make", Forbidden, "R8"},
		{"printf 'x:\\n\\t@kill 1\\n' > m.mk; make -f m.mk x", Forbidden, "R7"},
		{"printf 'install:\\n\\tkill 1\\n' > GNUmakefile && make install", Forbidden, "R7"},
		{"mkdir -p /tmp/h; echo 'kill 1' > /tmp/h/pre-commit; git -c core.hooksPath=/tmp/h commit -m x", Forbidden, "R7"},
		{"git config core.hooksPath hooks && echo 'reboot' > hooks/pre-commit && git commit -m x", Forbidden, "R8"},
		{"echo 'reboot' > env.sh; BASH_ENV=env.sh bash -c ls", Forbidden, "R8"},
		{"echo 'kill 1' > rc; ENV=./rc sh -c true", Forbidden, "R7"},
		// Content that is not known: at least high.
		{"cp /tmp/payload x.sh && bash x.sh", High, "R3"},
		{"echo \"$X\" > f.sh; source f.sh", High, "R3"},
		{"cat a.sh b.sh > all.sh; bash all.sh", High, "R3"},
		{"sed -i 's/a/b/' run.sh; echo ls > run.sh; sed -i 's/ls/x/' run.sh; bash run.sh", High, "R3"},
	})
}

// A file written with harmless content and run is what it runs.
func TestHarmlessFilesWrittenThenRun(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"echo 'ls -la' > ok.sh; bash ok.sh", Moderate, "R14"},
		{"printf 'all:\\n\\techo hi\\n' > Makefile; make", Moderate, "R14"},
		{"chmod +x deploy.sh && ./deploy.sh", Moderate, "R14"},
		{"touch notes.sh; ls", Moderate, "R14"},
	})
}
