// Package agents is the agent command gate (seed 002): agent terminal
// sessions, and the commands agents submit to them. Each command is
// classified (domain/risk), judged against the agent's role
// (domain/policy), held for a person's approval where the role requires
// it (domain/agentsession), run in a terminal of its own that people can
// watch (app/terminals), and written to the audit log (ports.AuditSink)
// before anything is answered.
//
// It knows nothing of HTTP or JSON: adapters/restapi drives it, and maps
// the typed errors it returns to the wire in one table.
package agents

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/risk"
	"github.com/shellgate/shellgate/ports"
)

// MainHost is the host name that always means this machine (seed 002).
const MainHost = ports.MainHost

// Defaults for the zero values of Config that have one.
const (
	// DefaultOutputCapBytes bounds each output stream returned to an agent.
	DefaultOutputCapBytes = 256 << 10
	// DefaultKeptTerminals is how many finished command terminals a session
	// keeps listed for people to look back at; older ones are disposed.
	DefaultKeptTerminals = 32
	// DefaultMaxConcurrentCommands is the daemon's default for
	// Config.MaxConcurrentCommands.
	DefaultMaxConcurrentCommands = 4
)

// Config is the gate's setting (the agent_terminal section of the config).
type Config struct {
	// DefaultHost is the host a session runs on when it names none: one of
	// Hosts, or another name for this machine. Empty means MainHost.
	DefaultHost string
	// Hosts are the other machines sessions may run on (over SSH). Their
	// commands run unconfined: the sandbox is this machine's.
	Hosts []string
	// SessionTimeout ends a session (and its terminals) after this long
	// without activity. Zero or less: sessions never expire.
	SessionTimeout time.Duration
	// ApprovalRequiredFor lists risk levels that always wait for a person's
	// approval, even where the role's gate would run them at once. It only
	// tightens the gate: a blocked command stays blocked.
	ApprovalRequiredFor []risk.Level
	// MaxConcurrentSessions refuses a new session while this many are open.
	// Zero or less: no limit.
	MaxConcurrentSessions int
	// MaxSessionsPerAgent refuses a new session while the principal asking
	// (the agent's token) already has this many open, so one agent cannot
	// take every one of MaxConcurrentSessions (ErrTooManyAgentSessions).
	// Zero or less: no limit.
	MaxSessionsPerAgent int
	// RepeatWindow merges identical refusals (same principal, session,
	// reason, command and description) in the audit log: the first is
	// written at once, the ones that follow within this window are counted
	// into one record written when it ends (repeats.go). Zero or less
	// writes every refusal.
	RepeatWindow time.Duration
	// MaxConcurrentCommands refuses a session's next command (and the
	// approval of its held one) while this many of its commands are
	// running (ErrTooManyCommands). Zero or less: no limit.
	MaxConcurrentCommands int
	// CommandTimeout ends a command's whole process group once it has run
	// this long. Zero or less: no limit.
	CommandTimeout time.Duration
	// OutputCapBytes bounds each of stdout and stderr as returned to the
	// agent (the terminal's scrollback keeps its own bound). Zero or less
	// means DefaultOutputCapBytes.
	OutputCapBytes int
	// Dir is the directory agent commands run in when the gate has no
	// workspace roots; empty means the terminal host's own.
	Dir string
	// WorkspaceRoots are the directories a session's workspace must lie in
	// (symlinks resolved); the first is the default workspace. Empty
	// means Dir, alone.
	WorkspaceRoots []string
	// Sandbox is how agent commands are confined (docs/risk-policy.md R21):
	// workspace-write, read-only or off. Empty means workspace-write. It
	// takes effect only where Deps.Sandbox reports the sandbox available.
	Sandbox ports.SandboxMode
	// Network lets confined commands reach the network.
	Network bool
	// KeptTerminals is how many finished command terminals each session
	// keeps; zero or less means DefaultKeptTerminals.
	KeptTerminals int
}

// Deps are what the gate runs on.
type Deps struct {
	// Clock times expiry, command timeouts and every timestamp.
	Clock ports.Clock
	// Audit receives a record before any use case answers.
	Audit ports.AuditSink
	// Terminals runs each command in a terminal of its own.
	Terminals *terminals.Host
	// Classifier assesses each command's risk.
	Classifier *risk.Classifier
	// Sandbox confines commands; nil means none is available, and every
	// command runs unconfined, decided by the unconfined table.
	Sandbox ports.Sandbox
	// NewID mints session, approval and command ids; nil means random UUIDs.
	NewID func() string
	// Log receives what cannot be reported to a caller (an expiry that
	// could not be audited); nil discards it.
	Log *slog.Logger
}

// App lists every capability of the gate, one use case each. Every use
// case checks the caller's grants first (see Caller).
type App struct {
	// CreateSession opens an agent session.
	CreateSession CreateSession
	// ListSessions lists the sessions the caller may see.
	ListSessions ListSessions
	// GetSession describes one session, with its pending approval.
	GetSession GetSession
	// DeleteSession closes a session and disposes its terminals.
	DeleteSession DeleteSession
	// ExecuteCommand classifies an agent command and runs it, holds it for
	// approval, or refuses it.
	ExecuteCommand ExecuteCommand
	// DecideApproval approves (and runs) or denies a held command.
	DecideApproval DecideApproval
	// GetCommand describes one command, waiting for its end if asked.
	GetCommand GetCommand
	// ListCommands lists a session's recent commands.
	ListCommands ListCommands
	// WithdrawCommand takes back an agent's own held command, or ends its
	// running one.
	WithdrawCommand WithdrawCommand
	// Interrupt hands a session's control to a person.
	Interrupt Interrupt
	// Resume hands control back to the agent.
	Resume Resume

	core *core
}

// New returns the gate with no sessions. Sessions end by request, by
// idling past Config.SessionTimeout (see expire.go), or with Close.
func New(cfg Config, d Deps) *App {
	if cfg.DefaultHost == "" {
		cfg.DefaultHost = MainHost
	}
	if cfg.OutputCapBytes <= 0 {
		cfg.OutputCapBytes = DefaultOutputCapBytes
	}
	if cfg.KeptTerminals <= 0 {
		cfg.KeptTerminals = DefaultKeptTerminals
	}
	if d.NewID == nil {
		d.NewID = newUUID
	}
	if d.Log == nil {
		d.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Sandbox == "" {
		cfg.Sandbox = ports.SandboxWorkspaceWrite
	}
	c := &core{
		cfg: cfg, clock: d.Clock, audit: d.Audit, host: d.Terminals, risk: d.Classifier, sandbox: d.Sandbox,
		newID: d.NewID, log: d.Log, sessions: map[string]*entry{},
	}
	if cfg.RepeatWindow > 0 {
		c.repeats = newRepeats(cfg.RepeatWindow, d.Clock, d.Audit, d.Log.Error)
	}
	return &App{
		CreateSession:   CreateSession{c},
		ListSessions:    ListSessions{c},
		GetSession:      GetSession{c},
		DeleteSession:   DeleteSession{c},
		ExecuteCommand:  ExecuteCommand{c},
		DecideApproval:  DecideApproval{c},
		GetCommand:      GetCommand{c},
		ListCommands:    ListCommands{c},
		WithdrawCommand: WithdrawCommand{c},
		Interrupt:       Interrupt{c},
		Resume:          Resume{c},
		core:            c,
	}
}

// Close refuses every new request (ErrClosing), ends every session's
// commands and terminals, and waits for the use cases under way to finish
// and write their audit records, or for ctx. Sessions live in memory only:
// they are gone afterwards. Closing twice is harmless.
func (a *App) Close(ctx context.Context) error { return a.core.close(ctx) }
