package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/shellgate/shellgate"
)

func newServeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the daemon in the foreground",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := configFromFlags(cmd)
			if err != nil {
				return err
			}
			if err := checkListen(cfg); err != nil {
				return err
			}
			if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
				return fmt.Errorf("data directory: %w", err)
			}
			app := shellgate.New(cfg, cmd.ErrOrStderr())
			if err := app.Start(cmd.Context()); err != nil {
				return err
			}
			base := app.BaseURL()
			if err := bootstrap(cmd.OutOrStdout(), cfg, app.Users(), base); err != nil {
				_ = app.Stop(context.Background())
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "shellgate serving on %s (data in %s)\n", base, cfg.DataDir)
			<-cmd.Context().Done()
			fmt.Fprintln(cmd.OutOrStdout(), "shellgate stopping: ending every terminal")
			ctx, cancel := context.WithTimeout(context.Background(), cfg.StopGrace+10*time.Second)
			defer cancel()
			return app.Stop(ctx)
		},
	}
	cmd.Flags().String("listen", "127.0.0.1:7681", "address to listen on (loopback by default)")
	cmd.Flags().String("tls-cert", "", "TLS certificate file (needed to listen beyond loopback)")
	cmd.Flags().String("tls-key", "", "TLS key file")
	cmd.Flags().Bool("insecure", false, "allow a non-loopback address without TLS")
	cmd.Flags().Duration("stop-grace", 5*time.Second, "on stop, how long terminals get between SIGTERM and SIGKILL (config: stop_grace)")
	return cmd
}
