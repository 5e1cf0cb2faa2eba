package risk

import "testing"

// Issue 12, point 5: the daemon's files by identity, not spelling. Paths
// through /proc that lead to them, and names found at run time under a
// directory that holds them, are its files.
func TestTheDaemonsOwnFilesByIdentity(t *testing.T) {
	runOwnCases(t, guarding, []ruleCase{
		{"cat /proc/self/root/home/alice/.local/share/shellgate/credentials.json", High, "R13 secret"},
		{"rm -rf /proc/self/root/home/alice/.local/share/shellgate", Forbidden, ownRule},
		{"cat /proc/1/root/home/alice/.local/share/shellgate/users.yaml", High, "R13 secret"},
		{"cat /proc/self/cwd/../.local/share/shellgate/users.yaml", High, "R13 secret"},
		{"cat /proc/$(pgrep shellgate)/cwd/credentials.json", High, "R13 secret"},
		{"find ~/.local -name credentials.json -exec cat {} \\;", High, "R13 secret"},
		{"cat $(find ~/.local -name credentials.json)", High, "R13 secret"},
		{"find ~ -name users.yaml | xargs cat", High, "R13 secret"},
		{"find / -name credentials.json -print0 | xargs -0 cat", High, "R13 secret"},
		{"cat \"$XDG_DATA_HOME/shellgate/credentials.json\"", High, "R13 secret"},
		{"tail -f \"$LOGS/shellgate-audit.log\"", High, "R13 secret"},
		{"rm -rf \"$XDG_DATA_HOME/shellgate\"", Forbidden, ownRule},
		{"find ~/.local -name audit.log -exec truncate -s 0 {} +", Forbidden, ownRule},
	})
}

// Another process's /proc entries are its memory, environment, arguments
// and open files: reading them is secret material (R13).
func TestOtherProcessesProcEntriesAreSecret(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"cat /proc/1234/cmdline", High, "R13 secret"},
		{"cat /proc/$PPID/environ", High, "R13 secret"},
		{"cat /proc/*/fd/3", High, "R13 secret"},
		{"head -c 200 /proc/$pid/maps", High, "R13 secret"},
		{"less /proc/$PPID/cmdline", High, "R13 secret"},
		{"od -c /proc/1/fd/0", High, "R13 secret"},
		{"rm -rf /proc/1/root/", Forbidden, "R9a"},
		{"cat /proc/1/root/etc/shadow", High, "R13 secret"},
		{"tr '\\0' ' ' < /proc/1/cmdline", High, "R13 secret"},
		{"base64 /proc/1/cmdline", High, "R13 secret"},
	})
}

// The shell's own /proc entries and the system-wide ones stay ordinary.
func TestOwnAndSystemProcEntriesStayOrdinary(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"cat /proc/cpuinfo", Safe, "R15"},
		{"cat /proc/self/status", Safe, "R15"},
		{"cat /proc/$$/status", Safe, "R15"},
		{"ls /proc/1/fd", Safe, "R15"},
		{"cat /proc/meminfo /proc/loadavg", Safe, "R15"},
	})
	runOwnCases(t, guarding, []ruleCase{
		{"find . -name '*.go' -exec grep -l TODO {} +", Safe, "R15"},
		{"cat \"$DIR/notes.txt\"", Safe, "R15"},
	})
}
