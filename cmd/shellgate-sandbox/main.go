// Command shellgate-sandbox is the sandbox helper of shellgate on its own:
// the daemon starts it, in new namespaces, to confine an agent command and
// run it (adapters/spawner/sandbox). It does exactly what `shellgate
// sandbox-exec` does, and starts faster, since it links nothing else.
// Install it beside shellgate (`go install ./cmd/...`); without it the
// daemon runs its own binary as the helper.
package main

import (
	"os"

	"github.com/shellgate/shellgate/adapters/spawner/sandbox"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == sandbox.Command {
		os.Exit(sandbox.Main(os.Args[2:]))
	}
	os.Stderr.WriteString("shellgate-sandbox is started by shellgate serve to confine agent commands; it is not run by hand\n")
	os.Exit(2)
}
