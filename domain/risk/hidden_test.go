package risk

import "testing"

// Issue 12, point 2: options that run a command, and languages that run
// shell text, are classified by the command they run.
func TestOptionsThatRunACommand(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"git grep --open-files-in-pager='kill 1' foo", Forbidden, "R7"},
		{"git grep -O'reboot' foo", Forbidden, "R8"},
		{"git difftool -x 'reboot' HEAD", Forbidden, "R8"},
		{"git rebase --exec 'kill 1' HEAD~3", Forbidden, "R7"},
		{"git rebase -i -x reboot HEAD~2", Forbidden, "R8"},
		{"git bisect run reboot", Forbidden, "R8"},
		{"git submodule foreach 'kill 1'", Forbidden, "R7"},
		{"flock /tmp/l -c 'kill 1'", Forbidden, "R7"},
		{"less '+!reboot' f", Forbidden, "R8"},
		{"more '+!kill 1' f", Forbidden, "R7"},
		{"man -P 'kill 1' ls", Forbidden, "R7"},
		{"man --pager='reboot' ls", Forbidden, "R8"},
		{"tcpdump -z reboot -G 1 -w x", Forbidden, "R8"},
		{"fzf --preview 'kill 1'", Forbidden, "R7"},
		{"fzf --bind 'enter:execute(reboot)'", Forbidden, "R8"},
		{"rsync --rsync-path='kill 1' a h:b", Forbidden, "R7"},
		{"entr -s 'kill 1' < files", Forbidden, "R7"},
		{"find . -name '*.sh' -exec sh {} \\;", High, "R3"},
		{"find . -type f -exec {} \\;", High, "R3"},
	})
}

// Sub-languages that run shell text: awk, sed, database clients, ed.
func TestSubLanguagesThatRunShellText(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"awk 'BEGIN{print \"kill 1\" | \"sh\"}'", Forbidden, "R7"},
		{"awk 'BEGIN { printf \"reboot\\n\" | \"bash\" }'", Forbidden, "R8"},
		{"sed 's/.*/reboot/e' f", Forbidden, "R8"},
		{"sed -n '1s/^/kill 1 #/ep' f", Forbidden, "R7"},
		{"mysql -e '\\! reboot'", Forbidden, "R8"},
		{"psql -c '\\! kill 1'", Forbidden, "R7"},
		{"echo '\\! reboot' | psql", Forbidden, "R8"},
		{"sqlite3 x '.shell reboot'", Forbidden, "R8"},
		{"sqlite3 x '.system kill 1'", Forbidden, "R7"},
		{"sqlite3 -cmd '.shell reboot' x", Forbidden, "R8"},
		{"lua -e 'os.execute(\"reboot\")'", Forbidden, "R8"},
		{"ed -s f <<< '!reboot'", Forbidden, "R8"},
		{"gawk '@load \"x\"; BEGIN{}'", High, "R13 loads a library"},
		{"gawk -l ./evil.so 'BEGIN{}'", High, "R13 loads a library"},
	})
}

// Wrappers that run the command after their own options are transparent.
func TestSchedulingAndLimitWrappersAreTransparent(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"chrt 10 kill 1", Forbidden, "R7"},
		{"chrt -f 50 reboot", Forbidden, "R8"},
		{"taskset -c 0 kill 1", Forbidden, "R7"},
		{"taskset 0x3 reboot", Forbidden, "R8"},
		{"sudo FOO=bar kill 1", Forbidden, "R7"},
		{"sudo -u bob LANG=C reboot", Forbidden, "R8"},
		{"cpulimit -l 10 -- kill 1", Forbidden, "R7"},
		{"numactl -N 0 kill 1", Forbidden, "R7"},
		{"numactl --cpunodebind=0 --membind=0 reboot", Forbidden, "R8"},
		{"prlimit --nofile=10 kill 1", Forbidden, "R7"},
		{"systemd-inhibit --why=x kill 1", Forbidden, "R7"},
		{"dbus-run-session -- kill 1", Forbidden, "R7"},
		{"schedtool -B -e kill 1", Forbidden, "R7"},
	})
}

// What these wrappers and options run when it is harmless.
func TestHiddenExecutionOfHarmlessCommands(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"chrt 10 make", Moderate, "R14"},
		{"taskset -c 0 ls", Safe, "R15"},
		{"numactl -N 0 ./bench", Moderate, "R14"},
		{"less +F log.txt", Safe, "R15"},
		{"man -P cat ls", Safe, "R15"},
		{"git grep -O foo", Safe, "R15"},
		{"git rebase -x 'go test ./...' HEAD~2", Moderate, "R14"},
		{"sed 's/a/b/' f", Safe, "R15"},
		{"awk '{print | \"sort\"}' f", Safe, "R15"},
		{"chrt -p 10 1234", High, "R13"},
		{"taskset -p 0x1 1234", High, "R13"},
	})
}
