package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/shellgate/shellgate"
)

// Config is the daemon's configuration, as the shellgate package defines it.
type Config = shellgate.Config

// configFromFlags loads the config named by --config and applies the flags
// the user set, then resolves the data directory.
func configFromFlags(cmd *cobra.Command) (Config, error) {
	path, _ := cmd.Flags().GetString("config")
	cfg, err := shellgate.LoadConfig(path)
	if err != nil {
		return cfg, err
	}
	if path != "" {
		if cfg.File, err = filepath.Abs(path); err != nil {
			return cfg, fmt.Errorf("config %s: %w", path, err)
		}
	}
	if f := cmd.Flags().Lookup("listen"); f != nil && f.Changed {
		cfg.Listen = f.Value.String()
	}
	if f := cmd.Flags().Lookup("tls-cert"); f != nil && f.Changed {
		cfg.TLSCert = f.Value.String()
	}
	if f := cmd.Flags().Lookup("tls-key"); f != nil && f.Changed {
		cfg.TLSKey = f.Value.String()
	}
	if f := cmd.Flags().Lookup("insecure"); f != nil && f.Changed {
		cfg.Insecure = f.Value.String() == "true"
	}
	if f := cmd.Flags().Lookup("stop-grace"); f != nil && f.Changed {
		if cfg.StopGrace, err = time.ParseDuration(f.Value.String()); err != nil {
			return cfg, fmt.Errorf("--stop-grace: %w", err)
		}
	}
	if f := cmd.Flags().Lookup("data-dir"); f != nil && f.Changed {
		cfg.DataDir = f.Value.String()
	}
	if cfg.DataDir == "" {
		cfg.DataDir, err = defaultDataDir()
		if err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// defaultDataDir is $SHELLGATE_DATA_DIR, else $XDG_DATA_HOME/shellgate, else
// ~/.local/share/shellgate.
func defaultDataDir() (string, error) {
	if d := os.Getenv("SHELLGATE_DATA_DIR"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "shellgate"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no data directory: set --data-dir or SHELLGATE_DATA_DIR (%w)", err)
	}
	return filepath.Join(home, ".local", "share", "shellgate"), nil
}
