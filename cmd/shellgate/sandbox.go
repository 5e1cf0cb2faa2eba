package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/adapters/spawner/sandbox"
	"github.com/shellgate/shellgate/ports"
)

func newSandboxCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "sandbox", Short: "Show how agent commands are confined"}
	status := &cobra.Command{
		Use:   "status",
		Short: "Probe this machine's kernel as the daemon does and say what a sandboxed agent command cannot do",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := configFromFlags(c)
			if err != nil {
				return err
			}
			sb := sandbox.New(c.Context(), shellgate.SandboxConfig(cfg))
			defer sb.Close()
			h := shellgate.SandboxHealth(cfg, sb.Status())
			if asJSON, _ := c.Flags().GetBool("json"); asJSON {
				enc := json.NewEncoder(c.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(h)
			}
			out := c.OutOrStdout()
			if !h.Available {
				fmt.Fprintf(out, "sandbox: unavailable: %s\nagent commands run unconfined and are decided by the unconfined table\n", h.Reason)
				return nil
			}
			fmt.Fprintf(out, "sandbox: available (mode %s, network %s)\n", h.Mode, h.Network)
			if h.Mode == string(ports.SandboxOff) {
				fmt.Fprintln(out, "agent_terminal.sandbox is off: agent commands run unconfined")
			}
			fmt.Fprintf(out, "landlock ABI: %d\nmechanisms: %s\nhelper: %s\na sandboxed command:\n", h.LandlockABI, strings.Join(h.Mechanisms, ", "), h.Helper)
			for _, line := range h.Confines {
				fmt.Fprintf(out, "  - %s\n", line)
			}
			return nil
		},
	}
	status.Flags().Bool("json", false, "print the status as JSON")
	cmd.AddCommand(status)
	return cmd
}
