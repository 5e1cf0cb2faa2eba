package ports

import (
	"context"
	"time"
)

// AuditEventKind names what an audit record is about.
type AuditEventKind string

// The audit event kinds.
const (
	// AuditExecute: an agent command ran (Result says how it ended).
	AuditExecute AuditEventKind = "execute"
	// AuditApprovalRequested: a command was held for a person's approval.
	AuditApprovalRequested AuditEventKind = "approval_requested"
	// AuditApproved: a person approved the held command (ApprovedBy).
	AuditApproved AuditEventKind = "approved"
	// AuditDenied: a person denied the held command (ApprovedBy is who).
	AuditDenied AuditEventKind = "denied"
	// AuditBlocked: a command was refused outright (role ceiling, forbidden,
	// or a person had control).
	AuditBlocked AuditEventKind = "blocked"
	// AuditInterrupt: a person took control from the agent.
	AuditInterrupt AuditEventKind = "interrupt"
	// AuditResume: a person handed control back to the agent.
	AuditResume AuditEventKind = "resume"
	// AuditSessionCreated: an agent session was opened.
	AuditSessionCreated AuditEventKind = "session_created"
	// AuditSessionDeleted: an agent session was closed on request.
	AuditSessionDeleted AuditEventKind = "session_deleted"
	// AuditSessionExpired: an agent session was closed for idleness.
	AuditSessionExpired AuditEventKind = "session_expired"
	// AuditLogRepaired: at start, the log ended inside a line (a crash
	// mid-write) and that fragment was cut off; Detail says how much.
	AuditLogRepaired AuditEventKind = "log_repaired"
)

// AuditEventKinds lists every kind, in the order above: the one list that a
// filter's names are checked against.
func AuditEventKinds() []AuditEventKind {
	return []AuditEventKind{
		AuditExecute, AuditApprovalRequested, AuditApproved, AuditDenied, AuditBlocked,
		AuditInterrupt, AuditResume, AuditSessionCreated, AuditSessionDeleted, AuditSessionExpired,
		AuditLogRepaired,
	}
}

// AuditStatusLost is the status of the execute record written at start for
// an agent command that started under an earlier run and never got a
// result: the daemon stopped (crashed) while it ran, and it was ended.
const AuditStatusLost = "lost"

// AuditEvent is one audit record (seed 002, "Audit Logging"). Empty fields
// are left out of the record. Nothing in it may hold a secret: commands are
// recorded as submitted, so the log itself is private to the daemon's user.
type AuditEvent struct {
	// Time is when it happened, from the core's clock. Required.
	Time time.Time
	// Event says what happened. Required.
	Event AuditEventKind
	// SessionID is the agent session concerned.
	SessionID string
	// AgentID is the agent that owns the session.
	AgentID string
	// AgentRole is the agent's role name.
	AgentRole string
	// ApprovalID identifies a held command across its approval_requested,
	// approved/denied and execute records.
	ApprovalID string
	// Command is the shell line, exactly as submitted.
	Command string
	// Risk is the command's risk level name ("safe" … "forbidden").
	Risk string
	// Status is the outcome as the API reported it ("success",
	// "pending_approval", "error", …).
	Status string
	// ApprovedBy is the person who decided (approved or denied) the command.
	ApprovedBy string
	// Result is how an executed command ended; nil when nothing ran.
	Result *AuditResult
	// Reasons say why the command got its risk, or why it was blocked.
	Reasons []string
	// Detail holds anything else worth keeping (who interrupted, the previous
	// state, why a session ended). Never put a token or password here.
	Detail map[string]string
}

// AuditResult is how an audited command ended.
type AuditResult struct {
	// ReturnCode is the exit code (128 when a signal killed the process, as
	// on the terminal wire).
	ReturnCode int
	// ExecutionTime is how long the command ran.
	ExecutionTime time.Duration
	// Signal names the signal that killed the process ("SIGKILL"); empty when
	// it exited on its own.
	Signal string
}

// AuditSink keeps the audit trail. Record returns only once the record is
// durable, so a caller answers its client after the audit and never before;
// an error means the record may not be kept, and the caller must fail the
// request rather than act unaudited.
type AuditSink interface {
	// Record writes one event durably, or says why it could not.
	Record(ctx context.Context, e AuditEvent) error
}
