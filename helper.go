package shellgate

import (
	"os"

	"github.com/shellgate/shellgate/adapters/runguard"
	"github.com/shellgate/shellgate/adapters/spawner/sandbox"
)

// Helper runs one of the daemon's helper processes when args (os.Args)
// ask for one, and says so. The daemon starts its run guard, and the
// sandbox its helper, as its own executable with the helper's name first,
// so a program that embeds the daemon calls this before anything else of
// its own runs:
//
//	if code, ok := shellgate.Helper(os.Args); ok {
//		os.Exit(code)
//	}
func Helper(args []string) (code int, ok bool) {
	if len(args) < 2 {
		return 0, false
	}
	switch args[1] {
	case sandbox.Command:
		// The sandbox's helper confines itself before anything else runs.
		return sandbox.Main(args[2:]), true
	case runguard.Command:
		return runguard.Main(args[2:], os.Stdin), true
	}
	return 0, false
}
