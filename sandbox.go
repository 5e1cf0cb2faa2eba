package shellgate

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/shellgate/shellgate/adapters/spawner/sandbox"
	"github.com/shellgate/shellgate/ports"
)

// unavailableEnv forces the sandbox's probe to fail, so that the
// unconfined path can be tested against the real daemon.
const unavailableEnv = "SHELLGATE_SANDBOX_UNAVAILABLE"

// defaultDenyRead are the credentials of the daemon's user that no agent
// command reads (agent_terminal.sandbox_deny_read).
var defaultDenyRead = []string{"~/.ssh", "~/.aws", "~/.gnupg", "~/.kube", "~/.config/gcloud", "~/.docker", "~/.netrc"}

// Bytes is a size written as a number of bytes or with a unit (512MiB, 2GiB,
// 100MB).
type Bytes int64

// UnmarshalYAML reads either spelling.
func (b *Bytes) UnmarshalYAML(n *yaml.Node) error {
	v, err := parseBytes(n.Value)
	if err != nil || n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a size such as 2GiB or 536870912, not %q", n.Line, n.Value)
	}
	*b = Bytes(v)
	return nil
}

func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(num), u.mult
			break
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return v * mult, nil
}

// Switch is on or off (also true or false).
type Switch bool

// UnmarshalYAML reads on/off/true/false.
func (s *Switch) UnmarshalYAML(n *yaml.Node) error {
	switch strings.ToLower(n.Value) {
	case "on", "true", "yes":
		*s = true
	case "off", "false", "no":
		*s = false
	default:
		return fmt.Errorf("line %d: want on or off, not %q", n.Line, n.Value)
	}
	return nil
}

// sandboxMode checks agent_terminal.sandbox.
func sandboxMode(s string) (ports.SandboxMode, error) {
	switch m := ports.SandboxMode(s); m {
	case ports.SandboxWorkspaceWrite, ports.SandboxReadOnly, ports.SandboxOff:
		return m, nil
	case "":
		return ports.SandboxWorkspaceWrite, nil
	}
	return "", fmt.Errorf("agent_terminal.sandbox is %q; want workspace-write, read-only or off", s)
}

// expandHome turns a leading ~ into the daemon user's home directory.
func expandHome(p string) string {
	home, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	if p == "~" {
		return home
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(home, rest)
	}
	return p
}

// SandboxConfig is what the sandbox of a daemon run with cfg hides and
// limits (shellgate sandbox status probes with it).
func SandboxConfig(cfg Config) sandbox.Config { return sandboxConfig(cfg) }

// SandboxHealth is the sandbox part of /healthz for cfg and a probe's status.
func SandboxHealth(cfg Config, st ports.SandboxStatus) SandboxReport { return healthOf(cfg, st) }

// SandboxReport is the sandbox part of /healthz.
type SandboxReport = sandboxHealth

// sandboxConfig says what the sandbox hides and limits for cfg: the
// daemon's own files (as the classifier knows them) and the denied paths
// are unreadable; the limits are the config's.
func sandboxConfig(cfg Config) sandbox.Config {
	at := cfg.AgentTerminal
	var hide []string
	for _, p := range []string{cfg.DataDir, usersPath(cfg), credentialsPath(cfg), auditLogPath(cfg), cfg.File, cfg.TLSKey} {
		hide = append(hide, pathForms(p)...)
	}
	for _, p := range at.SandboxDenyRead {
		hide = append(hide, pathForms(expandHome(p))...)
	}
	var writable []string
	for _, p := range at.SandboxAllowWrite {
		writable = append(writable, pathForms(expandHome(p))...)
	}
	sc := sandbox.Config{Hide: hide, Writable: writable, MaxPids: at.MaxPids, MaxMemory: int64(at.MaxMemory), RunAs: at.RunAs}
	if v := os.Getenv(unavailableEnv); v != "" {
		sc.Unavailable = "forced off by " + unavailableEnv
	}
	return sc
}

// WorkspaceRoots are the directories an agent session's workspace must
// lie in, absolute; the first is the default workspace.
func (c Config) WorkspaceRoots() []string { return workspaceRoots(c) }

// workspaceRoots are agent_terminal.workspace_roots, made absolute; the
// default is the directory serve started in.
func workspaceRoots(cfg Config) []string {
	roots := cfg.AgentTerminal.WorkspaceRoots
	if len(roots) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return nil
		}
		roots = []string{wd}
	}
	out := make([]string, 0, len(roots))
	for _, r := range roots {
		if abs, err := filepath.Abs(expandHome(r)); err == nil {
			out = append(out, abs)
		}
	}
	return out
}

func logSandbox(log *slog.Logger, cfg Config, st ports.SandboxStatus) {
	mode := cfg.AgentTerminal.Sandbox
	switch {
	case mode == string(ports.SandboxOff):
		log.Warn("agent commands run unconfined: agent_terminal.sandbox is off")
	case !st.Available:
		log.Warn("agent commands run unconfined: the sandbox is unavailable", "reason", st.Reason)
	default:
		log.Info("agent commands run sandboxed", "mode", mode, "network", bool(cfg.AgentTerminal.Network),
			"mechanisms", strings.Join(st.Mechanisms, ", "))
	}
}

// sandboxHealth is the sandbox part of /healthz.
type sandboxHealth struct {
	Mode        string   `json:"mode"`
	Network     string   `json:"network"`
	Available   bool     `json:"available"`
	Reason      string   `json:"reason,omitempty"`
	LandlockABI int      `json:"landlock_abi"`
	Mechanisms  []string `json:"mechanisms"`
	Confines    []string `json:"confines"`
	Cgroup      string   `json:"cgroup,omitempty"`
	Helper      string   `json:"helper,omitempty"`
}

func healthOf(cfg Config, st ports.SandboxStatus) sandboxHealth {
	network := "off"
	if cfg.AgentTerminal.Network {
		network = "on"
	}
	h := sandboxHealth{
		Mode: cfg.AgentTerminal.Sandbox, Network: network, Available: st.Available, Reason: st.Reason,
		LandlockABI: st.LandlockABI, Mechanisms: nonNilStrings(st.Mechanisms), Confines: nonNilStrings(st.Confines), Cgroup: st.Cgroup,
		Helper: st.Helper,
	}
	if h.Mode == "" {
		h.Mode = string(ports.SandboxWorkspaceWrite)
	}
	return h
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
