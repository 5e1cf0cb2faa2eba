package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/audit"
	"github.com/shellgate/shellgate/ports"
)

var auditT0 = time.Date(2025, 10, 4, 12, 0, 0, 0, time.UTC)

// writeAuditLog writes a small log into dir/audit.log.
func writeAuditLog(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "audit.log")
	l, err := audit.Open(path)
	require.NoError(t, err)
	defer func() { require.NoError(t, l.Close()) }()
	for _, e := range []ports.AuditEvent{
		{Time: auditT0, Event: ports.AuditSessionCreated, SessionID: "s1", AgentID: "bot", AgentRole: "chat_agent", Status: "created"},
		{Time: auditT0.Add(time.Second), Event: ports.AuditExecute, SessionID: "s1", AgentID: "bot", AgentRole: "chat_agent",
			Command: "echo hi", Risk: "safe", Status: "success", Result: &ports.AuditResult{ReturnCode: 0, ExecutionTime: 12 * time.Millisecond}},
		{Time: auditT0.Add(2 * time.Second), Event: ports.AuditBlocked, SessionID: "s1", AgentID: "bot", AgentRole: "chat_agent",
			Command: "sudo ls", Risk: "high", Status: "error", Detail: map[string]string{"reason": "risk_above_role"}},
		{Time: auditT0.Add(3 * time.Second), Event: ports.AuditExecute, SessionID: "s2", AgentID: "other", AgentRole: "admin_agent",
			Command: "sleep 99", Risk: "safe", Status: "success", ApprovedBy: "ana", Result: &ports.AuditResult{ReturnCode: 128, Signal: "SIGKILL", ExecutionTime: time.Minute}},
	} {
		require.NoError(t, l.Record(context.Background(), e))
	}
	return path
}

func TestAuditPrintsEveryRecordOnALine(t *testing.T) {
	dir := t.TempDir()
	writeAuditLog(t, dir)

	code, out, errOut := runGateCLI(t, "", "audit", "--data-dir", dir)

	require.Zero(t, code, errOut)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 4)
	require.Contains(t, lines[0], "2025-10-04T12:00:00.000Z")
	require.Contains(t, lines[0], "session_created")
	require.Contains(t, lines[1], `rc=0 12ms`)
	require.Contains(t, lines[1], `"echo hi"`)
	require.Contains(t, lines[2], "risk_above_role")
	require.Contains(t, lines[3], "rc=128 SIGKILL 1m0s by=ana")
	require.Contains(t, lines[3], "other (admin_agent)")
}

func TestAuditFiltersCombine(t *testing.T) {
	dir := t.TempDir()
	writeAuditLog(t, dir)
	tests := []struct {
		name  string
		args  []string
		lines int
		has   string
	}{
		{"by session", []string{"--session", "s2"}, 1, "sleep 99"},
		{"by agent", []string{"--agent", "bot"}, 3, "echo hi"},
		{"by events", []string{"--event", "execute,blocked"}, 3, "sudo ls"},
		{"by repeated events", []string{"--event", "blocked", "--event", "session_created"}, 2, "sudo ls"},
		{"by time window", []string{"--since", "2025-10-04T12:00:01Z", "--until", "2025-10-04T12:00:03Z"}, 2, "echo hi"},
		{"session and event", []string{"--session", "s1", "--event", "execute"}, 1, "echo hi"},
		{"nothing", []string{"--agent", "nobody"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runGateCLI(t, "", append([]string{"audit", "--data-dir", dir}, tt.args...)...)
			require.Zero(t, code, errOut)
			require.Equal(t, tt.lines, strings.Count(out, "\n"), out)
			require.Contains(t, out, tt.has)
		})
	}
}

func TestAuditJSONPrintsMatchingRecordsAsStored(t *testing.T) {
	dir := t.TempDir()
	path := writeAuditLog(t, dir)
	stored, err := os.ReadFile(path)
	require.NoError(t, err)
	storedLines := strings.Split(strings.TrimSuffix(string(stored), "\n"), "\n")

	code, out, errOut := runGateCLI(t, "", "audit", "--data-dir", dir, "--json", "--event", "execute")

	require.Zero(t, code, errOut)
	require.Equal(t, storedLines[1]+"\n"+storedLines[3]+"\n", out)
}

func TestAuditReadsTheConfiguredLogAndReportsDamage(t *testing.T) {
	dir := t.TempDir()
	elsewhere := filepath.Join(t.TempDir(), "agents-audit.log")
	writeAuditLog(t, filepath.Dir(elsewhere))
	require.NoError(t, os.Rename(filepath.Join(filepath.Dir(elsewhere), "audit.log"), elsewhere))
	f, err := os.OpenFile(elsewhere, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("not a record\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("agent_terminal:\n  audit_log: "+elsewhere+"\n"), 0o600))

	for _, args := range [][]string{{}, {"--json"}} {
		code, out, errOut := runGateCLI(t, "", append([]string{"audit", "--data-dir", dir, "--config", cfg}, args...)...)
		require.Equal(t, 1, code, "a damaged log is not a clean one")
		require.Equal(t, 4, strings.Count(out, "\n"), "the records around the damage still print")
		require.Contains(t, errOut, "malformed line(s), skipped: line 5")
	}
}

func TestAuditRefusesABadTime(t *testing.T) {
	dir := t.TempDir()
	writeAuditLog(t, dir)
	code, _, errOut := runGateCLI(t, "", "audit", "--data-dir", dir, "--since", "yesterday")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `--since: "yesterday" is neither`)
}

func TestAuditRefusesAnEventNameThatIsNotOne(t *testing.T) {
	dir := t.TempDir()
	writeAuditLog(t, dir)
	code, out, errOut := runGateCLI(t, "", "audit", "--data-dir", dir, "--event", "execute,aproved")
	require.Equal(t, 1, code)
	require.Empty(t, out, "a misspelt event matches nothing rather than reading as 'never happened'")
	require.Contains(t, errOut, `--event "aproved" is not an audit event; the events are execute, approval_requested, approved,`)
}

func TestAuditSinceADurationCountsBackFromNow(t *testing.T) {
	now := time.Date(2025, 10, 4, 14, 0, 0, 0, time.UTC)
	got, err := parseWhen("2h", now)
	require.NoError(t, err)
	require.Equal(t, auditT0, got)
}

func TestAuditReadsTheRotatedFilesOldestFirst(t *testing.T) {
	dir := t.TempDir()
	path := writeAuditLog(t, dir)
	require.NoError(t, os.Rename(path, path+".1"))
	l, err := audit.Open(path)
	require.NoError(t, err)
	require.NoError(t, l.Record(context.Background(), ports.AuditEvent{Time: auditT0.Add(time.Hour), Event: ports.AuditSessionDeleted, SessionID: "s1", Status: "deleted"}))
	require.NoError(t, l.Close())

	code, out, errOut := runGateCLI(t, "", "audit", "--data-dir", dir)

	require.Zero(t, code, errOut)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 5)
	require.Contains(t, lines[0], "session_created")
	require.Contains(t, lines[4], "session_deleted")
}
