package shellgate

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	"github.com/shellgate/shellgate/adapters/userstore"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/risk"
	"github.com/shellgate/shellgate/domain/terminal"
)

func TestAgentTerminalConfigDefaultsAreTheSeeds(t *testing.T) {
	at := defaultConfig().AgentTerminal
	require.Equal(t, "main", at.DefaultHost)
	require.Equal(t, Seconds(time.Hour), at.SessionTimeout)
	require.Equal(t, 10, at.MaxConcurrentSessions)
	require.Empty(t, at.ApprovalRequiredFor, "the role table alone decides by default")
	require.Equal(t, Seconds(10*time.Minute), at.CommandTimeout)
	require.Equal(t, 256<<10, at.OutputCapBytes)
	require.Empty(t, at.AuditLog)
}

func TestAgentTerminalConfigReadsTheSeedsKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`agent_terminal:
  default_host: main
  session_timeout: 3600  # 1 hour
  approval_required_for:
    - moderate
    - high
    - dangerous
  max_concurrent_sessions: 4
  command_timeout: 90s
  output_cap_bytes: 1024
  audit_log: /var/log/shellgate-audit.log
`), 0o600))

	cfg, err := loadConfig(path)

	require.NoError(t, err)
	at := cfg.AgentTerminal
	require.Equal(t, Seconds(time.Hour), at.SessionTimeout)
	require.Equal(t, []risk.Level{risk.Moderate, risk.High, risk.Dangerous}, at.ApprovalRequiredFor)
	require.Equal(t, 4, at.MaxConcurrentSessions)
	require.Equal(t, Seconds(90*time.Second), at.CommandTimeout)
	require.Equal(t, 1024, at.OutputCapBytes)
	require.Equal(t, "/var/log/shellgate-audit.log", auditLogPath(cfg))
	require.Equal(t, "127.0.0.1:7681", cfg.Listen, "other defaults stay")
}

func TestAgentTerminalConfigKeepsDefaultsForKeysLeftOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte("agent_terminal:\n  session_timeout: 1.5\n"), 0o600))
	cfg, err := loadConfig(path)
	require.NoError(t, err)
	require.Equal(t, Seconds(1500*time.Millisecond), cfg.AgentTerminal.SessionTimeout)
	require.Equal(t, 10, cfg.AgentTerminal.MaxConcurrentSessions)
	require.Equal(t, "main", cfg.AgentTerminal.DefaultHost)
	cfg.DataDir = "/data"
	require.Equal(t, "/data/audit.log", auditLogPath(cfg))
}

func TestAgentTerminalConfigRefusesBadValues(t *testing.T) {
	tests := map[string]struct{ yaml, msg string }{
		"unknown key":     {"agent_terminal:\n  session_timout: 5\n", "session_timout"},
		"unknown level":   {"agent_terminal:\n  approval_required_for: [risky]\n", `unknown risk level "risky"`},
		"bad duration":    {"agent_terminal:\n  session_timeout: soon\n", `"soon" is neither seconds`},
		"negative":        {"agent_terminal:\n  command_timeout: -5\n", "negative"},
		"list as timeout": {"agent_terminal:\n  session_timeout: [1]\n", "want seconds"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			require.NoError(t, os.WriteFile(path, []byte(tt.yaml), 0o600))
			_, err := loadConfig(path)
			require.ErrorContains(t, err, tt.msg)
		})
	}
}

// gateCall is one HTTP call to the running daemon's agent API.
func gateCall(t *testing.T, base, token, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, base+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var m map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
	return resp.StatusCode, m
}

func TestDaemonServesTheAgentGateAndAuditsToTheDataDirectory(t *testing.T) {
	cfg := testConfig(t)
	store, err := userstore.Open(usersPath(cfg))
	require.NoError(t, err)
	bot, err := store.Add("bot", "chat_agent")
	require.NoError(t, err)
	ana, err := store.Add("ana", "member")
	require.NoError(t, err)
	var host *terminals.Host
	d := newDaemon(cfg, io.Discard, fx.Populate(&host))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, d.Start(ctx))
	base := "http://" + boundAddr(d)

	status, m := gateCall(t, base, bot, "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": "chat_agent_1", "agent_role": "chat_agent"})
	require.Equal(t, http.StatusCreated, status, m)
	id := m["session_id"].(string)

	status, m = gateCall(t, base, bot, "POST", "/api/agent-terminal/execute?session_id="+id, map[string]any{"command": `echo out; echo err >&2; echo "pager=$PAGER"; exit 3`})
	require.Equal(t, http.StatusOK, status, m)
	require.Equal(t, "out\npager=cat\n", m["stdout"])
	require.Equal(t, "err\n", m["stderr"])
	require.EqualValues(t, 3, m["return_code"])
	snap, err := host.Snapshot(m["terminal"].(string))
	require.NoError(t, err)
	require.Equal(t, terminal.ClaimSession, snap.Claim.Kind)
	require.Contains(t, terminal.Text(snap.Content), "err\n", "viewers see stderr too")

	status, m = gateCall(t, base, ana, "GET", "/api/agent-terminal/sessions/"+id, nil)
	require.Equal(t, http.StatusOK, status, m)
	require.EqualValues(t, 1, m["command_count"])

	// A command still running when the daemon stops is ended, answered
	// and audited, and does not hold the stop up.
	answered := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", base+"/api/agent-terminal/execute?session_id="+id, strings.NewReader(`{"command": "echo started; sleep 300"}`))
		req.Header.Set("Authorization", "Bearer "+bot)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	require.Eventually(t, func() bool {
		for _, info := range host.List() {
			s, err := host.Snapshot(info.URI)
			if err == nil && strings.HasPrefix(terminal.Text(s.Content), "$ echo started; sleep 300\r\n") {
				return strings.Contains(terminal.Text(s.Content), "started\n")
			}
		}
		return false
	}, 20*time.Second, 5*time.Millisecond)
	stopStart := time.Now()
	require.NoError(t, d.Stop(ctx))
	require.Less(t, time.Since(stopStart), 10*time.Second)
	require.Equal(t, http.StatusOK, <-answered)

	raw, err := os.ReadFile(filepath.Join(cfg.DataDir, "audit.log"))
	require.NoError(t, err)
	log := string(raw)
	require.Equal(t, 1, strings.Count(log, `"event":"session_created"`))
	require.Equal(t, 4, strings.Count(log, `"event":"execute"`), "two commands, each before and after")
	require.Contains(t, log, `"signal":"SIGKILL"`)
	require.NotContains(t, log, bot, "no token in the audit log")
}

func TestConfigErrorsSpeakOfTheFileNotOfGoTypes(t *testing.T) {
	tests := map[string]struct{ yaml, msg string }{
		"unknown key":   {"listn: x\n", "line 1: there is no setting called listn"},
		"nested key":    {"agent_terminal:\n  session_timout: 5\n", "line 2: there is no setting called session_timout"},
		"duration":      {"stop_grace: fast\n", `line 1: "fast" is not a duration such as 5s or 2m`},
		"number":        {"scrollback_chars: lots\n", `line 1: "lots" is not a whole number`},
		"list for text": {"listen: [a]\n", "line 1: a list is not text"},
		"boolean":       {"insecure: maybe\n", `line 1: "maybe" is not true or false`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			require.NoError(t, os.WriteFile(path, []byte(tt.yaml), 0o600))
			_, err := loadConfig(path)
			require.ErrorContains(t, err, tt.msg)
			require.NotRegexp(t, `main\.|time\.Duration|!!|unmarshal`, err.Error())
		})
	}
}
