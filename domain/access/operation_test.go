package access_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/domain/access"
)

// The catalogue is the contract with clients (it is advertised) and with the
// docs (D1, D2 in docs/protocol.md), so it is pinned here word for word.
func TestCatalogueMatchesTheDecisions(t *testing.T) {
	want := map[string][2][]string{
		"terminal": {{"output"}, {"create", "dispose", "input", "resize", "claim", "rename", "clear"}},
		"agent":    {{"list", "get"}, {"create", "delete", "execute"}},
		"approval": {{"list"}, {"decide"}},
		"control":  {nil, {"interrupt", "resume"}},
		"audit":    {{"read"}, nil},
		"config":   {{"settings"}, {"change"}},
		"trust":    {nil, {"push"}},
		"session":  {{"list", "state"}, {"create", "dispose", "rename", "configure", "folders", "attach", "mark", "review", "changes", "worktree", "artifacts"}},
		"chat":     {{"turns"}, {"create", "fork", "dispose", "move", "send", "cancel", "answer", "tool", "draft", "folders", "mark", "truncate"}},
		"file":     {{"get", "list", "resolve", "watch"}, {"put", "delete", "mkdir", "move", "copy", "request"}},
	}
	got := access.Subjects()
	require.Len(t, got, len(want))
	for _, s := range got {
		w, ok := want[s.Name]
		require.True(t, ok, "unexpected subject %s", s.Name)
		require.Equal(t, w[0], s.Read, "%s read group", s.Name)
		require.Equal(t, w[1], s.Write, "%s write group", s.Name)
	}
}

func TestOperationsAreUniqueAndValid(t *testing.T) {
	seen := map[access.Operation]bool{}
	for _, op := range access.Operations() {
		require.False(t, seen[op], "%s listed twice", op)
		seen[op] = true
		require.True(t, op.Valid(), "%s", op)
	}
}

func TestNamedOperationConstantsAreInTheCatalogue(t *testing.T) {
	all := map[access.Operation]bool{}
	for _, op := range access.Operations() {
		all[op] = true
	}
	for _, op := range []access.Operation{
		access.TerminalOutput, access.TerminalCreate, access.TerminalDispose, access.TerminalInput,
		access.TerminalResize, access.TerminalClaim, access.TerminalRename, access.TerminalClear,
		access.AgentList, access.AgentGet, access.AgentCreate, access.AgentDelete, access.AgentExecute,
		access.ApprovalList, access.ApprovalDecide, access.ControlInterrupt, access.ControlResume,
		access.AuditRead, access.ConfigSettings, access.ConfigChange, access.TrustPush,
	} {
		require.True(t, all[op], "%s", op)
	}
}

func TestOperationValidity(t *testing.T) {
	tests := []struct {
		op    access.Operation
		valid bool
	}{
		{"terminal:input", true},
		{"audit:read", true},       // an operation that shares its group's name
		{"computer:get", true},     // unknown subject, file-style operation
		{"computer:create", false}, // not a file-style operation
		{"terminal:read", false},   // a group, not an operation
		{"terminal:*", false},      // a wildcard, not an operation
		{"*:input", false},         // operations have a real subject
		{"terminal:frobnicate", false},
		{"terminal", false},
		{"", false},
		{"Terminal:input", false},
		{"read:get", false},
	}
	for _, tt := range tests {
		t.Run(string(tt.op), func(t *testing.T) {
			require.Equal(t, tt.valid, tt.op.Valid())
		})
	}
}

func TestOperationSplitsIntoSubjectAndName(t *testing.T) {
	require.Equal(t, "terminal", access.TerminalInput.Subject())
	require.Equal(t, "input", access.TerminalInput.Name())
	require.Equal(t, access.TerminalInput, access.Op("terminal", "input"))
}

func TestUnknownSubjectBorrowsFileOperations(t *testing.T) {
	s, known := access.SubjectNamed("computer")
	require.False(t, known)
	file, _ := access.SubjectNamed("file")
	require.Equal(t, "computer", s.Name)
	require.Equal(t, file.Read, s.Read)
	require.Equal(t, file.Write, s.Write)
}

func TestSubjectsReturnsACopy(t *testing.T) {
	s := access.Subjects()
	s[0].Write[0] = "changed"
	require.NotEqual(t, "changed", access.Subjects()[0].Write[0])
}
