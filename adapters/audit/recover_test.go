package audit_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

func TestRefusalRecordsAreCappedAndKeepTheCommandsDigest(t *testing.T) {
	l, path := openLog(t)
	long := strings.Repeat("x", 64<<10)
	detail := map[string]string{"reason": "risk_above_role", "description": long}
	refused := ports.AuditEvent{Time: at(1), Event: ports.AuditBlocked, Status: "error", SessionID: "s1",
		Command: "echo " + long, Reasons: []string{long}, Detail: detail}
	require.NoError(t, l.Record(t.Context(), refused))
	ran := ports.AuditEvent{Time: at(2), Event: ports.AuditExecute, Status: "success", SessionID: "s1", Command: "echo " + long}
	require.NoError(t, l.Record(t.Context(), ran))

	got := lines(t, path)
	require.Len(t, got, 2)
	require.Less(t, len(got[0]), 5*audit.RefusedFieldLimit, "a refusal's record is small")
	var rec map[string]any
	require.NoError(t, json.Unmarshal([]byte(got[0]), &rec))
	require.True(t, strings.HasPrefix(rec["command"].(string), "echo xxx"))
	require.Contains(t, rec["command"], fmt.Sprintf("%d bytes in all", len(refused.Command)))
	d := rec["detail"].(map[string]any)
	sum := sha256.Sum256([]byte(refused.Command))
	require.Equal(t, hex.EncodeToString(sum[:]), d[audit.CommandDigestKey])
	require.Equal(t, "detail.description,command,reasons", d[audit.CutFieldsKey])
	require.Equal(t, "risk_above_role", d["reason"])
	require.Len(t, detail["description"], 64<<10, "the caller's map is untouched")

	require.Greater(t, len(got[1]), 64<<10, "a command that ran is recorded whole")
}

func TestLogRotatesAtMaxBytesAndKeepsKeepFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	one, err := json.Marshal(map[string]string{"pad": strings.Repeat("x", 100)})
	require.NoError(t, err)
	l, err := audit.OpenWith(path, audit.Options{MaxBytes: 3 * 200, Keep: 2})
	require.NoError(t, err)
	for i := range 12 {
		require.NoError(t, l.Record(t.Context(), ports.AuditEvent{Time: at(i), Event: ports.AuditSessionCreated,
			SessionID: fmt.Sprintf("s%02d", i), Detail: map[string]string{"pad": string(one)}}))
	}
	require.NoError(t, l.Close())

	files := audit.Files(path)
	require.Equal(t, []string{path + ".2", path + ".1", path}, files, "two rotated files kept, oldest first")
	var sessions []string
	for _, p := range files {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		require.LessOrEqual(t, fi.Size(), int64(3*200))
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
		f, err := os.Open(p)
		require.NoError(t, err)
		require.NoError(t, audit.Read(f, audit.Filter{}, func(e ports.AuditEvent) error {
			sessions = append(sessions, e.SessionID)
			return nil
		}))
		require.NoError(t, f.Close())
	}
	require.NotEmpty(t, sessions)
	require.Equal(t, "s11", sessions[len(sessions)-1], "the newest record is in the current file")
	for i := 1; i < len(sessions); i++ {
		require.Less(t, sessions[i-1], sessions[i], "records read across the files in order")
	}
	require.NotEqual(t, "s00", sessions[0], "the oldest file beyond Keep was dropped")
}
