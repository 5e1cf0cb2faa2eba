// Package config reads a shellgate.Config the way every shellgate command
// does: the embedded defaults, then the --config file, then the flags the
// user set, then the data directory resolved. The daemon's commands and
// the client's share it, so the client finds the credentials file serve
// wrote.
package config

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shellgate/shellgate"
)

// FromFlags loads the config named by --config and applies the flags the
// user set, then resolves the data directory.
func FromFlags(cmd *cobra.Command) (shellgate.Config, error) {
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
		cfg.DataDir, err = DefaultDataDir()
		if err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// DefaultDataDir is $SHELLGATE_DATA_DIR, else $XDG_DATA_HOME/shellgate, else
// ~/.local/share/shellgate.
func DefaultDataDir() (string, error) {
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

// IsLoopbackHost says whether host (a name or an address, brackets
// allowed) names this machine's loopback.
func IsLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
