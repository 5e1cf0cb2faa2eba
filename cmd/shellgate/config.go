package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

// Config is everything a daemon run is set with: the embedded defaults, then
// the YAML file, then flags.
type Config struct {
	// Listen is the address to serve on.
	Listen string `yaml:"listen"`
	// DataDir holds the daemon's state.
	DataDir string `yaml:"data_dir"`
	// Shell is the shell terminals open; empty means $SHELL, else /bin/sh.
	Shell string `yaml:"shell"`
	// ScrollbackChars bounds each terminal's scrollback.
	ScrollbackChars int `yaml:"scrollback_chars"`
	// StopGrace is how long stopping waits between SIGTERM and SIGKILL.
	StopGrace time.Duration `yaml:"stop_grace"`
	// ShellIntegration makes an interactive bash or zsh under a pty report
	// its command boundaries (it loads a small script shellgate ships).
	ShellIntegration bool `yaml:"shell_integration"`
	// ScreenModel keeps a screen model of a pty terminal while its program
	// shows the alternate screen, which late viewers are drawn from (the
	// snapshot's shellgate/screen).
	ScreenModel bool `yaml:"screen_model"`
	// ClientQueueBytes bounds how far one client may fall behind the
	// others before it is closed with a reason (a client alone, or every
	// client of a terminal, is paced instead: see the marks).
	ClientQueueBytes int `yaml:"client_queue_bytes"`
	// ClientHighWater and ClientLowWater are the flow-control marks: a
	// terminal whose every viewer holds ClientHighWater bytes not yet
	// written to it stops reading its process until one is back at
	// ClientLowWater.
	ClientHighWater Bytes `yaml:"client_high_water"`
	ClientLowWater  Bytes `yaml:"client_low_water"`
	// MaxClientMemory caps the bytes held for every client together; past
	// it the client furthest behind is closed. 0: no cap.
	MaxClientMemory Bytes `yaml:"max_client_memory"`
	// RequestHeaderTimeout bounds how long an HTTP request's headers may
	// take to arrive; RequestBodyTimeout bounds its body, from the moment
	// its headers are in. A client that trickles either is cut off.
	RequestHeaderTimeout time.Duration `yaml:"request_header_timeout"`
	RequestBodyTimeout   time.Duration `yaml:"request_body_timeout"`
	// MetricsPublic serves /metrics without a sign-in.
	MetricsPublic bool `yaml:"metrics_public"`
	// SignInGrace closes a protocol connection still without a sign-in
	// this long after it arrived.
	SignInGrace time.Duration `yaml:"sign_in_grace"`
	// MaxUnauthenticatedConnections caps the protocol connections open
	// without a sign-in at once; signed-in ones are not counted.
	MaxUnauthenticatedConnections int `yaml:"max_unauthenticated_connections"`
	// TLSCert and TLSKey serve HTTPS/WSS; needed to listen beyond loopback.
	TLSCert string `yaml:"tls_cert"`
	TLSKey  string `yaml:"tls_key"`
	// Insecure allows a non-loopback address without TLS.
	Insecure bool `yaml:"insecure"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `yaml:"log_level"`
	// AgentTerminal configures the agent command gate (seed 002).
	AgentTerminal AgentTerminalConfig `yaml:"agent_terminal"`

	// File is the config file this was read from (--config), absolute;
	// empty when there was none. It is one of the daemon's own files that
	// agent commands may not read or change.
	File string `yaml:"-"`
}

// defaultConfig is the embedded default: a working daemon with no file.
func defaultConfig() Config {
	return Config{
		Listen:                        "127.0.0.1:7681",
		ScrollbackChars:               200_000,
		StopGrace:                     5 * time.Second,
		ClientQueueBytes:              8 << 20,
		ClientHighWater:               512 << 10,
		ClientLowWater:                128 << 10,
		MaxClientMemory:               256 << 20,
		RequestHeaderTimeout:          10 * time.Second,
		RequestBodyTimeout:            30 * time.Second,
		SignInGrace:                   2 * time.Minute,
		MaxUnauthenticatedConnections: 64,
		ShellIntegration:              true,
		ScreenModel:                   true,
		LogLevel:                      "info",
		AgentTerminal:                 defaultAgentTerminal(),
	}
}

// loadConfig reads the YAML file at path over the defaults. An unknown key
// is an error that names it.
func loadConfig(path string) (Config, error) {
	cfg := defaultConfig()
	if path == "" {
		return cfg, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return cfg, fmt.Errorf("read config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	if err := cfg.checkMarks(); err != nil {
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// checkMarks refuses marks that cannot work: a terminal must resume below
// where it paused, and pause well before a viewer is a whole bound behind.
func (c Config) checkMarks() error {
	switch {
	case c.ClientLowWater <= 0 || c.ClientHighWater <= c.ClientLowWater:
		return fmt.Errorf("client_low_water (%d) must be above 0 and below client_high_water (%d)", c.ClientLowWater, c.ClientHighWater)
	case int64(c.ClientHighWater) > int64(c.ClientQueueBytes)/2:
		return fmt.Errorf("client_high_water (%d) must be at most half of client_queue_bytes (%d), or viewers that keep up would be closed", c.ClientHighWater, c.ClientQueueBytes)
	}
	return nil
}

// configFromFlags loads the config named by --config and applies the flags
// the user set, then resolves the data directory.
func configFromFlags(cmd *cobra.Command) (Config, error) {
	path, _ := cmd.Flags().GetString("config")
	cfg, err := loadConfig(path)
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
