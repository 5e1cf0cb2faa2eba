package agents

import (
	"context"

	"github.com/shellgate/shellgate/domain/access"
	"github.com/shellgate/shellgate/domain/agentsession"
	"github.com/shellgate/shellgate/ports"
)

// InterruptRequest is a person taking control (seed 002, interrupt).
type InterruptRequest struct {
	// SessionID is the session to take; required.
	SessionID string
	// UserID is who the client says is taking control; the signed-in
	// principal is recorded as the holder, and a different UserID beside it.
	UserID string
}

// InterruptResult is the hand-over and what the agent left waiting.
type InterruptResult struct {
	// Transition is the hand-over, from the state before the call.
	Transition agentsession.Transition
	// Pending is the command still held for approval, or nil: it stays
	// held, for the person to deny, or to approve once the agent resumes.
	Pending *agentsession.PendingApproval
}

// Interrupt hands a session's control to a person: from then on the
// agent's commands are refused with user_has_control. Commands already
// running carry on; the person can watch them, or end them over AHP.
type Interrupt struct{ c *core }

// Handle needs control:interrupt.
func (h Interrupt) Handle(ctx context.Context, who Caller, req InterruptRequest) (InterruptResult, error) {
	c := h.c
	if err := c.enter(); err != nil {
		return InterruptResult{}, err
	}
	defer c.leave()
	if err := who.require(access.ControlInterrupt); err != nil {
		return InterruptResult{}, err
	}
	e, err := c.locked(who, req.SessionID)
	if err != nil {
		return InterruptResult{}, err
	}
	defer e.mu.Unlock()
	next := e.s
	tr, err := next.Interrupt(who.Principal.ID, c.clock.Now())
	if err != nil {
		return InterruptResult{}, err
	}
	rec := c.event(ports.AuditInterrupt, &next, statusSuccess)
	rec.Detail = mergeDetail(handOverDetail(tr, who.Principal.ID), map[string]string{"user_id": claimed(req.UserID, who.Principal.ID)})
	if p := next.Pending; p != nil {
		rec.ApprovalID, rec.Command, rec.Risk = p.ID, p.Command, p.Risk
	}
	if err := c.record(ctx, rec); err != nil {
		return InterruptResult{}, err
	}
	e.s = next
	return InterruptResult{Transition: tr, Pending: copyPending(next.Pending)}, nil
}

func handOverDetail(tr agentsession.Transition, by string) map[string]string {
	d := map[string]string{"by": by, "previous_state": tr.From.String(), "current_state": tr.To.String()}
	if tr.Via != 0 {
		d["via_state"] = tr.Via.String()
	}
	return d
}
