// Command shellgate serves terminals to people and to AI agents.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/cmd/shellgate/internal/cli"
	"github.com/shellgate/shellgate/cmd/shellgate/internal/config"
)

func main() {
	// The sandbox's helper and the run guard are this binary: the sandbox's
	// must confine itself before anything else of the CLI runs.
	if code, ok := shellgate.Helper(os.Args); ok {
		os.Exit(code)
	}
	leaveCoresToChildren()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// leaveCoresToChildren runs Go code on half the CPUs the runtime would
// take (at least one) unless GOMAXPROCS says otherwise. The daemon's work
// for a byte is light and passes from goroutine to goroutine (the pump,
// a connection's writer); a processor for each CPU made the runtime wake
// and spin threads for each hand-off, on CPUs the terminals' own processes
// were waiting for. On two CPUs, one processor took a pty flood from 0.73×
// the plain read loop to 0.96–1.13× (docs/measured.md, "Processors").
func leaveCoresToChildren() {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	runtime.GOMAXPROCS(max(1, runtime.GOMAXPROCS(0)/2))
}

// run executes the CLI and returns the process exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		var ec exitCodeError
		if asExitCode(err, &ec) {
			return int(ec)
		}
		fmt.Fprintln(stderr, "shellgate:", err)
		return 1
	}
	return 0
}

// exitCodeError lets a command end the process with a chosen code; the
// client's commands return the same type.
type exitCodeError = cli.ExitCode

func asExitCode(err error, target *exitCodeError) bool {
	ec, ok := err.(exitCodeError)
	if ok {
		*target = ec
	}
	return ok
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "shellgate",
		Short:         "Serve terminals to people and AI agents, with a gate in front of every command",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
	}
	// cobra's default template would print "shellgate version shellgate …".
	root.SetVersionTemplate("{{.Version}}\n")
	root.PersistentFlags().String("data-dir", "", "where shellgate keeps its state (default $SHELLGATE_DATA_DIR, else the per-user data directory)")
	root.PersistentFlags().String("config", "", "a YAML config file")
	root.AddCommand(newServeCmd())
	root.AddCommand(newURLCmd())
	root.AddCommand(newClassifyCmd())
	root.AddCommand(newAuditCmd())
	root.AddCommand(newTokenCmd())
	root.AddCommand(cli.Commands()...)
	root.AddCommand(newSandboxCmd())
	return root
}

// Config is the daemon's configuration, as the shellgate package defines it.
type Config = shellgate.Config

// configFromFlags reads the config as every command does.
func configFromFlags(cmd *cobra.Command) (Config, error) { return config.FromFlags(cmd) }
