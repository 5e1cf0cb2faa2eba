package shellgate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

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
	// MaxConnections caps the protocol connections open at once, signed in
	// or not; AdminReservedConnections more are kept for admins.
	MaxConnections           int `yaml:"max_connections"`
	AdminReservedConnections int `yaml:"admin_reserved_connections"`
	// MaxTerminalsPerPerson caps the terminals one person holds (exited
	// ones until disposed of included); 0 is no limit.
	MaxTerminalsPerPerson int `yaml:"max_terminals_per_person"`
	// OpenFileReserve is how many of the daemon's last open files only an
	// admin's new terminal may use; 0 keeps none.
	OpenFileReserve int `yaml:"open_file_reserve"`
	// TLSCert and TLSKey serve HTTPS/WSS; needed to listen beyond loopback.
	TLSCert string `yaml:"tls_cert"`
	TLSKey  string `yaml:"tls_key"`
	// Insecure allows a non-loopback address without TLS.
	Insecure bool `yaml:"insecure"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `yaml:"log_level"`
	// AgentTerminal configures the agent command gate (seed 002).
	AgentTerminal AgentTerminalConfig `yaml:"agent_terminal"`
	// Hosts are the other machines terminals may run on, over SSH; "main"
	// is always this one.
	Hosts map[string]HostConfig `yaml:"hosts"`

	// File is the config file this was read from (--config), absolute;
	// empty when there was none. It is one of the daemon's own files that
	// agent commands may not read or change.
	File string `yaml:"-"`
}

// DefaultConfig is the embedded default: a working daemon with no file,
// once DataDir is set.
func DefaultConfig() Config { return defaultConfig() }

// LoadConfig reads the YAML file at path over the defaults; an empty path
// is the defaults. An error names the file, the line and what belongs
// there.
func LoadConfig(path string) (Config, error) { return loadConfig(path) }

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
		MaxConnections:                256,
		AdminReservedConnections:      4,
		MaxTerminalsPerPerson:         64,
		OpenFileReserve:               64,
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
		return cfg, fmt.Errorf("config %s: %s", path, configProblem(err))
	}
	if err := checkHosts(cfg.Hosts); err != nil {
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	if err := cfg.checkMarks(); err != nil {
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// yamlLine is one of yaml's complaints, e.g. "line 2: cannot unmarshal !!str
// `lots` into int" or "line 1: field listn not found in type main.Config".
var (
	yamlMismatch = regexp.MustCompile("^line (\\d+): cannot unmarshal !!(\\w+)(?: `(.*)`)? into (\\S+)$")
	yamlUnknown  = regexp.MustCompile(`^line (\d+): field (\S+) not found in type \S+$`)
)

// configKinds words the Go types of Config's fields as what to write.
var configKinds = map[string]string{
	"string":        "text",
	"int":           "a whole number",
	"bool":          "true or false",
	"time.Duration": "a duration such as 5s or 2m",
	"[]string":      "a list such as [a, b]",
}

// configProblem says what is wrong with a config file in the file's own
// terms: its line, key and what belongs there. yaml's messages name Go
// types (time.Duration, main.Config), which mean nothing to the person
// who wrote the file.
func configProblem(err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return strings.TrimPrefix(err.Error(), "yaml: ")
	}
	lines := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		if m := yamlUnknown.FindStringSubmatch(e); m != nil {
			lines = append(lines, fmt.Sprintf("line %s: there is no setting called %s (the README's Configuration lists them)", m[1], m[2]))
			continue
		}
		if m := yamlMismatch.FindStringSubmatch(e); m != nil {
			want, ok := configKinds[m[4]]
			if !ok {
				want = "a value of another kind"
			}
			got := "a " + map[string]string{"seq": "list", "map": "mapping", "str": "text", "int": "number", "bool": "boolean", "float": "number"}[m[2]]
			if m[3] != "" {
				got = fmt.Sprintf("%q", m[3])
			}
			lines = append(lines, fmt.Sprintf("line %s: %s is not %s", m[1], got, want))
			continue
		}
		lines = append(lines, e)
	}
	return strings.Join(lines, "; ")
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
