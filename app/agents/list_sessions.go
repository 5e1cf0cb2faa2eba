package agents

import (
	"context"

	"github.com/shellgate/shellgate/domain/access"
)

// ListFilter narrows ListSessions; empty fields match everything.
type ListFilter struct {
	// AgentID keeps the sessions of this agent.
	AgentID string
	// ConversationID keeps the sessions of this conversation.
	ConversationID string
}

// ListSessions lists the open sessions the caller may see, oldest first.
type ListSessions struct{ c *core }

// Handle needs agent:list; an agent sees only the sessions it opened.
func (h ListSessions) Handle(_ context.Context, who Caller, f ListFilter) ([]SessionView, error) {
	c := h.c
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.leave()
	if err := who.require(access.AgentList); err != nil {
		return nil, err
	}
	out := []SessionView{}
	now := c.clock.Now()
	for _, e := range c.entries() {
		if !who.sees(e) {
			continue
		}
		e.mu.Lock()
		s, gone := e.s, e.gone
		e.mu.Unlock()
		switch {
		case gone:
		case f.AgentID != "" && s.AgentID != f.AgentID:
		case f.ConversationID != "" && s.ConversationID != f.ConversationID:
		default:
			out = append(out, c.viewOf(e, s, now))
		}
	}
	return out, nil
}
