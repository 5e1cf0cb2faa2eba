package access_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/domain/access"
)

func TestParseGrantAcceptsEveryWrittenForm(t *testing.T) {
	for _, s := range []string{
		"terminal:input", "terminal:read", "terminal:write", "terminal:*",
		"*:*", "*:read", "*:write", "*:input", "*:get",
		"audit:read", "control:write", "config:settings",
		"computer:get", "computer:write", "computer:*", "my-plugin.v2:list",
	} {
		t.Run(s, func(t *testing.T) {
			g, err := access.ParseGrant(s)
			require.NoError(t, err)
			require.Equal(t, s, g.String())
		})
	}
}

func TestParseGrantRefusesWhatIsNotAGrant(t *testing.T) {
	tests := []struct {
		in, wantErr string
	}{
		{"", "is not <subject>:<operation>"},
		{"terminal", "is not <subject>:<operation>"},
		{"terminal:", "is not <subject>:<operation>"},
		{":input", "is not <subject>:<operation>"},
		{"a:b:c", "is not <subject>:<operation>"},
		{"read", "is not <subject>:<operation>"}, // generation 1 capability
		{"read:computer", "names a group as its subject"},
		{"write:*", "names a group as its subject"},
		{"terminal:frobnicate", "names an operation terminal does not have"},
		{"terminal:execute", "names an operation terminal does not have"},
		{"control:read-ish", "names an operation control does not have"},
		{"computer:create", "names an operation computer does not have"},
		{"*:frobnicate", "names an operation no subject has"},
		{"Terminal:input", "not a lower-case name"},
		{"1term:input", "not a lower-case name"},
		{" terminal:input", "not a lower-case name"},
		{"terminal:input ", "names an operation terminal does not have"},
		{"terminal:Input", "names an operation terminal does not have"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := access.ParseGrant(tt.in)
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.wantErr)
			var ge *access.GrantError
			require.ErrorAs(t, err, &ge)
		})
	}
}

func TestGrantErrorNeverEchoesSomethingShapedLikeASecret(t *testing.T) {
	for _, s := range []string{
		"sg_Q2hhbmdlIHRoaXMgdG9rZW4gcGxlYXNlIG5vdyBvaw",
		"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		"terminal:in\nput",
	} {
		_, err := access.ParseGrant(s)
		require.Error(t, err)
		require.NotContains(t, err.Error(), s)
		require.True(t, strings.HasPrefix(err.Error(), "a grant "), err.Error())
	}
	_, err := access.ParseGrant("terminal:bogus")
	require.EqualError(t, err, `"terminal:bogus" names an operation terminal does not have`)
}

func TestGrantCovers(t *testing.T) {
	tests := []struct {
		grant  string
		op     access.Operation
		covers bool
	}{
		{"terminal:input", access.TerminalInput, true},
		{"terminal:input", access.TerminalResize, false},
		{"terminal:write", access.TerminalInput, true},
		{"terminal:write", access.TerminalOutput, false},
		{"terminal:read", access.TerminalOutput, true},
		{"terminal:read", access.TerminalCreate, false},
		{"terminal:*", access.TerminalClear, true},
		{"terminal:*", access.AgentList, false},
		{"*:input", access.TerminalInput, true},
		{"*:create", access.AgentCreate, true},
		{"*:create", access.AgentDelete, false},
		{"*:read", access.AuditRead, true},
		{"*:read", access.AgentGet, true},
		{"*:read", access.ApprovalDecide, false},
		{"*:write", access.ControlResume, true},
		{"*:write", access.ConfigSettings, false},
		{"*:*", access.TrustPush, true},
		{"audit:read", access.AuditRead, true}, // the group holds the like-named operation
		{"control:read", access.ControlInterrupt, false},
		{"approval:write", access.ApprovalDecide, true},
		{"agent:read", access.AgentExecute, false},
		// Unknown subjects: only their own name or a wildcard subject reaches them.
		{"file:*", "computer:get", false},
		{"file:get", "computer:get", false},
		{"computer:get", "computer:get", true},
		{"computer:read", "computer:list", true},
		{"*:get", "computer:get", true},
		{"*:read", "computer:watch", true},
		{"*:*", "computer:put", true},
		// A session grant on a group also covers the chats inside sessions.
		{"session:write", "chat:send", true},
		{"session:read", "chat:turns", true},
		{"session:read", "chat:send", false},
		{"session:*", "chat:fork", true},
		{"session:create", "chat:create", false},
		{"chat:write", "session:create", false},
		// Nothing covers an operation that does not exist.
		{"*:*", "terminal:frobnicate", false},
		{"*:*", "terminal:write", false},
		{"*:*", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.grant+"/"+string(tt.op), func(t *testing.T) {
			require.Equal(t, tt.covers, access.MustParseGrant(tt.grant).Covers(tt.op))
		})
	}
}

func TestMustParseGrantPanicsOnABadGrant(t *testing.T) {
	require.Panics(t, func() { access.MustParseGrant("terminal:bogus") })
}
