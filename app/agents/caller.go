package agents

import (
	"github.com/shellgate/shellgate/domain/access"
	"github.com/shellgate/shellgate/ports"
)

// Caller is who asks, and the roles table to judge them by, as the inbound
// adapter resolved them for this one request (D2–D4).
type Caller struct {
	// Principal is the signed-in person or agent.
	Principal access.Principal
	// Roles turns the principal's role names into grants; nil permits
	// nothing.
	Roles *access.Roles
}

// require says whether the caller holds op, as an *access.DeniedError
// naming the missing grant when not.
func (c Caller) require(op access.Operation) error {
	return c.Roles.Check(c.Principal, op)
}

// isAgent reports whether the caller is an agent: a principal holding one
// of the agent roles. An agent sees and drives only the sessions it opened
// (D4); a principal holding both an agent role and a person's role is
// treated as the agent, the narrower reading.
func (c Caller) isAgent() bool {
	if c.Principal.Root {
		return false
	}
	_, ok := c.Principal.MaxAgentRole()
	return ok
}

// sees reports whether the caller may see (and, grants permitting, drive)
// the session: every session for a person, its own for an agent.
func (c Caller) sees(e *entry) bool {
	return !c.isAgent() || e.owner == c.Principal.ID
}

// CallerOf resolves a signed-in principal's id to its current record and
// the roles to judge it by, from one reading of the directory where the
// store offers it (ports.ReadPrincipal); false once the id is gone.
func CallerOf(users ports.UserStore, id string) (Caller, bool) {
	p, roles, ok := ports.ReadPrincipal(users, id)
	return Caller{Principal: p, Roles: roles}, ok
}
