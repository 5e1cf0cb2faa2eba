package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/fx"
	"go.yaml.in/yaml/v3"

	"github.com/shellgate/shellgate/adapters/audit"
	mcpserver "github.com/shellgate/shellgate/adapters/mcp"
	"github.com/shellgate/shellgate/adapters/restapi"
	"github.com/shellgate/shellgate/adapters/runguard"
	"github.com/shellgate/shellgate/adapters/shellexpand"
	"github.com/shellgate/shellgate/app/agents"
	"github.com/shellgate/shellgate/app/gate"
	"github.com/shellgate/shellgate/app/terminals"
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

// openAuditLog opens the audit log and repairs what a crash left in it.
// It takes the run so that it comes after the previous run's leftovers
// were ended: a command recorded lost is one that no longer runs.
func openAuditLog(cfg Config, clk ports.Clock, log *slog.Logger, _ runguard.Run) (*audit.Log, error) {
	l, err := audit.OpenWith(auditLogPath(cfg), audit.Options{
		MaxBytes: int64(cfg.AgentTerminal.AuditMaxBytes), Keep: cfg.AgentTerminal.AuditKeep,
	})
	if err != nil {
		return nil, err
	}
	rec, err := l.Recover(context.Background(), clk.Now())
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	if rec.TornBytes > 0 {
		log.Warn("audit log ended inside a line; cut it off and recorded that", "bytes", rec.TornBytes)
	}
	if len(rec.Lost) > 0 {
		log.Warn("agent commands of a previous run never got a result; recorded them lost", "count", len(rec.Lost))
	}
	return l, nil
}

// agentOptions wires the agent command gate (REST API, agent sessions,
// audit log) into the daemon.
func agentOptions(cfg Config) fx.Option {
	return fx.Module("agents",
		fx.Provide(fx.Private, openAuditLog),
		fx.Provide(
			newGateClassifier,
			newAgentGate,
			newSessionClaims,
			fx.Annotate(newAgentRoute, fx.ResultTags(`group:"routes"`)),
			newMCPHandler,
			fx.Annotate(newMCPRoute, fx.ResultTags(`group:"routes"`)),
			func() *lateURL { return &lateURL{} },
		),
		fx.Invoke(func(u *lateURL, srv *httpServer) { u.srv = srv }),
		fx.Invoke(stopAgentsBeforeHTTP),
		fx.Invoke(stopMCPBeforeHTTP),
	)
}

func newAgentGate(cfg Config, clk ports.Clock, host *terminals.Host, log *audit.Log, logger *slog.Logger, classifier *risk.Classifier, sb ports.Sandbox) (*agents.App, error) {
	at := cfg.AgentTerminal
	mode, err := sandboxMode(at.Sandbox)
	if err != nil {
		return nil, err
	}
	return agents.New(agents.Config{
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
	}, agents.Deps{Clock: clk, Audit: log, Terminals: host, Classifier: classifier, Sandbox: sb, Log: logger}), nil
}

func newAgentRoute(app *agents.App, users ports.UserStore, logger *slog.Logger) Route {
	return Route{Pattern: restapi.Prefix, Handler: restapi.New(app, users, logger)}
}

// lateURL is the daemon's URL for routes built before the server they are
// served by (the MCP server names it in its "approve it here" notes).
type lateURL struct{ srv *httpServer }

func (u *lateURL) String() string {
	if u.srv == nil {
		return ""
	}
	return u.srv.BaseURL() + "/"
}

func newMCPHandler(app *agents.App, host *terminals.Host, users ports.UserStore, logger *slog.Logger, u *lateURL) *mcpserver.Handler {
	return mcpserver.New(app, host, users, mcpserver.Options{BaseURL: u.String, Log: logger})
}

func newMCPRoute(h *mcpserver.Handler) Route { return Route{Pattern: mcpserver.Path, Handler: h} }

// stopMCPBeforeHTTP ends MCP requests (an idle client's event stream would
// hold the HTTP server's drain until its deadline); depending on
// *httpServer makes it run before the server's own stop hook.
func stopMCPBeforeHTTP(lc fx.Lifecycle, _ *httpServer, h *mcpserver.Handler) {
	lc.Append(fx.StopHook(h.Close))
}

// stopAgentsBeforeHTTP closes the gate, then the audit log, before the
// HTTP server drains: closing ends the agents' running commands, so the
// requests waiting on them answer (and are audited) instead of holding
// the server's shutdown until their timeouts. Depending on *httpServer
// makes this hook register after the server's, so it runs before it at
// stop.
func stopAgentsBeforeHTTP(lc fx.Lifecycle, _ *httpServer, app *agents.App, log *audit.Log) {
	lc.Append(fx.Hook{OnStop: func(ctx context.Context) error {
		err := app.Close(ctx)
		if cerr := log.Close(); err == nil {
			err = cerr
		}
		return err
	}})
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
		p := access.Principal{ID: "root", Root: true}
		if !caller.Root {
			if p, ok = users.Principal(caller.ID); !ok {
				return false
			}
		}
		_, err := app.GetSession.Handle(context.Background(), agents.Caller{Principal: p, Roles: users.Roles()}, id)
		return err == nil
	}
}

// newClassifier is the risk classifier over the real shell word expander.
// newGateClassifier is the classifier the agent gate uses: it also knows
// the daemon's own files, so that an agent can neither read the tokens nor
// rewrite the users file or the audit log (risk.Config).
func newGateClassifier(cfg Config) *risk.Classifier {
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
