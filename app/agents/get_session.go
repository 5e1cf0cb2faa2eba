package agents

import (
	"context"

	"github.com/shellgate/shellgate/domain/access"
)

// GetSession describes one session, with its pending approval.
type GetSession struct{ c *core }

// Handle needs agent:get; an agent may only look at the sessions it opened
// (any other answers ErrSessionNotFound, so ids are not confirmed).
func (h GetSession) Handle(_ context.Context, who Caller, sessionID string) (SessionView, error) {
	c := h.c
	if err := c.enter(); err != nil {
		return SessionView{}, err
	}
	defer c.leave()
	if err := who.require(access.AgentGet); err != nil {
		return SessionView{}, err
	}
	e, err := c.locked(who, sessionID)
	if err != nil {
		return SessionView{}, err
	}
	defer e.mu.Unlock()
	return c.viewOf(e, e.s, c.clock.Now()), nil
}
