package gate_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/app/gate"
	"github.com/shellgate/shellgate/app/gate/gatetest"
	"github.com/shellgate/shellgate/domain/access"
)

type directory = gatetest.Directory

func newGate() (*gate.Gate, *directory) {
	d := &directory{
		ByToken: map[string]access.Principal{
			"t-admin":  {ID: "ana", Roles: []string{"admin"}},
			"t-member": {ID: "mo", Roles: []string{"member"}},
			"t-guest":  {ID: "gus", Roles: []string{"guest"}},
			"t-viewer": {ID: "vi", Roles: []string{"viewer"}},
		},
		RoleSet: access.NewRoles(access.Role{Name: "viewer", Grants: []access.Grant{access.MustParseGrant("terminal:output")}}),
	}
	return gate.New(d), d
}

func caller(t *testing.T, g *gate.Gate, token string) gate.Caller {
	if token == "" {
		return gate.Caller{}
	}
	c, ok := g.SignIn(token)
	require.True(t, ok)
	return c
}

// TestAllowByRole: the gate answers by operation; which use case needs
// which is app/terminals' (its access table test runs every role against
// every use case).
func TestAllowByRole(t *testing.T) {
	g, _ := newGate()
	tests := []struct {
		token string
		op    access.Operation
		want  string // "", "signin", "denied"
	}{
		{"", access.TerminalCreate, "signin"},
		{"t-guest", access.TerminalCreate, "denied"},
		{"t-guest", access.TerminalDispose, "denied"},
		{"t-viewer", access.TerminalCreate, "denied"},
		{"t-member", access.TerminalCreate, ""},
		{"t-member", access.TerminalDispose, ""},
		{"t-admin", access.TerminalDispose, ""},
		{"", access.TerminalInput, "signin"},
		{"t-viewer", access.TerminalInput, "denied"},
		{"t-member", access.TerminalInput, ""},
	}
	for _, tt := range tests {
		err := g.Allow(caller(t, g, tt.token), tt.op)
		switch tt.want {
		case "":
			require.NoError(t, err, "%s %s", tt.token, tt.op)
		case "signin":
			require.ErrorIs(t, err, gate.ErrSignIn)
			require.EqualError(t, err, "Sign in to use this host: needs "+string(tt.op))
		case "denied":
			var d *access.DeniedError
			require.ErrorAs(t, err, &d)
		}
	}
	require.ErrorIs(t, g.Present(gate.Caller{}), gate.ErrSignIn)
	require.NoError(t, g.Present(caller(t, g, "t-guest")), "a sign-in needs no grant")
}

func TestReadingChannels(t *testing.T) {
	g, _ := newGate()
	require.NoError(t, g.Read(gate.Caller{}, gate.RootChannel), "the root list is for everyone")
	require.ErrorIs(t, g.Read(gate.Caller{}, "ahp-terminal:/t"), gate.ErrSignIn)
	require.Error(t, g.Read(caller(t, g, "t-guest"), "ahp-terminal:/t"))
	require.NoError(t, g.Read(caller(t, g, "t-viewer"), "ahp-terminal:/t"))
}

// TestOnlyThoseWhoReadTerminalsSeeWhoHoldsThemByName: the root list names
// a terminal's holder to those who may read terminals; a guest (the root
// list only) and nobody see client ids.
func TestOnlyThoseWhoReadTerminalsSeeWhoHoldsThemByName(t *testing.T) {
	g, _ := newGate()
	require.False(t, g.SeesNames(gate.Caller{}))
	require.False(t, g.SeesNames(caller(t, g, "t-guest")))
	require.True(t, g.SeesNames(caller(t, g, "t-viewer")))
	require.True(t, g.SeesNames(caller(t, g, "t-member")))
}

func TestRemovedPersonIsNobodyOnTheNextCheck(t *testing.T) {
	g, d := newGate()
	c := caller(t, g, "t-member")
	require.NoError(t, g.Allow(c, access.TerminalCreate))
	delete(d.ByToken, "t-member")
	require.ErrorIs(t, g.Allow(c, access.TerminalCreate), gate.ErrSignIn)
	require.False(t, g.Known(c))
}

func TestUnknownTokenSignsNobodyIn(t *testing.T) {
	g, _ := newGate()
	_, ok := g.SignIn("nope")
	require.False(t, ok)
	_, ok = g.SignIn("")
	require.False(t, ok)
}

func TestSignInWithARetiredTokenIsNobody(t *testing.T) {
	g, d := newGate()
	d.ByToken["t-bot"] = access.Principal{ID: "bot", Roles: []string{"member"}, Credential: "old"}
	bot := caller(t, g, "t-bot")
	require.NoError(t, g.Allow(bot, access.TerminalCreate))
	require.False(t, g.Revoked(bot))

	// Rotated: the id is still listed, with another token.
	delete(d.ByToken, "t-bot")
	d.ByToken["t-bot2"] = access.Principal{ID: "bot", Roles: []string{"member"}, Credential: "new"}
	require.ErrorIs(t, g.Allow(bot, access.TerminalCreate), gate.ErrSignIn)
	require.True(t, g.Revoked(bot))
	require.False(t, g.Known(bot))
	require.NoError(t, g.Allow(caller(t, g, "t-bot2"), access.TerminalCreate))

	// Nobody and the host itself are never revoked.
	require.False(t, g.Revoked(gate.Caller{}))
	require.False(t, g.Revoked(gate.Caller{Root: true}))
}

func TestOnlyCallersWithEveryGrantMayUseTheAdminsReserve(t *testing.T) {
	g, _ := newGate()
	cases := []struct {
		name   string
		caller gate.Caller
		want   bool
	}{
		{"admin", caller(t, g, "t-admin"), true},
		{"the daemon itself", gate.Caller{Root: true}, true},
		{"member", caller(t, g, "t-member"), false},
		{"guest", caller(t, g, "t-guest"), false},
		{"custom role with one grant", caller(t, g, "t-viewer"), false},
		{"nobody", gate.Caller{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, g.Reserved(c.caller))
		})
	}
}

func TestGrantsListWhatTheCallerMayDoNow(t *testing.T) {
	g, d := newGate()
	d.ByToken["t-watcher"] = access.Principal{ID: "wa", Roles: []string{access.RoleViewer}}
	d.RoleSet = access.NewRoles() // the built-in viewer, not newGate's own
	tests := []struct {
		token string
		want  []access.Operation
	}{
		{"", []access.Operation{}},
		{"t-guest", []access.Operation{}},
		{"t-watcher", []access.Operation{access.TerminalOutput, access.AgentList, access.AgentGet, access.ApprovalList}},
		{"t-admin", access.Operations()},
	}
	for _, tt := range tests {
		t.Run(tt.token, func(t *testing.T) {
			require.Equal(t, tt.want, g.Grants(caller(t, g, tt.token)))
		})
	}

	// A removed person may do nothing from the next question on.
	c := caller(t, g, "t-watcher")
	delete(d.ByToken, "t-watcher")
	require.Empty(t, g.Grants(c))
}

// readingDirectory offers one reading of the directory for a record and
// the roles together (ports.UserReading), and counts the readings.
type readingDirectory struct {
	directory
	readings int
}

func (d *readingDirectory) Principal(id string) (access.Principal, bool) {
	d.readings++
	return d.directory.Principal(id)
}

func (d *readingDirectory) Roles() *access.Roles {
	d.readings++
	return d.directory.Roles()
}

func (d *readingDirectory) PrincipalRoles(id string) (access.Principal, *access.Roles, bool) {
	d.readings++
	p, ok := d.directory.Principal(id)
	return p, d.RoleSet, ok
}

// TestACheckJudgesARecordByTheRolesOfTheSameReading: where the store can
// give a record and the roles from one reading, a check takes both from
// it, so the two never come from different versions of the users file
// (and a keystroke's checks cost one look at the file each, not two).
func TestACheckJudgesARecordByTheRolesOfTheSameReading(t *testing.T) {
	d := &readingDirectory{directory: directory{
		ByToken: map[string]access.Principal{"t-member": {ID: "mo", Roles: []string{"member"}}, "t-guest": {ID: "gus", Roles: []string{"guest"}}},
		RoleSet: access.NewRoles(),
	}}
	g := gate.New(d)
	member, guest := caller(t, g, "t-member"), caller(t, g, "t-guest")

	d.readings = 0
	require.NoError(t, g.Allow(member, access.TerminalInput))
	require.Equal(t, 1, d.readings, "one reading for the record and its roles")

	d.readings = 0
	var denied *access.DeniedError
	require.ErrorAs(t, g.Allow(guest, access.TerminalInput), &denied)
	require.Equal(t, 1, d.readings)

	d.readings = 0
	require.NotEmpty(t, g.Grants(member))
	require.False(t, g.Reserved(member))
	require.Equal(t, 2, d.readings, "Grants and Reserved take one reading each")

	d.readings = 0
	require.NoError(t, g.Present(guest))
	require.Equal(t, 1, d.readings, "a sign-in check is one reading too")

	delete(d.ByToken, "t-member")
	require.ErrorIs(t, g.Allow(member, access.TerminalInput), gate.ErrSignIn, "a removed person is nobody on the next check")
}
