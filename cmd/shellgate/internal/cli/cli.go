// Package cli is shellgate's command-line client of a running daemon:
// attach, exec, ls, hosts, approvals, approve and deny, with attach's
// terminal UI. It speaks to the daemon only over the network (AHP through
// the client package, the agent API over REST), so that a reader of the
// daemon's wiring in cmd/shellgate does not wade through it.
package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/cmd/shellgate/internal/config"
)

// ExitCode lets a command end the process with a chosen code: a remote
// command's exit status, or 1 when its terminal went away.
type ExitCode int

// Error says which code the process ends with.
func (e ExitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// exitCodeError is ExitCode under the name the commands were written with.
type exitCodeError = ExitCode

// Commands are the client's commands, to add to the root command, which
// carries the --data-dir and --config flags they read the credentials
// file's place from.
func Commands() []*cobra.Command {
	return []*cobra.Command{
		newAttachCmd(), newLsCmd(), newHostsCmd(), newExecCmd(),
		newApprovalsCmd(), newApproveCmd(), newDenyCmd(),
	}
}

// configFromFlags reads the config as serve does, for the data directory.
func configFromFlags(cmd *cobra.Command) (shellgate.Config, error) { return config.FromFlags(cmd) }

// credentialsPath is the credentials file serve writes for the CLI.
func credentialsPath(cfg shellgate.Config) string { return cfg.CredentialsFile() }

// isLoopbackHost says whether host names this machine's loopback.
func isLoopbackHost(host string) bool { return config.IsLoopbackHost(host) }
