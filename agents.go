package shellgate

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/shellgate/shellgate/adapters/audit"
	"github.com/shellgate/shellgate/adapters/httpserver"
	"github.com/shellgate/shellgate/adapters/shellexpand"
	"github.com/shellgate/shellgate/app/agents"
	"github.com/shellgate/shellgate/app/gate"
	"github.com/shellgate/shellgate/domain/access"
	"github.com/shellgate/shellgate/domain/risk"
	"github.com/shellgate/shellgate/ports"
)

// AgentTerminalConfig is the agent_terminal section of the config file:
// seed 002's keys, and shellgate's own beside them.
type AgentTerminalConfig struct {
	// DefaultHost is the host a session runs on when it names none; it and
	// "main" both mean this machine, and any other host is refused.
	DefaultHost string `yaml:"default_host"`
	// SessionTimeout ends a session idle this long (seconds, as the seed
	// writes it, or a duration such as 1h); 0 never ends one.
	SessionTimeout Seconds `yaml:"session_timeout"`
	// ApprovalRequiredFor lists risk levels that always wait for a person's
	// approval, on top of the role table; it never unblocks anything.
	ApprovalRequiredFor []risk.Level `yaml:"approval_required_for"`
	// MaxConcurrentSessions refuses a new session while this many are open;
	// 0 is no limit.
	MaxConcurrentSessions int `yaml:"max_concurrent_sessions"`
	// MaxSessionsPerAgent refuses a new session while the agent asking
	// (its principal) has this many open; 0 is no limit.
	MaxSessionsPerAgent int `yaml:"max_sessions_per_agent"`
	// MaxConcurrentCommands refuses a session's next command while this
	// many of its commands are running (429 too_many_commands); 0 is no
	// limit.
	MaxConcurrentCommands int `yaml:"max_concurrent_commands"`
	// CommandTimeout kills an agent command's process group once it has
	// run this long; 0 is no limit.
	CommandTimeout Seconds `yaml:"command_timeout"`
	// OutputCapBytes bounds each of stdout and stderr returned to an agent.
	OutputCapBytes int `yaml:"output_cap_bytes"`
	// AuditLog is the audit log's path; empty means audit.log in the data
	// directory.
	AuditLog string `yaml:"audit_log"`
	// AuditMaxBytes rotates the audit log before it would grow past this
	// size (AUDIT.1, AUDIT.2, …); 0 never rotates.
	AuditMaxBytes Bytes `yaml:"audit_max_bytes"`
	// AuditKeep is how many rotated audit files are kept.
	AuditKeep int `yaml:"audit_keep"`
	// AuditRepeatWindow merges identical refusals by one agent: the first
	// is written at once, those within this window after it into one
	// record with their count; 0 writes every one.
	AuditRepeatWindow Seconds `yaml:"audit_repeat_window"`
	// WorkspaceRoots are the directories a session's workspace must lie in;
	// the first is the default workspace. Empty means the directory serve
	// started in.
	WorkspaceRoots []string `yaml:"workspace_roots"`
	// Sandbox is workspace-write, read-only or off (docs/risk-policy.md R21).
	Sandbox string `yaml:"sandbox"`
	// Network lets sandboxed commands reach the network.
	Network Switch `yaml:"network"`
	// SandboxDenyRead lists paths a sandboxed command may not read, on top
	// of the daemon's own files.
	SandboxDenyRead []string `yaml:"sandbox_deny_read"`
	// SandboxAllowWrite lists more directories every sandboxed command may
	// write (a shared build cache, say).
	SandboxAllowWrite []string `yaml:"sandbox_allow_write"`
	// MaxPids and MaxMemory limit each sandboxed command (its cgroup).
	MaxPids   int   `yaml:"max_pids"`
	MaxMemory Bytes `yaml:"max_memory"`
	// RunAs names the OS user sandboxed commands run as, when the daemon
	// runs as root; it must own the workspaces and nothing of the daemon's.
	RunAs string `yaml:"run_as"`
}

// defaultAgentTerminal is the embedded default: the seed's values, and no
// extra approval beyond the role table (see docs/risk-policy.md, "The gate").
func defaultAgentTerminal() AgentTerminalConfig {
	return AgentTerminalConfig{
		DefaultHost:           agents.MainHost,
		SessionTimeout:        Seconds(time.Hour),
		MaxConcurrentSessions: 10,
		MaxSessionsPerAgent:   4,
		MaxConcurrentCommands: agents.DefaultMaxConcurrentCommands,
		CommandTimeout:        Seconds(10 * time.Minute),
		OutputCapBytes:        agents.DefaultOutputCapBytes,
		Sandbox:               string(ports.SandboxWorkspaceWrite),
		SandboxDenyRead:       defaultDenyRead,
		AuditMaxBytes:         64 << 20,
		AuditKeep:             audit.DefaultKeep,
		AuditRepeatWindow:     Seconds(time.Minute),
		MaxPids:               512,
		MaxMemory:             2 << 30,
	}
}

// Seconds is a duration written as a number of seconds (3600, as seed 002
// writes session_timeout) or as a Go duration ("1h", "90s").
type Seconds time.Duration

// UnmarshalYAML reads either spelling; a negative value is an error.
func (s *Seconds) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want seconds (3600) or a duration (1h)", n.Line)
	}
	var d time.Duration
	if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
		d = time.Duration(f * float64(time.Second))
	} else if d, err = time.ParseDuration(n.Value); err != nil {
		return fmt.Errorf("line %d: %q is neither seconds (3600) nor a duration (1h)", n.Line, n.Value)
	}
	if d < 0 {
		return fmt.Errorf("line %d: %q is negative; use 0 for no limit", n.Line, n.Value)
	}
	*s = Seconds(d)
	return nil
}

// auditLogPath is where the audit log lives for cfg.
func auditLogPath(cfg Config) string {
	if p := cfg.AgentTerminal.AuditLog; p != "" {
		return p
	}
	return filepath.Join(cfg.DataDir, "audit.log")
}

// agentsConfig is the agent gate's configuration from the config file's
// agent_terminal section.
func agentsConfig(cfg Config) (agents.Config, error) {
	at := cfg.AgentTerminal
	mode, err := sandboxMode(at.Sandbox)
	if err != nil {
		return agents.Config{}, err
	}
	return agents.Config{
		DefaultHost:           at.DefaultHost,
		Hosts:                 slices.Sorted(maps.Keys(cfg.Hosts)),
		SessionTimeout:        time.Duration(at.SessionTimeout),
		ApprovalRequiredFor:   at.ApprovalRequiredFor,
		MaxConcurrentSessions: at.MaxConcurrentSessions,
		MaxSessionsPerAgent:   at.MaxSessionsPerAgent,
		RepeatWindow:          time.Duration(at.AuditRepeatWindow),
		MaxConcurrentCommands: at.MaxConcurrentCommands,
		CommandTimeout:        time.Duration(at.CommandTimeout),
		OutputCapBytes:        at.OutputCapBytes,
		WorkspaceRoots:        workspaceRoots(cfg),
		Sandbox:               mode,
		Network:               bool(at.Network),
	}, nil
}

// lateURL is the daemon's URL for routes built before the server they are
// served by (the MCP server names it in its "approve it here" notes).
type lateURL struct{ srv *httpserver.Server }

func (u *lateURL) String() string {
	if u.srv == nil {
		return ""
	}
	return u.srv.BaseURL() + "/"
}

// sessionClaims answers D9 for the protocol server: a terminal claim may
// name an agent session only when its caller may drive that session.
type sessionClaims func(caller gate.Caller, session string) bool

func newSessionClaims(app *agents.App, users ports.UserStore) sessionClaims {
	return func(caller gate.Caller, session string) bool {
		id, ok := strings.CutPrefix(session, "ahp-session:/")
		if !ok || id == "" {
			return false
		}
		c := agents.Caller{Principal: access.Principal{ID: "root", Root: true}, Roles: users.Roles()}
		if !caller.Root {
			if c, ok = agents.CallerOf(users, caller.ID); !ok {
				return false
			}
		}
		_, err := app.GetSession.Handle(context.Background(), c, id)
		return err == nil
	}
}

// newGateClassifier is the classifier the agent gate uses: it also knows
// the daemon's own files, so that an agent can neither read the tokens nor
// rewrite the users file or the audit log (risk.Config).
func newGateClassifier(cfg Config) *risk.Classifier {
	return Classifier(cfg)
}

// Classifier is the risk classifier the agent gate of a daemon run with
// cfg uses (shellgate classify shows its verdicts).
func Classifier(cfg Config) *risk.Classifier {
	return risk.NewWithConfig(shellexpand.New(), classifierConfig(cfg))
}

// classifierConfig names the daemon's own files for the classifier: the
// data directory and the files in it by name (so that a bare name is
// matched when commands start in the data directory itself), the audit log
// wherever it is, the config file and the TLS key, each also with symlinks
// resolved; the home directory `~` stands for; and the directory agent
// commands start in (the terminals' own, see terminalsConfig).
func classifierConfig(cfg Config) risk.Config {
	var rc risk.Config
	for _, p := range []string{
		cfg.DataDir, usersPath(cfg), credentialsPath(cfg), auditLogPath(cfg),
		filepath.Join(cfg.DataDir, "shell-integration"), cfg.File, cfg.TLSKey,
	} {
		rc.OwnPaths = append(rc.OwnPaths, pathForms(p)...)
	}
	if home, err := os.UserHomeDir(); err == nil {
		rc.Home = home
	}
	if wd, err := os.Getwd(); err == nil {
		rc.Workdirs = pathForms(wd)
	}
	for _, root := range workspaceRoots(cfg) {
		rc.Workdirs = append(rc.Workdirs, pathForms(root)...)
	}
	return rc
}

// pathForms is p made absolute and, when it differs, with symlinks
// resolved; a path that does not exist yet is resolved through the
// nearest directory above it that does.
func pathForms(p string) []string {
	if p == "" {
		return nil
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil
	}
	out := []string{abs}
	rest := ""
	for dir := abs; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			if real = filepath.Join(real, rest); real != abs {
				out = append(out, real)
			}
			break
		}
		if dir == filepath.Dir(dir) {
			break
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
	return out
}
