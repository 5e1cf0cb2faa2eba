package cli

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/shellgate/shellgate"
)

// newHostsCmd lists the daemon's machines and how their connections are.
func newHostsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hosts",
		Short: "List the machines terminals may run on: connected or not, round trip, terminals, last error",
		Long: `List the daemon's hosts from its /healthz: main (the daemon's own machine)
and each host of its hosts: section, reached over SSH, with whether its
connection is up, the last keepalive's round trip, how many terminals run
there now and, when it is down, why.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := resolveRemote(cmd)
			if err != nil {
				return err
			}
			return r.scrub(listHosts(cmd, r))
		},
	}
	addRemoteFlags(cmd)
	return cmd
}

func listHosts(cmd *cobra.Command, r remote) error {
	api, err := r.rest()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), setupPatience)
	defer cancel()
	var health struct {
		Hosts []shellgate.HostHealth `json:"hosts"`
	}
	if err := api.Do(ctx, "GET", "/healthz", nil, &health); err != nil {
		return err
	}
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "HOST\tADDRESS\tSTATE\tROUND TRIP\tTERMINALS\tLAST ERROR")
	for _, h := range health.Hosts {
		state, addr, rtt, last := "up", printable(h.Addr), "-", printable(h.LastError)
		if !h.Connected {
			state = "down"
		}
		if addr == "" {
			addr = "(this machine)"
		}
		if h.RoundTrip > 0 {
			rtt = fmt.Sprintf("%.1f ms", h.RoundTrip)
		}
		if last == "" {
			last = "-"
		}
		terms := fmt.Sprint(h.Terminals)
		if h.Addr == "" {
			terms = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", printable(h.Name), addr, state, rtt, terms, last)
	}
	return w.Flush()
}
