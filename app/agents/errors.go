package agents

import (
	"errors"
	"fmt"

	"github.com/shellgate/shellgate/domain/policy"
	"github.com/shellgate/shellgate/domain/risk"
	"github.com/shellgate/shellgate/ports"
)

// The gate's own refusals, for errors.Is. The use cases also return the
// domain's typed errors unchanged: policy.ErrUnknownRole (wrapped),
// *access.DeniedError, *agentsession.Error (by kind) and, inside a
// *CommandBlockedError, *policy.BlockedError. An inbound adapter maps them
// all to its wire in one table.
var (
	// ErrInvalid: a required field is missing or unusable.
	ErrInvalid = errors.New("invalid request")
	// ErrSessionNotFound: no open session by that id that the caller may see.
	ErrSessionNotFound = errors.New("agent terminal session not found")
	// ErrUnknownHost: the session names a host this daemon does not run
	// commands on.
	ErrUnknownHost = errors.New("unknown host")
	// ErrCommandNotFound: the session remembers no command by that id.
	ErrCommandNotFound = errors.New("command not found")
	// ErrInvalidWorkspace: the session's workspace is not a directory inside
	// one of the workspace roots.
	ErrInvalidWorkspace = errors.New("invalid workspace")
	// ErrRoleCeiling: the caller may open agent sessions, but not with the
	// agent_role asked for (D3).
	ErrRoleCeiling = errors.New("agent role above the caller's ceiling")
	// ErrOwnApproval: the principal that opened the session (its agent)
	// tried to decide the session's own held command.
	ErrOwnApproval = errors.New("approval by the session's own agent")
	// ErrTooManySessions: max_concurrent_sessions are already open.
	ErrTooManySessions = errors.New("too many agent sessions")
	// ErrTooManyAgentSessions: the principal asking already has
	// max_sessions_per_agent sessions open.
	ErrTooManyAgentSessions = errors.New("too many agent sessions for one agent")
	// ErrTooManyCommands: the session already runs max_concurrent_commands
	// commands; the next one waits until one of them ends.
	ErrTooManyCommands = errors.New("too many running commands in the session")
	// ErrAtCapacity: the daemon is too close to its open-file limit to
	// start the command; its reserve is kept for admins.
	ErrAtCapacity = errors.New("daemon at capacity")
	// ErrExecution: the command could not be run at all.
	ErrExecution = errors.New("command execution failed")
	// ErrAudit: the audit record could not be written, so nothing was done
	// (or, after a command ran, its result is withheld).
	ErrAudit = errors.New("audit record not written")
	// ErrClosing: the gate is stopping.
	ErrClosing = errors.New("agent gate closing")
)

// refusal is one of the sentinels above with a message that says what was
// wrong and what to do, and the underlying cause if any.
type refusal struct {
	kind  error
	msg   string
	cause error
}

func (r *refusal) Error() string {
	if r.cause != nil {
		return r.msg + ": " + r.cause.Error()
	}
	return r.msg
}

// Unwrap exposes the sentinel and the cause to errors.Is and errors.As.
func (r *refusal) Unwrap() []error {
	if r.cause != nil {
		return []error{r.kind, r.cause}
	}
	return []error{r.kind}
}

func refuse(kind error, format string, args ...any) error {
	return &refusal{kind: kind, msg: fmt.Sprintf(format, args...)}
}

func refuseCause(kind, cause error, format string, args ...any) error {
	return &refusal{kind: kind, msg: fmt.Sprintf(format, args...), cause: cause}
}

func notFound(id string) error {
	return refuse(ErrSessionNotFound, "no agent terminal session %q here; it may have been deleted or expired (list them with GET /api/agent-terminal/sessions)", id)
}

// CommandBlockedError is a command the gate refused outright because its
// risk is above what the session's agent role may run (seed 002,
// "Blocked"). It carries what the answer shows and unwraps to the
// domain's *policy.BlockedError.
type CommandBlockedError struct {
	// Command is the command as submitted.
	Command string
	// Assessment is the classifier's verdict.
	Assessment risk.Assessment
	// AgentRole is the session's agent role.
	AgentRole string
	// Err is the domain's refusal, worded as the seed words it.
	Err *policy.BlockedError
	// Sandbox is the confinement the command would have run under; nil
	// when it would have run unconfined.
	Sandbox *ports.Confinement
}

// Error is the seed's wording: "Command risk high exceeds agent max risk moderate".
func (e *CommandBlockedError) Error() string { return e.Err.Error() }

// Unwrap gives the domain error.
func (e *CommandBlockedError) Unwrap() error { return e.Err }

// CommandRefusedError is a submitted command the gate refused and
// remembers: it names the command's record (GET …/commands/{id}) and
// unwraps to why it was refused.
type CommandRefusedError struct {
	CommandID string
	Err       error
}

// Error is why it was refused.
func (e *CommandRefusedError) Error() string { return e.Err.Error() }

// Unwrap gives why.
func (e *CommandRefusedError) Unwrap() error { return e.Err }
