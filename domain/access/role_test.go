package access_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/domain/access"
)

// allowedByBuiltin is D3 written out operation by operation. The table test
// walks every operation of the catalogue, so an operation added later is
// checked against every role (and refused unless listed here).
var allowedByBuiltin = map[string][]access.Operation{
	access.RoleMember: {
		access.TerminalOutput, access.TerminalCreate, access.TerminalDispose, access.TerminalInput,
		access.TerminalResize, access.TerminalClaim, access.TerminalRename, access.TerminalClear,
		access.AgentList, access.AgentGet,
		access.ApprovalList, access.ApprovalDecide,
		access.ControlInterrupt, access.ControlResume,
		access.AuditRead,
	},
	access.RoleGuest:           nil,
	access.RoleViewer:          {access.TerminalOutput, access.AgentList, access.AgentGet, access.ApprovalList},
	access.RoleChatAgent:       agentOps,
	access.RoleAutomationAgent: agentOps,
	access.RoleSystemAgent:     agentOps,
	access.RoleAdminAgent:      agentOps,
}

var agentOps = []access.Operation{
	access.AgentList, access.AgentGet, access.AgentCreate, access.AgentDelete, access.AgentExecute,
}

// Operations on subjects no built-in role names; only admin reaches them.
var unknownSubjectOps = []access.Operation{"computer:get", "computer:put", "user:list"}

func TestBuiltinRolesAllowExactlyTheirOperations(t *testing.T) {
	roles := access.NewRoles()
	ops := append(access.Operations(), unknownSubjectOps...)
	names := []string{access.RoleAdmin}
	for name := range allowedByBuiltin {
		names = append(names, name)
	}
	require.ElementsMatch(t, roles.Names(), names, "every built-in role has an expectation")

	for _, role := range names {
		allowed := map[access.Operation]bool{}
		for _, op := range allowedByBuiltin[role] {
			require.True(t, op.Valid(), "expectation names %s, which is not an operation", op)
			allowed[op] = true
		}
		p := access.Principal{ID: "sam", Roles: []string{role}}
		for _, op := range ops {
			want := role == access.RoleAdmin || allowed[op]
			t.Run(role+"/"+string(op), func(t *testing.T) {
				require.Equal(t, want, roles.Allows(p, op))
			})
		}
	}
}

func TestBuiltinRolesAreWhatD3Says(t *testing.T) {
	want := map[string][]string{
		access.RoleAdmin:           {"*:*"},
		access.RoleMember:          {"terminal:read", "terminal:write", "agent:read", "approval:read", "approval:write", "control:write", "audit:read"},
		access.RoleGuest:           nil,
		access.RoleViewer:          {"terminal:read", "agent:read", "approval:read"},
		access.RoleChatAgent:       {"agent:read", "agent:write"},
		access.RoleAutomationAgent: {"agent:read", "agent:write"},
		access.RoleSystemAgent:     {"agent:read", "agent:write"},
		access.RoleAdminAgent:      {"agent:read", "agent:write"},
	}
	got := map[string][]string{}
	for _, r := range access.BuiltinRoles() {
		var gs []string
		for _, g := range r.Grants {
			gs = append(gs, g.String())
		}
		got[r.Name] = gs
	}
	require.Equal(t, want, got)
}

func TestUsersFileRoleOverridesBuiltinOfTheSameName(t *testing.T) {
	roles := access.NewRoles(access.Role{Name: access.RoleMember, Grants: []access.Grant{access.MustParseGrant("terminal:output")}})
	p := access.Principal{ID: "sam", Roles: []string{access.RoleMember}}
	require.True(t, roles.Allows(p, access.TerminalOutput))
	require.False(t, roles.Allows(p, access.TerminalInput))
	require.False(t, roles.Allows(p, access.AgentList))
}

func TestCustomRoleGrantsApply(t *testing.T) {
	roles := access.NewRoles(access.Role{Name: "viewer", Grants: []access.Grant{access.MustParseGrant("*:read")}})
	p := access.Principal{ID: "vic", Roles: []string{"viewer"}}
	require.True(t, roles.Allows(p, access.TerminalOutput))
	require.True(t, roles.Allows(p, access.AuditRead))
	require.False(t, roles.Allows(p, access.TerminalInput))
}

func TestGrantsOfSeveralRolesAddUp(t *testing.T) {
	roles := access.NewRoles()
	p := access.Principal{ID: "bot", Roles: []string{access.RoleGuest, access.RoleChatAgent}}
	require.True(t, roles.Allows(p, access.AgentExecute))
	require.False(t, roles.Allows(p, access.TerminalOutput))
}

func TestUndefinedRoleContributesNothing(t *testing.T) {
	roles := access.NewRoles()
	require.False(t, roles.Allows(access.Principal{ID: "sam", Roles: []string{"wizard"}}, access.TerminalOutput))
	_, ok := roles.Role("wizard")
	require.False(t, ok)
}

func TestEmptyOrNilRolesTableAllowsNothing(t *testing.T) {
	admin := access.Principal{ID: "ana", Roles: []string{access.RoleAdmin}}
	var zero access.Roles
	require.False(t, zero.Allows(admin, access.TerminalOutput))
	var nilTable *access.Roles
	require.False(t, nilTable.Allows(admin, access.TerminalOutput))
	require.Empty(t, nilTable.Names())
}

func TestRootMayDoEveryValidOperationWhateverTheTable(t *testing.T) {
	root := access.Principal{ID: "root", Root: true}
	shrunk := access.NewRoles(access.Role{Name: access.RoleAdmin})
	var nilTable *access.Roles
	for _, op := range append(access.Operations(), unknownSubjectOps...) {
		require.True(t, shrunk.Allows(root, op), "%s", op)
		require.True(t, nilTable.Allows(root, op), "%s", op)
	}
	require.False(t, shrunk.Allows(root, "terminal:frobnicate"))
}

func TestInvalidOperationIsAllowedToNobody(t *testing.T) {
	admin := access.Principal{ID: "ana", Roles: []string{access.RoleAdmin}}
	require.False(t, access.NewRoles().Allows(admin, "terminal:frobnicate"))
	require.False(t, access.NewRoles().Allows(admin, "terminal:write"))
}

func TestCheckNamesTheFirstMissingGrant(t *testing.T) {
	roles := access.NewRoles(access.Role{Name: "typist", Grants: []access.Grant{
		access.MustParseGrant("terminal:output"), access.MustParseGrant("terminal:input"),
	}})
	sam := access.Principal{ID: "sam", Roles: []string{"typist"}}

	require.NoError(t, roles.Check(sam, access.TerminalOutput, access.TerminalInput))

	err := roles.Check(sam, access.TerminalInput, access.TerminalCreate, access.TerminalDispose)
	require.EqualError(t, err, "sam may not terminal:create here")
	var denied *access.DeniedError
	require.ErrorAs(t, err, &denied)
	require.Equal(t, access.TerminalCreate, denied.Operation)
	require.Equal(t, "sam", denied.Principal)

	op, missing := roles.Missing(sam, access.TerminalOutput, access.TerminalClear)
	require.True(t, missing)
	require.Equal(t, access.TerminalClear, op)
	_, missing = roles.Missing(sam, access.TerminalOutput)
	require.False(t, missing)
}

func TestRoleReturnsACopy(t *testing.T) {
	roles := access.NewRoles()
	r, ok := roles.Role(access.RoleMember)
	require.True(t, ok)
	r.Grants[0] = access.MustParseGrant("*:*")
	require.False(t, roles.Allows(access.Principal{ID: "m", Roles: []string{access.RoleMember}}, access.ConfigChange))
}

func TestMaxAgentRoleIsTheHighestAgentRoleHeld(t *testing.T) {
	tests := []struct {
		name    string
		p       access.Principal
		want    string
		hasRole bool
	}{
		{"none", access.Principal{Roles: []string{access.RoleMember}}, "", false},
		{"admin is not an agent role", access.Principal{Roles: []string{access.RoleAdmin}}, "", false},
		{"one", access.Principal{Roles: []string{access.RoleSystemAgent}}, access.RoleSystemAgent, true},
		{"highest wins", access.Principal{Roles: []string{access.RoleAdminAgent, access.RoleChatAgent}}, access.RoleAdminAgent, true},
		{"order of roles does not matter", access.Principal{Roles: []string{access.RoleChatAgent, access.RoleAutomationAgent}}, access.RoleAutomationAgent, true},
		{"root", access.Principal{Root: true}, access.RoleAdminAgent, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.p.MaxAgentRole()
			require.Equal(t, tt.hasRole, ok)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestMayOpenAgentRoleUpToTheCeiling(t *testing.T) {
	p := access.Principal{Roles: []string{access.RoleAutomationAgent}}
	require.True(t, p.MayOpenAgentRole(access.RoleChatAgent))
	require.True(t, p.MayOpenAgentRole(access.RoleAutomationAgent))
	require.False(t, p.MayOpenAgentRole(access.RoleSystemAgent))
	require.False(t, p.MayOpenAgentRole(access.RoleAdminAgent))
	require.False(t, p.MayOpenAgentRole("wizard_agent"))
	require.False(t, access.Principal{Roles: []string{access.RoleMember}}.MayOpenAgentRole(access.RoleChatAgent))
	require.Equal(t, []string{"chat_agent", "automation_agent", "system_agent", "admin_agent"}, access.AgentRoles())
}
