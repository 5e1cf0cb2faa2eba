package agents

import (
	"context"
	"strconv"

	"github.com/shellgate/shellgate/domain/agentsession"
	"github.com/shellgate/shellgate/ports"
)

// The audit records' status values, as the API reports the outcome.
const (
	statusCreated  = "created"
	statusDeleted  = "deleted"
	statusExpired  = "expired"
	statusRunning  = "running" // written before a command starts
	statusSuccess  = "success" // the command ran (whatever its exit code)
	statusError    = "error"   // refused, or could not run
	statusPending  = "pending_approval"
	statusApproved = "approved"
	statusDenied   = "denied"
)

// event starts a record about session s at the clock's now.
func (c *core) event(kind ports.AuditEventKind, s *agentsession.Session, status string) ports.AuditEvent {
	return ports.AuditEvent{
		Time:      c.clock.Now(),
		Event:     kind,
		SessionID: s.ID,
		AgentID:   s.AgentID,
		AgentRole: s.AgentRole,
		Status:    status,
	}
}

// record writes e durably or says, as ErrAudit, that the request must fail.
func (c *core) record(ctx context.Context, e ports.AuditEvent) error {
	if err := c.audit.Record(ctx, e); err != nil {
		return refuseCause(ErrAudit, err, "the audit log could not record this %s, so the request was refused (nothing ran)", e.Event)
	}
	return nil
}

// recordAfter writes the record of something that has already happened: it
// is written even if the caller has gone, and a failure withholds the
// result rather than pretending nothing ran.
func (c *core) recordAfter(ctx context.Context, e ports.AuditEvent) error {
	if err := c.audit.Record(context.WithoutCancel(ctx), e); err != nil {
		return refuseCause(ErrAudit, err, "the command ran but the audit log could not record its %s, so its result is withheld; see the daemon's log", e.Event)
	}
	return nil
}

// withResult adds how a command ended to an execute record.
func withResult(e ports.AuditEvent, r RunResult) ports.AuditEvent {
	e.Result = &ports.AuditResult{ReturnCode: r.ReturnCode, ExecutionTime: r.Duration, Signal: r.Signal}
	e.Detail = mergeDetail(e.Detail, map[string]string{"command_id": r.CommandID, "terminal": r.Terminal})
	if r.TimedOut {
		e.Detail["timed_out"] = "true"
	}
	if r.Truncated {
		e.Detail["truncated"] = "true"
	}
	return e
}

func mergeDetail(into map[string]string, from map[string]string) map[string]string {
	if into == nil {
		into = map[string]string{}
	}
	for k, v := range from {
		if v != "" {
			into[k] = v
		}
	}
	return into
}

func itoa(n int) string { return strconv.Itoa(n) }
