package agents

import (
	"context"

	"github.com/shellgate/shellgate/domain/access"
	"github.com/shellgate/shellgate/ports"
)

// DeleteSession closes a session: its pending approval is dropped, its
// running commands are killed and its terminals disposed.
type DeleteSession struct{ c *core }

// Handle needs agent:delete; an agent may delete only the sessions it
// opened. The record is written first: if it cannot be, the session stays.
func (h DeleteSession) Handle(ctx context.Context, who Caller, sessionID string) error {
	c := h.c
	if err := c.enter(); err != nil {
		return err
	}
	defer c.leave()
	if err := who.require(access.AgentDelete); err != nil {
		return err
	}
	e, err := c.locked(who, sessionID)
	if err != nil {
		return err
	}
	rec := c.event(ports.AuditSessionDeleted, &e.s, statusDeleted)
	rec.Detail = mergeDetail(droppedDetail(e), map[string]string{"by": who.Principal.ID})
	if err := c.record(ctx, rec); err != nil {
		e.mu.Unlock()
		return err
	}
	left := c.end(e)
	e.mu.Unlock()
	c.dispose(left)
	return nil
}

// droppedDetail says what ending the session throws away; e.mu is held.
func droppedDetail(e *entry) map[string]string {
	d := map[string]string{}
	if p := e.s.Pending; p != nil {
		d["dropped_approval"] = p.ID
		d["dropped_command"] = p.Command
	}
	if e.running > 0 {
		d["killed_commands"] = itoa(e.running)
	}
	return d
}
