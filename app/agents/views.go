package agents

import (
	"maps"
	"slices"
	"time"

	"github.com/shellgate/shellgate/domain/agentsession"
)

// SessionView is a session as the use cases report it: a copy, safe to
// keep and read after the call.
type SessionView struct {
	ID             string
	AgentID        string
	AgentRole      string
	ConversationID string
	Host           string
	// Workspace is where the session's commands start.
	Workspace string
	// Sandboxed says the session's commands run confined, unless one asks
	// otherwise ("sandbox": false, PendingApproval.Unconfined).
	Sandboxed    bool
	State        agentsession.State
	CreatedAt    time.Time
	LastActivity time.Time
	// Uptime is how long the session has been open, as of the call.
	Uptime time.Duration
	// CommandCount is how many agent commands have started.
	CommandCount int
	// Pending is the command held for approval, or nil.
	Pending *agentsession.PendingApproval
	// Metadata is the object the session was opened with; never nil.
	Metadata map[string]any
}

// view copies s as of now.
func view(s agentsession.Session, now time.Time) SessionView {
	v := SessionView{
		ID:             s.ID,
		AgentID:        s.AgentID,
		AgentRole:      s.AgentRole,
		ConversationID: s.ConversationID,
		Host:           s.Host,
		Workspace:      s.Workspace,
		State:          s.State,
		CreatedAt:      s.CreatedAt,
		LastActivity:   s.LastActivity,
		Uptime:         max(now.Sub(s.CreatedAt), 0),
		CommandCount:   s.CommandCount,
		Pending:        copyPending(s.Pending),
		Metadata:       maps.Clone(s.Metadata),
	}
	if v.Metadata == nil {
		v.Metadata = map[string]any{}
	}
	return v
}

func copyPending(p *agentsession.PendingApproval) *agentsession.PendingApproval {
	if p == nil {
		return nil
	}
	c := *p
	c.Reasons = slices.Clone(p.Reasons)
	return &c
}

// viewOf is view with what only the gate knows: whether the session's
// commands run confined.
func (c *core) viewOf(e *entry, s agentsession.Session, now time.Time) SessionView {
	v := view(s, now)
	v.Sandboxed = e.scope != nil && c.confines()
	return v
}
