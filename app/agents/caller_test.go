package agents_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/app/agents"
	"github.com/shellgate/shellgate/app/gate/gatetest"
	"github.com/shellgate/shellgate/domain/access"
)

// oneReading is a directory that gives a record and the roles from one
// reading (ports.UserReading), with roles of its own so a test can tell
// which reading the roles came from.
type oneReading struct {
	gatetest.Directory
	read *access.Roles
}

func (d *oneReading) PrincipalRoles(id string) (access.Principal, *access.Roles, bool) {
	p, ok := d.Principal(id)
	return p, d.read, ok
}

// TestCallerOfTakesTheRecordAndItsRolesFromOneReading: where the store
// offers one reading, the agent's caller is judged by that reading's
// roles; where it does not, by its Principal and Roles.
func TestCallerOfTakesTheRecordAndItsRolesFromOneReading(t *testing.T) {
	sam := access.Principal{ID: "sam", Roles: []string{"typist"}}
	later := access.NewRoles(access.Role{Name: "typist", Grants: []access.Grant{access.MustParseGrant("agent:list")}})
	plain := gatetest.Directory{ByToken: map[string]access.Principal{"t": sam}, RoleSet: access.NewRoles()}

	c, ok := agents.CallerOf(&oneReading{Directory: plain, read: later}, "sam")
	require.True(t, ok)
	require.Equal(t, sam, c.Principal)
	require.Same(t, later, c.Roles, "the roles of the same reading")
	require.True(t, c.Roles.Allows(c.Principal, access.AgentList))

	c, ok = agents.CallerOf(&plain, "sam")
	require.True(t, ok)
	require.Same(t, plain.RoleSet, c.Roles)

	_, ok = agents.CallerOf(&oneReading{Directory: plain, read: later}, "gone")
	require.False(t, ok, "an id no longer in the directory is nobody")
}
