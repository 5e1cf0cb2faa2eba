package restapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shellgate/shellgate/adapters/clock"
	"github.com/shellgate/shellgate/adapters/restapi"
	"github.com/shellgate/shellgate/adapters/shellexpand"
	"github.com/shellgate/shellgate/adapters/spawner/fake"
	"github.com/shellgate/shellgate/adapters/userstore"
	"github.com/shellgate/shellgate/app/agents"
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/risk"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

func TestMain(m *testing.M) {
	// The thread children are forked on lives as long as the process.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/shellgate/shellgate/adapters/spawner/internal/proc.spawnThread"))
}

const waitFor = 20 * time.Second

// memAudit keeps records in memory and can be told to fail.
type memAudit struct {
	mu     sync.Mutex
	events []ports.AuditEvent
	err    error
}

func (a *memAudit) Record(_ context.Context, e ports.AuditEvent) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return a.err
	}
	a.events = append(a.events, e)
	return nil
}

func (a *memAudit) failWith(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.err = err
}

// syncBuffer is a log destination tests can read while the server writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type api struct {
	t      *testing.T
	srv    *httptest.Server
	sp     *fake.Spawner
	audit  *memAudit
	logs   *syncBuffer
	tokens map[string]string
	clk    *clock.Fake
}

// newAPI serves the API over a real users file (in a temp dir), the fake
// spawner and the fake clock.
func newAPI(t *testing.T, cfg agents.Config) *api {
	t.Helper()
	a := &api{t: t, sp: fake.New(), audit: &memAudit{}, logs: &syncBuffer{}, tokens: map[string]string{}}
	store, err := userstore.Open(filepath.Join(t.TempDir(), "users.yaml"))
	require.NoError(t, err)
	for id, role := range map[string]string{
		"chatbot": "chat_agent", "autobot": "automation_agent", "ana": "member", "gus": "guest", "otherbot": "chat_agent",
	} {
		tok, err := store.Add(id, role)
		require.NoError(t, err)
		a.tokens[id] = tok
	}
	a.sp.Register("sh", func(p *fake.Process) terminal.ExitStatus {
		switch line := p.Spec().Args[1]; {
		case strings.HasPrefix(line, "echo "):
			_ = p.Emit(strings.TrimPrefix(line, "echo ") + "\n")
		case line == "ls missing":
			_ = p.EmitStderr("ls: missing: No such file or directory\n")
			return terminal.ExitedWith(2)
		case line == "sleep 1000":
			<-p.Done()
		}
		return terminal.ExitedWith(0)
	})
	clk := clock.NewFake(time.Date(2025, 10, 4, 12, 0, 0, 0, time.UTC))
	a.clk = clk
	host := terminals.New(terminals.Config{Shell: "/bin/sh", Dir: t.TempDir()}, hub.New(hub.Options{}), a.sp, clk)
	app := agents.New(cfg, agents.Deps{Classifier: risk.New(shellexpand.New()), Clock: clk, Audit: a.audit, Terminals: host})
	log := slog.New(slog.NewTextHandler(a.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a.srv = httptest.NewServer(restapi.New(app, store, log))
	t.Cleanup(func() {
		a.srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		require.NoError(t, app.Close(ctx))
		require.NoError(t, host.Stop(ctx))
	})
	return a
}

// call sends a request as who ("" for no token) and decodes the answer.
func (a *api) call(who, method, path string, body any) (int, map[string]any) {
	a.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(a.t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, a.srv.URL+path, rd)
	require.NoError(a.t, err)
	if who != "" {
		tok, ok := a.tokens[who]
		if !ok {
			tok = who
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := a.srv.Client().Do(req)
	require.NoError(a.t, err)
	defer resp.Body.Close()
	require.Equal(a.t, "application/json", resp.Header.Get("Content-Type"))
	var m map[string]any
	require.NoError(a.t, json.NewDecoder(resp.Body).Decode(&m))
	return resp.StatusCode, m
}

func (a *api) create(who, role string) string {
	a.t.Helper()
	status, m := a.call(who, "POST", "/api/agent-terminal/sessions", map[string]any{
		"agent_id": "chat_agent_1", "agent_role": role, "conversation_id": "conv_abc123", "host": "main",
	})
	require.Equal(a.t, http.StatusCreated, status, m)
	return m["session_id"].(string)
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func sorted(ss ...string) []string {
	slices.Sort(ss)
	return ss
}

func TestCreateAnswers201WithTheSeedsShape(t *testing.T) {
	a := newAPI(t, agents.Config{})
	status, m := a.call("chatbot", "POST", "/api/agent-terminal/sessions", map[string]any{
		"agent_id": "chat_agent_1", "agent_role": "chat_agent", "conversation_id": "conv_abc123", "host": "main",
	})
	require.Equal(t, http.StatusCreated, status)
	require.Equal(t, sorted("status", "session_id", "agent_id", "agent_role", "conversation_id", "host", "state", "created_at", "workspace"), keys(m))
	require.Equal(t, "created", m["status"])
	require.Equal(t, "chat_agent_1", m["agent_id"])
	require.Equal(t, "chat_agent", m["agent_role"])
	require.Equal(t, "conv_abc123", m["conversation_id"])
	require.Equal(t, "main", m["host"])
	require.Equal(t, "agent_control", m["state"])
	require.InDelta(t, 1759579200.0, m["created_at"], 0.001)
	require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, m["session_id"])
}

func TestListAndGetAnswerWithTheSeedsShapes(t *testing.T) {
	a := newAPI(t, agents.Config{})
	id := a.create("chatbot", "chat_agent")

	status, m := a.call("ana", "GET", "/api/agent-terminal/sessions?agent_id=chat_agent_1", nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, sorted("status", "total", "sessions"), keys(m))
	require.Equal(t, "success", m["status"])
	require.EqualValues(t, 1, m["total"])
	s := m["sessions"].([]any)[0].(map[string]any)
	require.Equal(t, sorted("session_id", "agent_id", "agent_role", "conversation_id", "host", "state", "created_at", "last_activity", "command_count", "workspace"), keys(s))
	require.Equal(t, id, s["session_id"])
	require.EqualValues(t, 0, s["command_count"])

	_, m = a.call("ana", "GET", "/api/agent-terminal/sessions?conversation_id=other", nil)
	require.EqualValues(t, 0, m["total"])
	require.Equal(t, []any{}, m["sessions"], "an empty list, never null")

	status, m = a.call("ana", "GET", "/api/agent-terminal/sessions/"+id, nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, sorted("status", "session_id", "agent_id", "agent_role", "conversation_id", "host", "state",
		"created_at", "last_activity", "uptime", "command_count", "pending_approval", "metadata", "workspace"), keys(m))
	require.Nil(t, m["pending_approval"])
	require.Equal(t, map[string]any{}, m["metadata"])
	require.EqualValues(t, 0, m["uptime"])

	status, m = a.call("chatbot", "POST", "/api/agent-terminal/execute?session_id="+id, map[string]any{"command": "mkdir /tmp/test_dir", "description": "Create test directory"})
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "pending_approval", m["status"])
	_, m = a.call("ana", "GET", "/api/agent-terminal/sessions/"+id, nil)
	p := m["pending_approval"].(map[string]any)
	require.Equal(t, "mkdir /tmp/test_dir", p["command"])
	require.Equal(t, "moderate", p["risk"])
	require.NotEmpty(t, p["reasons"])
	require.Contains(t, p, "timestamp")
	require.Contains(t, p, "approval_id")
}

func TestSafeCommandRunsAndAnswersWithSeparateStreamsAndSecurity(t *testing.T) {
	a := newAPI(t, agents.Config{})
	id := a.create("chatbot", "chat_agent")

	status, m := a.call("chatbot", "POST", "/api/agent-terminal/execute?session_id="+id, map[string]any{"command": `echo "Hello World"`, "description": "Test echo command"})
	require.Equal(t, http.StatusOK, status, m)
	require.Equal(t, "success", m["status"])
	require.Equal(t, `echo "Hello World"`, m["command"])
	require.Equal(t, "\"Hello World\"\n", m["stdout"], "the fake shell echoes the rest of the line")
	require.Equal(t, "", m["stderr"])
	require.EqualValues(t, 0, m["return_code"])
	sec := m["security"].(map[string]any)
	require.Equal(t, "safe", sec["risk"])
	require.NotEmpty(t, sec["reasons"])
	require.Equal(t, false, sec["sandboxed"])
	require.Equal(t, false, sec["approved"])
	require.Equal(t, false, m["truncated"])
	require.Equal(t, false, m["timed_out"])
	require.NotContains(t, m, "signal", "no signal ended it")
	require.Regexp(t, `^ahp-terminal:/agent-`+regexp.QuoteMeta(id)+`-1-[0-9a-f]{16}$`, m["terminal"])

	_, m = a.call("chatbot", "POST", "/api/agent-terminal/execute?session_id="+id, map[string]any{"command": "ls missing"})
	require.Equal(t, "", m["stdout"])
	require.Equal(t, "ls: missing: No such file or directory\n", m["stderr"])
	require.EqualValues(t, 2, m["return_code"])
}

func TestModerateCommandWaitsThenApproveRunsItAndDenyDropsIt(t *testing.T) {
	a := newAPI(t, agents.Config{})
	id := a.create("chatbot", "chat_agent")

	status, m := a.call("chatbot", "POST", "/api/agent-terminal/execute?session_id="+id, map[string]any{"command": "mkdir /tmp/test_dir", "description": "Create test directory"})
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, sorted("status", "command", "risk", "reasons", "description", "agent_role", "approval_required", "approval_id", "security", "command_id"), keys(m))
	require.Equal(t, "pending_approval", m["status"])
	require.Equal(t, "moderate", m["risk"])
	require.Equal(t, "Create test directory", m["description"])
	require.Equal(t, "chat_agent", m["agent_role"])
	require.Equal(t, true, m["approval_required"])
	require.Empty(t, a.sp.Processes())

	status, m = a.call("ana", "POST", "/api/agent-terminal/sessions/"+id+"/approve", map[string]any{"approved": true, "user_id": "user_123"})
	require.Equal(t, http.StatusOK, status, m)
	require.Equal(t, "approved", m["status"])
	require.Equal(t, "mkdir /tmp/test_dir", m["command"])
	res := m["result"].(map[string]any)
	require.EqualValues(t, 0, res["return_code"])
	require.Contains(t, res, "stdout")
	require.Contains(t, res, "stderr")
	require.Len(t, a.sp.Processes(), 1)

	_, _ = a.call("chatbot", "POST", "/api/agent-terminal/execute?session_id="+id, map[string]any{"command": "mkdir /tmp/other"})
	status, m = a.call("ana", "POST", "/api/agent-terminal/sessions/"+id+"/approve", map[string]any{"approved": false, "user_id": "user_123"})
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "denied", m["status"])
	require.Equal(t, "mkdir /tmp/other", m["command"])
	require.Equal(t, "Command execution denied by user", m["message"])
	require.Len(t, a.sp.Processes(), 1, "the denied command never ran")
}

func TestInterruptShowsThePendingApprovalBlocksTheAgentAndResumeHandsBack(t *testing.T) {
	a := newAPI(t, agents.Config{})
	id := a.create("chatbot", "chat_agent")
	_, _ = a.call("chatbot", "POST", "/api/agent-terminal/execute?session_id="+id, map[string]any{"command": "mkdir /tmp/x"})

	status, m := a.call("ana", "POST", "/api/agent-terminal/sessions/"+id+"/interrupt", map[string]any{"user_id": "user_123"})
	require.Equal(t, http.StatusOK, status, m)
	require.Equal(t, "success", m["status"])
	require.Equal(t, "Agent interrupted, user has control", m["message"])
	require.Equal(t, "agent_control", m["previous_state"])
	require.Equal(t, "user_control", m["current_state"])
	p := m["pending_approval"].(map[string]any)
	require.Equal(t, "mkdir /tmp/x", p["command"])
	require.Equal(t, "moderate", p["risk"])

	status, m = a.call("chatbot", "POST", "/api/agent-terminal/execute?session_id="+id, map[string]any{"command": "echo hi"})
	require.Equal(t, http.StatusForbidden, status)
	require.Equal(t, "user_has_control", m["code"])
	require.Equal(t, "error", m["status"])
	require.Contains(t, m["error"], "ana has control")

	status, m = a.call("ana", "POST", "/api/agent-terminal/sessions/"+id+"/resume", nil)
	require.Equal(t, http.StatusOK, status, m)
	require.Equal(t, "success", m["status"])
	require.Equal(t, "Agent control resumed", m["message"])
	require.Equal(t, "agent_control", m["current_state"])

	status, m = a.call("ana", "POST", "/api/agent-terminal/sessions/"+id+"/resume", nil)
	require.Equal(t, http.StatusConflict, status)
	require.Equal(t, "invalid_state", m["code"])
}

func TestDeleteAnswersDeletedAndTheSessionIsGone(t *testing.T) {
	a := newAPI(t, agents.Config{})
	id := a.create("chatbot", "chat_agent")

	status, m := a.call("chatbot", "DELETE", "/api/agent-terminal/sessions/"+id, nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, map[string]any{"status": "deleted", "session_id": id}, m)

	status, m = a.call("chatbot", "GET", "/api/agent-terminal/sessions/"+id, nil)
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, "session_not_found", m["code"])
}

func TestBlockedCommandIs403InsufficientPermissionsWithTheSeedsFields(t *testing.T) {
	a := newAPI(t, agents.Config{})
	id := a.create("chatbot", "chat_agent")

	status, m := a.call("chatbot", "POST", "/api/agent-terminal/execute?session_id="+id, map[string]any{"command": "sudo systemctl restart nginx"})

	require.Equal(t, http.StatusForbidden, status)
	require.Equal(t, "error", m["status"])
	require.Equal(t, "insufficient_permissions", m["code"])
	require.Equal(t, "Command risk high exceeds agent max risk moderate", m["error"])
	require.Equal(t, "sudo systemctl restart nginx", m["command"])
	require.Equal(t, "high", m["risk"])
	require.Equal(t, "chat_agent", m["agent_role"])
	require.NotEmpty(t, m["reasons"])
}

func TestErrorsAnswerWithTheTablesStatusAndCode(t *testing.T) {
	a := newAPI(t, agents.Config{MaxConcurrentSessions: 3})
	id := a.create("chatbot", "chat_agent")
	exec := "/api/agent-terminal/execute?session_id=" + id
	approve := "/api/agent-terminal/sessions/" + id + "/approve"
	tests := []struct {
		name         string
		who          string
		method, path string
		body         any
		status       int
		code         string
		msg          string
	}{
		{"no token", "", "GET", "/api/agent-terminal/sessions", nil, 401, "unauthorized", "Authorization: Bearer"},
		{"unknown token", "sg_not-a-real-token", "GET", "/api/agent-terminal/sessions", nil, 401, "unauthorized", "not one this host knows"},
		{"invalid agent role", "chatbot", "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": "a", "agent_role": "root_agent"}, 400, "invalid_agent_role", "root_agent"},
		{"missing agent role", "chatbot", "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": "a"}, 400, "invalid_agent_role", "agent_role is required"},
		{"missing agent id", "chatbot", "POST", "/api/agent-terminal/sessions", map[string]any{"agent_role": "chat_agent"}, 400, "invalid_request", "agent_id is required"},
		{"role above the token", "chatbot", "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": "a", "agent_role": "admin_agent"}, 403, "insufficient_permissions", "up to chat_agent"},
		{"person may not create", "ana", "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": "a", "agent_role": "chat_agent"}, 403, "insufficient_permissions", "ana may not agent:create here"},
		{"other host", "chatbot", "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": "a", "agent_role": "chat_agent", "host": "redis"}, 400, "invalid_host", `host "redis"`},
		{"malformed json", "chatbot", "POST", "/api/agent-terminal/sessions", `{"agent_id": `, 400, "invalid_request", "not valid JSON"},
		{"wrong field type", "chatbot", "POST", "/api/agent-terminal/sessions", `{"agent_id": 7, "agent_role": "chat_agent"}`, 400, "invalid_request", `field "agent_id" must be a string`},
		{"metadata not an object", "chatbot", "POST", "/api/agent-terminal/sessions", `{"agent_id": "a", "agent_role": "chat_agent", "metadata": "x"}`, 400, "invalid_request", `field "metadata" must be an object`},
		{"body not an object", "chatbot", "POST", "/api/agent-terminal/sessions", `[1]`, 400, "invalid_request", "must be a JSON object"},
		{"no body", "chatbot", "POST", "/api/agent-terminal/sessions", nil, 400, "invalid_request", "needs a JSON object"},
		{"two values", "chatbot", "POST", "/api/agent-terminal/sessions", `{} {}`, 400, "invalid_request", "more than one JSON value"},
		{"too large", "chatbot", "POST", "/api/agent-terminal/sessions", `{"agent_id": "` + strings.Repeat("x", restapi.MaxBodyBytes) + `"}`, 413, "request_too_large", "over"},
		{"unknown session", "chatbot", "GET", "/api/agent-terminal/sessions/nope", nil, 404, "session_not_found", `"nope"`},
		{"execute without session id", "chatbot", "POST", "/api/agent-terminal/execute", map[string]any{"command": "ls"}, 400, "invalid_request", "session_id query parameter is required"},
		{"execute without command", "chatbot", "POST", exec, map[string]any{}, 400, "invalid_request", "command is required"},
		{"description too long", "chatbot", "POST", exec, map[string]any{"command": "ls", "description": strings.Repeat("d", agents.MaxDescriptionBytes+1)}, 400, "invalid_request", "over the 4096-byte limit"},
		{"execute in unknown session", "chatbot", "POST", "/api/agent-terminal/execute?session_id=nope", map[string]any{"command": "ls"}, 404, "session_not_found", "nope"},
		{"forbidden command", "chatbot", "POST", exec, map[string]any{"command": "kill -9 1"}, 403, "insufficient_permissions", "Command risk forbidden exceeds agent max risk moderate"},
		{"approve without approved", "ana", "POST", approve, map[string]any{"user_id": "u"}, 400, "invalid_request", `"approved" is required`},
		{"approved not a boolean", "ana", "POST", approve, `{"approved": "yes"}`, 400, "invalid_request", `field "approved" must be a boolean, not string`},
		{"approve with nothing held", "ana", "POST", approve, map[string]any{"approved": true}, 409, "no_pending_approval", "nothing to approve"},
		{"agent approving", "chatbot", "POST", approve, map[string]any{"approved": true}, 403, "insufficient_permissions", "chatbot may not approval:decide here"},
		{"interrupt without user id", "ana", "POST", "/api/agent-terminal/sessions/" + id + "/interrupt", map[string]any{}, 400, "invalid_request", `"user_id" is required`},
		{"guest interrupting", "gus", "POST", "/api/agent-terminal/sessions/" + id + "/interrupt", map[string]any{"user_id": "gus"}, 403, "insufficient_permissions", "gus may not control:interrupt here"},
		{"resume while the agent has control", "ana", "POST", "/api/agent-terminal/sessions/" + id + "/resume", nil, 409, "invalid_state", "already has control"},
		{"unknown endpoint", "chatbot", "GET", "/api/agent-terminal/nothing", nil, 404, "not_found", "not an endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, m := a.call(tt.who, tt.method, tt.path, tt.body)
			require.Equal(t, tt.status, status, m)
			require.Equal(t, tt.code, m["code"])
			require.Equal(t, "error", m["status"])
			require.Contains(t, m["error"], tt.msg)
		})
	}
}

func TestSecondHeldCommandIs409ApprovalPending(t *testing.T) {
	a := newAPI(t, agents.Config{})
	id := a.create("chatbot", "chat_agent")
	_, _ = a.call("chatbot", "POST", "/api/agent-terminal/execute?session_id="+id, map[string]any{"command": "mkdir /tmp/a"})

	status, m := a.call("chatbot", "POST", "/api/agent-terminal/execute?session_id="+id, map[string]any{"command": "mkdir /tmp/b"})

	require.Equal(t, http.StatusConflict, status)
	require.Equal(t, "approval_pending", m["code"])
}

func TestTooManySessionsIs429(t *testing.T) {
	a := newAPI(t, agents.Config{MaxConcurrentSessions: 1})
	a.create("chatbot", "chat_agent")

	status, m := a.call("chatbot", "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": "a", "agent_role": "chat_agent"})

	require.Equal(t, http.StatusTooManyRequests, status)
	require.Equal(t, "too_many_sessions", m["code"])
	require.Contains(t, m["error"], "max_concurrent_sessions")
}

func TestTooManyRunningCommandsIs429AndSaysToWait(t *testing.T) {
	a := newAPI(t, agents.Config{MaxConcurrentCommands: 1})
	id := a.create("chatbot", "chat_agent")
	path := a.srv.URL + "/api/agent-terminal/execute?session_id=" + id
	first := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", path, strings.NewReader(`{"command": "sleep 1000"}`))
		req.Header.Set("Authorization", "Bearer "+a.tokens["chatbot"])
		resp, err := a.srv.Client().Do(req)
		if err != nil {
			first <- 0
			return
		}
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	p, err := a.sp.Next(ctx)
	require.NoError(t, err)

	status, m := a.call("chatbot", "POST", "/api/agent-terminal/execute?session_id="+id, map[string]any{"command": "echo hi"})

	require.Equal(t, http.StatusTooManyRequests, status, m)
	require.Equal(t, "too_many_commands", m["code"])
	require.Contains(t, m["error"], "max_concurrent_commands")
	require.Contains(t, m["error"], "wait for one of them to finish")
	p.Exit(0)
	select {
	case code := <-first:
		require.Equal(t, http.StatusOK, code)
	case <-ctx.Done():
		t.Fatal("the first command never answered")
	}
}

func TestSpawnFailureIs500ExecutionError(t *testing.T) {
	a := newAPI(t, agents.Config{})
	a.sp.FailWhen(func(ports.SpawnSpec) bool { return true }, errors.New("no shell here"))
	id := a.create("chatbot", "chat_agent")

	status, m := a.call("chatbot", "POST", "/api/agent-terminal/execute?session_id="+id, map[string]any{"command": "echo hi"})

	require.Equal(t, http.StatusInternalServerError, status)
	require.Equal(t, "execution_error", m["code"])
	require.Contains(t, m["error"], "no shell here")
}

func TestAuditFailureIs500AndNamesNoFileToTheClient(t *testing.T) {
	a := newAPI(t, agents.Config{})
	id := a.create("chatbot", "chat_agent")
	a.audit.failWith(errors.New("write audit log /secret/path/audit.log: no space left on device"))

	status, m := a.call("chatbot", "POST", "/api/agent-terminal/execute?session_id="+id, map[string]any{"command": "echo hi"})

	require.Equal(t, http.StatusInternalServerError, status)
	require.Equal(t, "audit_error", m["code"])
	require.NotContains(t, m["error"], "/secret/path")
	require.Empty(t, a.sp.Processes(), "nothing ran")
	require.Contains(t, a.logs.String(), "no space left on device", "the daemon's log says why")
}

func TestAnAgentCannotSeeAnotherAgentsSession(t *testing.T) {
	a := newAPI(t, agents.Config{})
	theirs := a.create("autobot", "chat_agent")
	mine := a.create("chatbot", "chat_agent")

	_, m := a.call("chatbot", "GET", "/api/agent-terminal/sessions", nil)
	require.EqualValues(t, 1, m["total"])
	require.Equal(t, mine, m["sessions"].([]any)[0].(map[string]any)["session_id"])
	status, _ := a.call("chatbot", "GET", "/api/agent-terminal/sessions/"+theirs, nil)
	require.Equal(t, http.StatusNotFound, status)

	_, m = a.call("ana", "GET", "/api/agent-terminal/sessions", nil)
	require.EqualValues(t, 2, m["total"], "a person with agent:read sees all")
}

func TestTokensNeverReachTheLog(t *testing.T) {
	a := newAPI(t, agents.Config{})
	id := a.create("chatbot", "chat_agent")
	_, _ = a.call("chatbot", "POST", "/api/agent-terminal/execute?session_id="+id, map[string]any{"command": "echo hi"})
	_, _ = a.call("sg_wrong-token-value", "GET", "/api/agent-terminal/sessions", nil)

	logs := a.logs.String()
	require.Contains(t, logs, "principal=chatbot", "requests are logged by who made them")
	for _, tok := range a.tokens {
		require.NotContains(t, logs, tok)
	}
	require.NotContains(t, logs, "sg_wrong-token-value")
}
