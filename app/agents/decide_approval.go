package agents

import (
	"context"

	"github.com/shellgate/shellgate/domain/access"
	"github.com/shellgate/shellgate/domain/agentsession"
	"github.com/shellgate/shellgate/domain/risk"
	"github.com/shellgate/shellgate/ports"
)

// DecisionRequest is a person's answer to a held command (seed 002, approve).
type DecisionRequest struct {
	// SessionID is the session holding the command; required.
	SessionID string
	// Approve runs the command; false denies it.
	Approve bool
	// ApprovalID, when set, names the held command the person saw, so a
	// decision never lands on a command submitted after it.
	ApprovalID string
	// UserID is who the client says is deciding. The decision is always
	// recorded as the signed-in principal's; a different UserID is kept in
	// the audit record beside it.
	UserID string
}

// DecisionResult is what a decision did.
type DecisionResult struct {
	// Approved says the command was approved (and has run).
	Approved bool
	// Approval is the command that was decided.
	Approval agentsession.PendingApproval
	// Run is how the approved command ran.
	Run RunResult
	// Sandbox is the confinement the approved command ran under; nil when
	// it ran unconfined.
	Sandbox *ports.Confinement
}

// DecideApproval approves and runs, or denies, a session's held command.
type DecideApproval struct{ c *core }

// Handle needs approval:decide, a person's grant, held by a principal other
// than the one that opened the session (ErrOwnApproval). Approving is refused
// while a person has control of the session (user_has_control): deny it,
// or resume the agent first; and while the session already runs
// MaxConcurrentCommands (ErrTooManyCommands), when the command stays held
// for a later approval. The decision is audited before the command runs;
// if that cannot be written the command stays held.
func (h DecideApproval) Handle(ctx context.Context, who Caller, req DecisionRequest) (DecisionResult, error) {
	c := h.c
	if err := c.enter(); err != nil {
		return DecisionResult{}, err
	}
	defer c.leave()
	if err := who.require(access.ApprovalDecide); err != nil {
		return DecisionResult{}, err
	}
	e, err := c.locked(who, req.SessionID)
	if err != nil {
		return DecisionResult{}, err
	}
	if who.Principal.ID == e.owner {
		// A principal holding a person's role and an agent's would otherwise
		// approve what its own agent asked for: the approval would mean
		// nothing.
		e.mu.Unlock()
		return DecisionResult{}, refuse(ErrOwnApproval, "%s opened session %s, so it may not decide that session's commands; a person signed in with another token must approve or deny", who.Principal.ID, req.SessionID)
	}
	by, now := who.Principal.ID, c.clock.Now()
	next := e.s
	var p agentsession.PendingApproval
	if req.ApprovalID != "" {
		p, err = next.DecideHeld(req.ApprovalID, req.Approve, by, now)
	} else {
		p, err = next.Decide(req.Approve, by, now)
	}
	if err != nil {
		e.mu.Unlock()
		return DecisionResult{}, err
	}
	out := DecisionResult{Approved: req.Approve, Approval: p}
	a := risk.Assessment{Reasons: p.Reasons}
	if lvl, perr := risk.ParseLevel(p.Risk); perr == nil {
		a.Level = lvl
	}
	base := c.commandEvent(&next, p.Command, a)
	base.ApprovalID, base.ApprovedBy = p.ID, by
	base.Detail = mergeDetail(nil, map[string]string{"user_id": claimed(req.UserID, by)})

	if !req.Approve {
		defer e.mu.Unlock()
		if err := c.record(ctx, withStatus(base, ports.AuditDenied, statusDenied)); err != nil {
			return DecisionResult{}, err
		}
		e.s = next
		c.update(e, p.ID, func(v *CommandView) { v.Status, v.DecidedBy = CommandDenied, by })
		return out, nil
	}

	// The command stays held: the person approves it again once one of
	// the session's running commands has ended.
	if err := c.checkRunning(e); err != nil {
		e.mu.Unlock()
		return DecisionResult{}, err
	}
	if err := next.StartCommand(now); err != nil {
		e.mu.Unlock()
		return DecisionResult{}, err
	}
	cmd := newCommand(e, &next, p.ID, p.Command)
	cmd.confine = c.confinement(e, p.Unconfined)
	out.Sandbox = cmd.confine
	base.Detail["command_id"] = cmd.id
	base.Detail = mergeDetail(base.Detail, sandboxDetail(cmd.confine))
	if err := c.record(ctx, withStatus(base, ports.AuditApproved, statusApproved)); err != nil {
		e.mu.Unlock()
		return DecisionResult{}, err
	}
	e.s = next
	e.running++
	c.update(e, p.ID, func(v *CommandView) {
		v.Status, v.DecidedBy, v.Approved, v.Sandbox = CommandRunning, by, true, cmd.confine
		v.Terminal = cmd.uri
	})
	e.mu.Unlock()

	out.Run, err = c.execute(ctx, cmd, base)
	if err != nil {
		return out, err
	}
	return out, nil
}

// claimed is the client's user_id when it differs from the signed-in
// principal, for the record; empty otherwise.
func claimed(userID, principal string) string {
	if userID == principal {
		return ""
	}
	return userID
}
