package access

import "sort"

// Role is a named set of grants.
type Role struct {
	// Name is how users files and principals refer to the role.
	Name string
	// Grants are what holding the role permits.
	Grants []Grant
}

func (r Role) clone() Role {
	return Role{Name: r.Name, Grants: append([]Grant(nil), r.Grants...)}
}

// The built-in role names (D3).
const (
	RoleAdmin  = "admin"
	RoleMember = "member"
	RoleGuest  = "guest"
	RoleViewer = "viewer"

	// The agent roles of seed 002, lowest to highest privilege.
	RoleChatAgent       = "chat_agent"
	RoleAutomationAgent = "automation_agent"
	RoleSystemAgent     = "system_agent"
	RoleAdminAgent      = "admin_agent"
)

// agentRoles is ordered: a later one is a higher ceiling.
var agentRoles = []string{RoleChatAgent, RoleAutomationAgent, RoleSystemAgent, RoleAdminAgent}

// AgentRoles lists the agent roles from lowest to highest privilege.
func AgentRoles() []string { return append([]string(nil), agentRoles...) }

// agentRank is the role's place in agentRoles, or -1.
func agentRank(name string) int {
	for i, r := range agentRoles {
		if r == name {
			return i
		}
	}
	return -1
}

// BuiltinRoles returns the roles every install has without writing any
// down (D3). Guest holds nothing: it may sign in and see the root list.
// Viewer watches: every terminal's output, agent sessions and what they
// wait on, and nothing it could change.
func BuiltinRoles() []Role {
	grants := func(ss ...string) []Grant {
		out := make([]Grant, len(ss))
		for i, s := range ss {
			out[i] = MustParseGrant(s)
		}
		return out
	}
	agent := func(name string) Role { return Role{Name: name, Grants: grants("agent:read", "agent:write")} }
	return []Role{
		{Name: RoleAdmin, Grants: grants("*:*")},
		{Name: RoleMember, Grants: grants(
			"terminal:read", "terminal:write",
			"agent:read",
			"approval:read", "approval:write",
			"control:write",
			"audit:read",
		)},
		{Name: RoleGuest},
		{Name: RoleViewer, Grants: grants("terminal:read", "agent:read", "approval:read")},
		agent(RoleChatAgent),
		agent(RoleAutomationAgent),
		agent(RoleSystemAgent),
		agent(RoleAdminAgent),
	}
}

// Roles is the table of roles by name. The zero value (and a nil *Roles)
// holds no role at all, so a table that failed to load permits nothing.
type Roles struct {
	byName map[string]Role
}

// NewRoles returns the built-in roles with custom ones added; a custom role
// with a built-in's name replaces it (D3), and a later custom role replaces
// an earlier one of the same name.
func NewRoles(custom ...Role) *Roles {
	builtin := BuiltinRoles()
	t := &Roles{byName: make(map[string]Role, len(builtin)+len(custom))}
	for _, r := range builtin {
		t.byName[r.Name] = r
	}
	for _, r := range custom {
		t.byName[r.Name] = r.clone()
	}
	return t
}

// Role returns the role called name, if the table has one.
func (t *Roles) Role(name string) (Role, bool) {
	if t == nil {
		return Role{}, false
	}
	r, ok := t.byName[name]
	if !ok {
		return Role{}, false
	}
	return r.clone(), true
}

// Names lists the table's role names in alphabetical order.
func (t *Roles) Names() []string {
	if t == nil {
		return nil
	}
	names := make([]string, 0, len(t.byName))
	for n := range t.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Allows is the one answer to "may this principal do this operation": a
// root principal may do every valid operation; anyone else may when one of
// the grants of one of their roles covers it. A role the table does not
// define contributes nothing, and an invalid operation is allowed to nobody.
func (t *Roles) Allows(p Principal, op Operation) bool {
	if !op.Valid() {
		return false
	}
	if p.Root {
		return true
	}
	if t == nil {
		return false
	}
	for _, name := range p.Roles {
		for _, g := range t.byName[name].Grants {
			if g.Covers(op) {
				return true
			}
		}
	}
	return false
}

// Missing returns the first of ops the principal may not do, in the order
// given, so a refusal can name the grant to ask for.
func (t *Roles) Missing(p Principal, ops ...Operation) (Operation, bool) {
	for _, op := range ops {
		if !t.Allows(p, op) {
			return op, true
		}
	}
	return "", false
}

// Check returns a *DeniedError naming the first of ops the principal may not
// do, or nil when every one is allowed.
func (t *Roles) Check(p Principal, ops ...Operation) error {
	if op, missing := t.Missing(p, ops...); missing {
		return &DeniedError{Principal: p.ID, Operation: op}
	}
	return nil
}

// DeniedError is a refusal for lack of a grant; its text is the wire
// message of a.6, e.g. "sam may not terminal:create here".
type DeniedError struct {
	// Principal is the refused principal's id.
	Principal string
	// Operation is the first operation the principal lacks.
	Operation Operation
}

// Error is the refusal as the wire says it.
func (e *DeniedError) Error() string {
	return e.Principal + " may not " + e.Operation.String() + " here"
}
