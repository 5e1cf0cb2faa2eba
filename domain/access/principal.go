package access

// Principal is who is on the other end of a connection or request: a
// person or an agent from the users file, or the host itself.
type Principal struct {
	// ID names the principal in refusals and the audit log.
	ID string
	// Roles are role names, resolved against a Roles table when asked, so
	// a role redefined in the users file applies to the next check.
	Roles []string
	// Root permits every valid operation whatever the roles table says. It
	// is for the host's own in-process callers (embedding, --stdio); the
	// users file can never produce it, and overriding the admin role there
	// cannot take it away.
	Root bool
	// Credential names the token this record holds now (a digest, never
	// the token), so a sign-in made with a token since rotated or removed
	// can be told from a current one. Empty when the directory keeps none.
	Credential string
	// Links name the principal's other current tokens: short-lived sign-in
	// links (shellgate url NAME), each until it expires.
	Links []string
}

// Holds reports whether credential is one of the principal's current
// tokens: its own or an unexpired link.
func (p Principal) Holds(credential string) bool {
	if credential == p.Credential {
		return true
	}
	for _, l := range p.Links {
		if l == credential {
			return true
		}
	}
	return false
}

// MaxAgentRole returns the highest agent role (chat_agent < automation_agent
// < system_agent < admin_agent) among the principal's roles: the most
// privileged agent_role it may open an agent session with. It reports false
// when the principal holds no agent role. Root may open any.
func (p Principal) MaxAgentRole() (string, bool) {
	if p.Root {
		return RoleAdminAgent, true
	}
	best := -1
	for _, r := range p.Roles {
		if rank := agentRank(r); rank > best {
			best = rank
		}
	}
	if best < 0 {
		return "", false
	}
	return agentRoles[best], true
}

// MayOpenAgentRole reports whether the principal may open an agent session
// with agentRole: it must be an agent role no higher than MaxAgentRole.
func (p Principal) MayOpenAgentRole(agentRole string) bool {
	want := agentRank(agentRole)
	if want < 0 {
		return false
	}
	ceiling, ok := p.MaxAgentRole()
	return ok && want <= agentRank(ceiling)
}
