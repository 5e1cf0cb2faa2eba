package agents

import (
	"context"

	"github.com/shellgate/shellgate/domain/access"
	"github.com/shellgate/shellgate/domain/agentsession"
	"github.com/shellgate/shellgate/ports"
)

// Resume hands control of a session back to its agent.
type Resume struct{ c *core }

// Handle needs control:resume. A command held before the interrupt is
// still held, and may now be approved.
func (h Resume) Handle(ctx context.Context, who Caller, sessionID string) (agentsession.Transition, error) {
	c := h.c
	if err := c.enter(); err != nil {
		return agentsession.Transition{}, err
	}
	defer c.leave()
	if err := who.require(access.ControlResume); err != nil {
		return agentsession.Transition{}, err
	}
	e, err := c.locked(who, sessionID)
	if err != nil {
		return agentsession.Transition{}, err
	}
	defer e.mu.Unlock()
	next := e.s
	heldBy := next.InterruptedBy
	tr, err := next.Resume(c.clock.Now())
	if err != nil {
		return agentsession.Transition{}, err
	}
	rec := c.event(ports.AuditResume, &next, statusSuccess)
	rec.Detail = mergeDetail(handOverDetail(tr, who.Principal.ID), map[string]string{"held_by": heldBy})
	if err := c.record(ctx, rec); err != nil {
		return agentsession.Transition{}, err
	}
	e.s = next
	return tr, nil
}
