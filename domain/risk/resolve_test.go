package risk

import "testing"

// Issue 12, point 6: the resolver computes the values bash would.
func TestResolverGetsValuesRight(t *testing.T) {
	runRuleCases(t, []ruleCase{
		// printf %b takes \0nnn octal escapes.
		{"$(printf %b '\\0162\\0155') -rf /", Forbidden, "R9a"},
		{"$(printf '%b' '\\0153\\0151\\0154\\0154') 1", Forbidden, "R7"},
		{"c=$(printf %b '\\0162\\0145\\0142\\0157\\0157\\0164'); $c", Forbidden, "R8"},
		// NUL-separated lists.
		{"printf '/\\0' | xargs -0 rm -rf", Forbidden, "R9a"},
		{"printf 'build\\0/\\0' | xargs -0 rm -rf", Forbidden, "R9a"},
		{"printf '%s\\0' / | xargs --null rm -rf", Forbidden, "R9a"},
		// Substitutions that print a directory.
		{"rm -rf \"$(cd ~ && pwd)\"", Forbidden, "R9a"},
		{"rm -rf \"$(cd / && pwd)\"", Forbidden, "R9a"},
		{"cd / && rm -rf \"$(pwd)\"", Forbidden, "R9a"},
		{"d=$(cd /etc && pwd); rm -rf \"$d\"", Forbidden, "R9a"},
		{"rm -rf \"$(realpath ~)\"", Forbidden, "R9a"},
		// Positional parameters of a script read from stdin.
		{"sh -s -- / <<< 'rm -rf \"$1\"'", Forbidden, "R9a"},
		{"bash -s / <<'EOF'\nrm -rf \"$1\"\nEOF", Forbidden, "R9a"},
		// /proc/self/exe is the shell itself.
		{"/proc/self/exe -c 'kill 1'", Forbidden, "R7"},
		{"/proc/thread-self/exe -c reboot", Forbidden, "R8"},
		// Arrays and set -- keep their words.
		{"a=(kill 1); \"${a[@]}\"", Forbidden, "R7"},
		{"a=(rm -rf /); \"${a[@]}\"", Forbidden, "R9a"},
		{"set -- kill 1; \"$@\"", Forbidden, "R7"},
		{"sh=$(readlink /proc/self/exe); rm -rf \"$(dirname $sh)\"", Forbidden, "R9a"},
	})
}

// Values that resolve to ordinary paths stay ordinary.
func TestResolvedOrdinaryValues(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"rm -rf \"$(cd /tmp/build && pwd)\"", Dangerous, "R10"},
		{"printf 'a\\0b\\0' | xargs -0 rm -f", Dangerous, "R10"},
		{"echo \"$(pwd)\"", Safe, "R15"},
	})
}
