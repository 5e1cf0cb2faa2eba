package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/userstore"
	"github.com/shellgate/shellgate/tests/ahpclient"
)

// gateDaemon is a daemon started on a data directory whose users file was
// written before the start, with the people and agents the seed's workflow
// needs.
type gateDaemon struct {
	*daemon
	tokens map[string]string
}

// startGateDaemon writes users.yaml (a member, a chat agent, an automation
// agent) into a fresh data directory, then starts shellgate serve on it.
func startGateDaemon(t *testing.T, extraArgs ...string) *gateDaemon {
	t.Helper()
	return startGateDaemonWith(t, nil, extraArgs...)
}

// startGateDaemonWith is startGateDaemon with env ("K=V") added to the
// daemon's environment.
func startGateDaemonWith(t *testing.T, env []string, extraArgs ...string) *gateDaemon {
	t.Helper()
	dir := t.TempDir()
	store, err := userstore.Open(filepath.Join(dir, "users.yaml"))
	require.NoError(t, err)
	tokens := map[string]string{}
	for _, u := range []struct{ id, role string }{
		{"ana", "member"}, {"chatbot", "chat_agent"}, {"autobot", "automation_agent"},
	} {
		tokens[u.id], err = store.Add(u.id, u.role)
		require.NoError(t, err)
	}
	return &gateDaemon{daemon: startDaemonWith(t, dir, env, extraArgs...), tokens: tokens}
}

// api calls the agent REST API as who (a name in tokens; any other name
// sends no token).
func (g *gateDaemon) api(t testing.TB, who, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var reader *strings.Reader
	if body == nil {
		reader = strings.NewReader("")
	} else {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		reader = strings.NewReader(string(raw))
	}
	req, err := http.NewRequestWithContext(ctxT(t), method, "http://"+g.addr+path, reader)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+g.tokens[who])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out), "%s %s answered %d without JSON", method, path, resp.StatusCode)
	return resp.StatusCode, out
}

// auditEvents reads the daemon's audit log as "event/status" per line.
func auditEvents(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec), sc.Text())
		out = append(out, rec)
	}
	require.NoError(t, sc.Err())
	return out
}

// The seed's workflow is the unconfined one: with the sandbox off, every
// command is decided by the seed's table alone (docs/risk-policy.md R21
// relaxes it only for sandboxed commands; sandbox_test.go covers those).
func TestAgentGateWalksTheSeedsWorkflowOverRealHTTP(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("agent_terminal:\n  sandbox: \"off\"\n"), 0o600))
	g := startGateDaemon(t, "--config", cfg)
	ctx := ctxT(t)
	scratch, err := os.MkdirTemp("/tmp", "shellgate-e2e-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(scratch) })

	// A person watches the root list over AHP.
	watcher := g.dial(t, ahpclient.DialOptions{Token: g.tokens["ana"]})
	initialize(t, watcher, "ana-watch", ahpclient.RootChannel)

	status, created := g.api(t, "chatbot", "POST", "/api/agent-terminal/sessions", map[string]any{
		"agent_id": "chat_agent_1", "agent_role": "chat_agent", "conversation_id": "conv_abc123", "host": "main",
	})
	require.Equal(t, http.StatusCreated, status, created)
	require.Equal(t, "created", created["status"])
	require.Equal(t, "agent_control", created["state"])
	id := created["session_id"].(string)
	execPath := "/api/agent-terminal/execute?session_id=" + id
	sessionPath := "/api/agent-terminal/sessions/" + id

	// Safe: auto-approved and run at once, stdout and stderr apart.
	status, ran := g.api(t, "chatbot", "POST", execPath, map[string]any{"command": `echo "Hello World"; echo oops >&2`, "description": "Test echo command"})
	require.Equal(t, http.StatusOK, status, ran)
	require.Equal(t, "success", ran["status"])
	require.Equal(t, "Hello World\n", ran["stdout"])
	require.Equal(t, "oops\n", ran["stderr"])
	require.EqualValues(t, 0, ran["return_code"])
	require.Equal(t, map[string]any{"risk": "safe", "reasons": ran["security"].(map[string]any)["reasons"], "sandboxed": false, "approved": false}, ran["security"])

	// Its terminal appeared on the root list, claimed by the session, with
	// the command as tool call; a person can read its scrollback.
	uri := ran["terminal"].(string)
	env, err := watcher.WaitAction(ctx, func(e ahpclient.Envelope) bool {
		for _, ti := range e.View().Terminals {
			if ti.Resource == uri {
				return true
			}
		}
		return false
	})
	require.NoError(t, err)
	var info ahpclient.TerminalInfo
	for _, ti := range env.View().Terminals {
		if ti.Resource == uri {
			info = ti
		}
	}
	require.Equal(t, &ahpclient.Claim{
		Kind: "session", Session: "ahp-session:/" + id, Chat: "ahp-chat:/conv_abc123",
		ToolCallID: ran["command_id"].(string),
	}, info.Claim)
	require.Equal(t, "chat_agent_1 #1", info.Title, "the root list names the agent and the number, never the command")
	snap, rpcErr, err := watcher.Subscribe(ctx, uri)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	state, err := snap.Terminal()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(state.Text(), "$ echo \"Hello World\"; echo oops >&2\r\n"), "the command heads the terminal's own output: %q", state.Text())
	require.Contains(t, state.Text(), "Hello World\n")
	require.Contains(t, state.Text(), "oops\n", "viewers see both streams")

	// Moderate from chat_agent: waits, a person approves, it runs.
	dir := filepath.Join(scratch, "test_dir")
	status, held := g.api(t, "chatbot", "POST", execPath, map[string]any{"command": "mkdir " + dir, "description": "Create test directory"})
	require.Equal(t, http.StatusOK, status, held)
	require.Equal(t, "pending_approval", held["status"])
	require.Equal(t, "moderate", held["risk"])
	require.Equal(t, true, held["approval_required"])
	_, got := g.api(t, "ana", "GET", sessionPath, nil)
	require.Equal(t, "mkdir "+dir, got["pending_approval"].(map[string]any)["command"])
	require.NoDirExists(t, dir, "nothing runs before a person decides")
	status, approved := g.api(t, "ana", "POST", sessionPath+"/approve", map[string]any{"approved": true, "user_id": "ana"})
	require.Equal(t, http.StatusOK, status, approved)
	require.Equal(t, "approved", approved["status"])
	require.EqualValues(t, 0, approved["result"].(map[string]any)["return_code"])
	require.DirExists(t, dir)

	// Deny: the command never runs.
	denied := filepath.Join(scratch, "denied")
	_, held = g.api(t, "chatbot", "POST", execPath, map[string]any{"command": "mkdir " + denied})
	require.Equal(t, "pending_approval", held["status"])
	status, den := g.api(t, "ana", "POST", sessionPath+"/approve", map[string]any{"approved": false, "user_id": "ana"})
	require.Equal(t, http.StatusOK, status, den)
	require.Equal(t, "denied", den["status"])
	require.Equal(t, "Command execution denied by user", den["message"])
	require.NoDirExists(t, denied)

	// High from chat_agent: blocked.
	status, blocked := g.api(t, "chatbot", "POST", execPath, map[string]any{"command": "sudo systemctl restart nginx"})
	require.Equal(t, http.StatusForbidden, status)
	require.Equal(t, "insufficient_permissions", blocked["code"])
	require.Equal(t, "Command risk high exceeds agent max risk moderate", blocked["error"])
	require.Equal(t, "high", blocked["risk"])

	// Interrupt: the agent is blocked with user_has_control, and the
	// pending approval is shown; resume hands back, approval then runs.
	later := filepath.Join(scratch, "later")
	_, held = g.api(t, "chatbot", "POST", execPath, map[string]any{"command": "mkdir " + later})
	require.Equal(t, "pending_approval", held["status"])
	status, in := g.api(t, "ana", "POST", sessionPath+"/interrupt", map[string]any{"user_id": "ana"})
	require.Equal(t, http.StatusOK, status, in)
	require.Equal(t, "agent_control", in["previous_state"])
	require.Equal(t, "user_control", in["current_state"])
	require.Equal(t, "mkdir "+later, in["pending_approval"].(map[string]any)["command"])
	status, refused := g.api(t, "chatbot", "POST", execPath, map[string]any{"command": "echo hi"})
	require.Equal(t, http.StatusForbidden, status)
	require.Equal(t, "user_has_control", refused["code"])
	_, got = g.api(t, "ana", "GET", sessionPath, nil)
	require.Equal(t, "user_control", got["state"])
	status, res := g.api(t, "ana", "POST", sessionPath+"/resume", nil)
	require.Equal(t, http.StatusOK, status, res)
	require.Equal(t, "agent_control", res["current_state"])
	_, approved = g.api(t, "ana", "POST", sessionPath+"/approve", map[string]any{"approved": true})
	require.Equal(t, "approved", approved["status"])
	require.DirExists(t, later)

	_, got = g.api(t, "ana", "GET", sessionPath, nil)
	require.EqualValues(t, 3, got["command_count"])
	status, gone := g.api(t, "chatbot", "DELETE", sessionPath, nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "deleted", gone["status"])
	status, _ = g.api(t, "chatbot", "GET", sessionPath, nil)
	require.Equal(t, http.StatusNotFound, status)

	// The audit log holds one line per event, in order.
	var kinds []string
	for _, rec := range auditEvents(t, filepath.Join(g.dataDir, "audit.log")) {
		kinds = append(kinds, rec["event"].(string)+"/"+rec["status"].(string))
		require.Equal(t, id, rec["session_id"])
		require.Equal(t, "chat_agent_1", rec["agent_id"])
		require.Equal(t, "chat_agent", rec["agent_role"])
	}
	require.Equal(t, []string{
		"session_created/created",
		"execute/running", "execute/success",
		"approval_requested/pending_approval", "approved/approved", "execute/success",
		"approval_requested/pending_approval", "denied/denied",
		"blocked/error",
		"approval_requested/pending_approval", "interrupt/success", "blocked/error", "resume/success",
		"approved/approved", "execute/success",
		"session_deleted/deleted",
	}, kinds)

	// shellgate audit reads and filters the same log.
	auditCmd := exec.Command(binary, "audit", "--data-dir", g.dataDir, "--event", "blocked")
	auditCmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	printed, err := auditCmd.Output()
	require.NoError(t, err)
	require.Equal(t, 2, strings.Count(string(printed), "\n"), string(printed))
	require.Contains(t, string(printed), `"sudo systemctl restart nginx"`)
	for _, tok := range g.tokens {
		stdout, logs := g.output()
		require.NotContains(t, stdout+logs, tok, "no token in the daemon's output")
	}
}

func TestAgentCommandTimeoutKillsItAndSaysSo(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("agent_terminal:\n  command_timeout: 1s\n  output_cap_bytes: 64\n"), 0o600))
	g := startGateDaemon(t, "--config", cfg)
	status, created := g.api(t, "autobot", "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": "auto_1", "agent_role": "automation_agent"})
	require.Equal(t, http.StatusCreated, status, created)
	execPath := "/api/agent-terminal/execute?session_id=" + created["session_id"].(string)

	// Whatever the machine's speed, the answer says what ended the command:
	// the timeout, not the sleep's own end.
	status, ran := g.api(t, "autobot", "POST", execPath, map[string]any{"command": "echo started; sleep 30"})
	require.Equal(t, http.StatusOK, status, ran)
	require.Equal(t, true, ran["timed_out"])
	require.Equal(t, "SIGKILL", ran["signal"])
	require.EqualValues(t, 128, ran["return_code"])
	require.Equal(t, "started\n", ran["stdout"])

	_, ran = g.api(t, "autobot", "POST", execPath, map[string]any{"command": "seq 1 100"})
	require.Equal(t, true, ran["truncated"])
	require.Len(t, ran["stdout"], 64)
}

func TestAgentSessionOnAnotherHostIsRefused(t *testing.T) {
	t.Parallel()
	g := startGateDaemon(t)
	status, body := g.api(t, "chatbot", "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": "a", "agent_role": "chat_agent", "host": "redis"})
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "invalid_host", body["code"])
	status, body = g.api(t, "chatbot", "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": "a", "agent_role": "admin_agent"})
	require.Equal(t, http.StatusForbidden, status)
	require.Equal(t, "insufficient_permissions", body["code"])
	status, body = g.api(t, "nobody", "GET", "/api/agent-terminal/sessions", nil)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, "unauthorized", body["code"])
}

// TestSessionClaimMustNameASessionTheCallerMayDrive: a terminal claimed for
// an agent session over AHP names one the caller may drive (D9).
func TestSessionClaimMustNameASessionTheCallerMayDrive(t *testing.T) {
	t.Parallel()
	g := startGateDaemon(t)
	ctx := ctxT(t)
	status, body := g.api(t, "chatbot", "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": "bot-1", "agent_role": "chat_agent"})
	require.Equal(t, 201, status, "%v", body)
	mine := "ahp-session:/" + body["session_id"].(string)

	// The chat agent's token holds no terminal:create; give the check a
	// principal that does: a member sees every session (D4).
	member := g.dial(t, ahpclient.DialOptions{Token: g.tokens["ana"]})
	initialize(t, member, "ana")
	claim := func(session string) *ahpclient.Claim {
		return &ahpclient.Claim{Kind: "session", Session: session, Chat: "ahp-chat:/c"}
	}
	rpcErr, err := member.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/claimed", Claim: claim(mine)})
	require.NoError(t, err)
	require.Nil(t, rpcErr, "a session the caller may see")
	rpcErr, err = member.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/nosuch", Claim: claim("ahp-session:/nope")})
	require.NoError(t, err)
	require.Equal(t, -32602, rpcErr.Code)
	require.Contains(t, rpcErr.Message, "ahp-session:/nope")
}

// TestAgentCannotReadOrChangeTheDaemonsOwnFiles: the admin token in
// credentials.json, the users file and the audit log are the daemon's own;
// an agent is refused them however it spells the path, each refusal is
// audited, and the token the person who started serve exported never
// reaches an agent's command.
func TestAgentCannotReadOrChangeTheDaemonsOwnFiles(t *testing.T) {
	t.Parallel()
	const exported = "sg_exported-by-whoever-started-serve"
	g := startGateDaemonWith(t, []string{"SHELLGATE_TOKEN=" + exported})
	const inFile = "sg_admin-token-in-the-credentials-file"
	require.NoError(t, userstore.WriteClientCredentials(filepath.Join(g.dataDir, "credentials.json"), "http://"+g.addr, inFile))
	usersBefore, err := os.ReadFile(filepath.Join(g.dataDir, "users.yaml"))
	require.NoError(t, err)

	session := func(who, role string) string {
		status, created := g.api(t, who, "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": who + "_1", "agent_role": role})
		require.Equal(t, http.StatusCreated, status, created)
		return "/api/agent-terminal/execute?session_id=" + created["session_id"].(string)
	}
	chat, auto := session("chatbot", "chat_agent"), session("autobot", "automation_agent")

	refused := []struct{ who, path, cmd, risk string }{
		{"chatbot", chat, "cat " + filepath.Join(g.dataDir, "credentials.json"), "high"},
		{"chatbot", chat, "cd " + g.dataDir + " && cat credentials.json", "high"},
		{"chatbot", chat, "cat " + g.dataDir + "/../" + filepath.Base(g.dataDir) + "/credentials.json", "high"},
		{"autobot", auto, "sed -i s/chat_agent/admin/ " + filepath.Join(g.dataDir, "users.yaml"), "forbidden"},
		{"autobot", auto, "truncate -s 0 " + filepath.Join(g.dataDir, "audit.log"), "forbidden"},
		{"autobot", auto, "mv " + filepath.Join(g.dataDir, "audit.log") + " /tmp/gone.log", "forbidden"},
	}
	for _, r := range refused {
		status, body := g.api(t, r.who, "POST", r.path, map[string]any{"command": r.cmd})
		require.Equal(t, http.StatusForbidden, status, "%s: %v", r.cmd, body)
		require.Equal(t, "insufficient_permissions", body["code"])
		require.Equal(t, r.risk, body["risk"], "%s: %v", r.cmd, body["reasons"])
		require.NotContains(t, fmt.Sprint(body), inFile)
	}

	// The exported token is not in an agent command's environment, though
	// printenv is safe and runs.
	status, ran := g.api(t, "chatbot", "POST", chat, map[string]any{"command": `printenv; echo "token=${SHELLGATE_TOKEN-unset}"`})
	require.Equal(t, http.StatusOK, status, ran)
	require.Contains(t, ran["stdout"], "token=unset\n")
	require.NotContains(t, ran["stdout"], exported)

	usersAfter, err := os.ReadFile(filepath.Join(g.dataDir, "users.yaml"))
	require.NoError(t, err)
	require.Equal(t, string(usersBefore), string(usersAfter), "the users file is untouched")
	var blocked []string
	for _, rec := range auditEvents(t, filepath.Join(g.dataDir, "audit.log")) {
		if rec["event"] == "blocked" {
			require.Equal(t, "error", rec["status"])
			require.Equal(t, "risk_above_role", rec["detail"].(map[string]any)["reason"])
			blocked = append(blocked, rec["command"].(string))
		}
	}
	var want []string
	for _, r := range refused {
		want = append(want, r.cmd)
	}
	require.Equal(t, want, blocked, "every refusal is audited")
	stdout, logs := g.output()
	require.NotContains(t, stdout+logs, inFile)
}

// TestAgentCommandsNeitherWaitForInputNorRunWithoutLimit: a command that
// reads its input ends at once; a session runs at most
// max_concurrent_commands at a time; a description near the request
// body's limit is refused, and audited, instead of costing the record.
func TestAgentCommandsNeitherWaitForInputNorRunWithoutLimit(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("agent_terminal:\n  max_concurrent_commands: 1\n"), 0o600))
	g := startGateDaemon(t, "--config", cfg)
	status, created := g.api(t, "chatbot", "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": "chat_1", "agent_role": "chat_agent"})
	require.Equal(t, http.StatusCreated, status, created)
	execPath := "/api/agent-terminal/execute?session_id=" + created["session_id"].(string)

	// read's status 1 is end of input: both cat and read saw it, rather
	// than waiting until command_timeout.
	status, ran := g.api(t, "chatbot", "POST", execPath, map[string]any{"command": "cat; read answer; echo read=$?"})
	require.Equal(t, http.StatusOK, status, ran)
	require.Equal(t, "read=1\n", ran["stdout"])
	require.NotEqual(t, true, ran["timed_out"])

	status, body := g.api(t, "chatbot", "POST", execPath, map[string]any{"command": "echo hi", "description": strings.Repeat("d", 1_048_500)})
	require.Equal(t, http.StatusBadRequest, status, body["error"])
	require.Equal(t, "invalid_request", body["code"])
	require.Contains(t, body["error"], "4096-byte limit")

	running := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", "http://"+g.addr+execPath, strings.NewReader(`{"command": "echo started; sleep 3"}`))
		req.Header.Set("Authorization", "Bearer "+g.tokens["chatbot"])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			running <- 0
			return
		}
		resp.Body.Close()
		running <- resp.StatusCode
	}()
	require.Eventually(t, func() bool {
		for _, rec := range auditEvents(t, filepath.Join(g.dataDir, "audit.log")) {
			if rec["command"] == "echo started; sleep 3" {
				return true
			}
		}
		return false
	}, patience, 10*time.Millisecond)
	status, body = g.api(t, "chatbot", "POST", execPath, map[string]any{"command": "echo second"})
	require.Equal(t, http.StatusTooManyRequests, status, body)
	require.Equal(t, "too_many_commands", body["code"])
	require.Equal(t, http.StatusOK, <-running)

	var reasons []string
	for _, rec := range auditEvents(t, filepath.Join(g.dataDir, "audit.log")) {
		if rec["event"] == "blocked" {
			reasons = append(reasons, rec["detail"].(map[string]any)["reason"].(string))
		}
	}
	require.Equal(t, []string{"invalid_request", "too_many_commands"}, reasons)
}
