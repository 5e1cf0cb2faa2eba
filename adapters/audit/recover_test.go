package audit_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/audit"
	"github.com/shellgate/shellgate/ports"
)

func TestRecoverCutsATornLineAndRecordsUnfinishedCommandsLost(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := audit.Open(path)
	require.NoError(t, err)
	ctx := t.Context()
	rec := func(e ports.AuditEvent) { require.NoError(t, l.Record(ctx, e)) }
	cmd := func(kind ports.AuditEventKind, status, id, line string) ports.AuditEvent {
		return ports.AuditEvent{Time: at(1), Event: kind, Status: status, SessionID: "s1", AgentID: "a1",
			Command: line, Detail: map[string]string{"command_id": id}}
	}
	rec(cmd(ports.AuditExecute, "running", "c1", "sleep 100"))                            // never finished
	rec(cmd(ports.AuditExecute, "running", "c2", "true"))                                 // finished
	rec(cmd(ports.AuditExecute, "success", "c2", "true"))                                 //
	rec(cmd(ports.AuditApproved, "approved", "c3", "mkdir /x"))                           // approved, never finished
	rec(cmd(ports.AuditApproved, "approved", "c4", "mkdir /y"))                           // approved, finished
	rec(cmd(ports.AuditExecute, "success", "c4", "mkdir /y"))                             //
	rec(ports.AuditEvent{Time: at(2), Event: ports.AuditSessionCreated, SessionID: "s2"}) // no command
	require.NoError(t, l.Close())
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"timestamp":"2025-10-04T12:00:00Z","event":"exec`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	l, err = audit.Open(path)
	require.NoError(t, err)
	got, err := l.Recover(ctx, at(3))
	require.NoError(t, err)
	require.EqualValues(t, len(`{"timestamp":"2025-10-04T12:00:00Z","event":"exec`), got.TornBytes)
	require.Equal(t, []string{"c1", "c3"}, got.Lost)

	// Once recovered, a second start finds nothing more to do.
	again, err := l.Recover(ctx, at(4))
	require.NoError(t, err)
	require.Zero(t, again.TornBytes)
	require.Empty(t, again.Lost)
	require.NoError(t, l.Close())

	var events []ports.AuditEvent
	f, err = os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, audit.Read(f, audit.Filter{}, func(e ports.AuditEvent) error {
		events = append(events, e)
		return nil
	}), "no malformed line is left")
	require.Len(t, events, 10)
	repaired := events[7]
	require.Equal(t, ports.AuditLogRepaired, repaired.Event)
	require.Equal(t, `{"timestamp":"2025-10-04T12:00:00Z","event":"exec`, repaired.Detail["sample"])
	for i, want := range map[int]string{8: "c1", 9: "c3"} {
		lost := events[i]
		require.Equal(t, ports.AuditExecute, lost.Event)
		require.Equal(t, ports.AuditStatusLost, lost.Status)
		require.Equal(t, want, lost.Detail["command_id"])
		require.Equal(t, "s1", lost.SessionID)
		require.NotEmpty(t, lost.Command)
	}
}
