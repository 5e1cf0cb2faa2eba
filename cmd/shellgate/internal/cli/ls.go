package cli

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/shellgate/shellgate/cmd/shellgate/internal/client"
)

// newLsCmd lists the terminals from the root channel's snapshot.
func newLsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List the daemon's terminals: URI, title, host, who holds each (a person's name, or the agent session) and whether it is running",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := resolveRemote(cmd)
			if err != nil {
				return err
			}
			return r.scrub(listTerminals(cmd, r))
		},
	}
	addRemoteFlags(cmd)
	return cmd
}

func listTerminals(cmd *cobra.Command, r remote) error {
	c, res, err := r.dial(cmd.Context(), client.RootChannel)
	if err != nil {
		return err
	}
	defer c.Close()
	snap, ok := res.Snapshot(client.RootChannel)
	if !ok {
		return errors.New("the daemon sent no root list")
	}
	root, err := snap.Root()
	if err != nil {
		return err
	}
	if len(root.Terminals) == 0 {
		// On stderr, so a script reading stdout sees an empty list.
		fmt.Fprintln(cmd.ErrOrStderr(), "no terminals")
		return nil
	}
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TERMINAL\tTITLE\tHOST\tHOLDER\tSTATUS")
	for _, t := range root.Terminals {
		host := t.Meta.Host
		if host == "" {
			host = "main"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", printable(t.Resource), printable(t.Title), printable(host), printable(root.Holder(t)), t.Status())
	}
	return w.Flush()
}
