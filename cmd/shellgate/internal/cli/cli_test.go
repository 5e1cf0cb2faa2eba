package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/spf13/cobra"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newRootCmd is the client's commands under a root with the flags the
// real root gives them.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{Use: "shellgate", SilenceUsage: true, SilenceErrors: true}
	root.PersistentFlags().String("data-dir", "", "")
	root.PersistentFlags().String("config", "", "")
	root.AddCommand(Commands()...)
	return root
}

// run executes a client command line as main does and returns its exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.ExecuteContext(context.Background()); err != nil {
		var ec ExitCode
		if errors.As(err, &ec) {
			return int(ec)
		}
		fmt.Fprintln(stderr, "shellgate:", err)
		return 1
	}
	return 0
}
