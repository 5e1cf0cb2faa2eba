package tests

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// bearer adds a token to every request of the official client.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.base.RoundTrip(r)
}

// mcpClient connects the official MCP Go SDK's client to the daemon over
// streamable HTTP as who; progress notifications go to progress.
func mcpClient(t *testing.T, g *gateDaemon, token string, progress chan<- string) (*sdk.ClientSession, error) {
	t.Helper()
	opts := &sdk.ClientOptions{}
	if progress != nil {
		opts.ProgressNotificationHandler = func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			select {
			case progress <- r.Params.Message:
			default:
			}
		}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "shellgate-test", Version: "1"}, opts)
	tr := &sdk.StreamableClientTransport{
		Endpoint:   "http://" + g.addr + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}},
		MaxRetries: -1,
	}
	cs, err := client.Connect(ctxT(t), tr, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

func textOf(r *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func structured(t *testing.T, r *sdk.CallToolResult) map[string]any {
	t.Helper()
	m, ok := r.StructuredContent.(map[string]any)
	require.True(t, ok, "structured output: %#v", r.StructuredContent)
	return m
}

// The held-command flow is the unconfined one: sandboxed, a chat agent's
// moderate command runs at once (R21), so this daemon runs with the
// sandbox off.
func TestMCPAgentRunsCommandsThroughTheGateWithTheOfficialClient(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("agent_terminal:\n  sandbox: \"off\"\n"), 0o600))
	g := startGateDaemon(t, "--config", cfg)
	ctx := ctxT(t)
	progress := make(chan string, 16)
	cs, err := mcpClient(t, g, g.tokens["chatbot"], progress)
	require.NoError(t, err)

	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	names := map[string]*sdk.Tool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = tool
	}
	for _, want := range []string{"run_command", "session_status", "list_terminals", "read_terminal"} {
		require.Contains(t, names, want)
		require.NotNil(t, names[want].InputSchema, "%s has an input schema", want)
		require.NotEmpty(t, names[want].Description)
	}

	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "echo hi"}})
	require.NoError(t, err)
	require.False(t, res.IsError, textOf(res))
	out := structured(t, res)
	require.Equal(t, "hi\n", out["stdout"])
	require.EqualValues(t, 0, out["exit_code"])

	// A high command is refused at once, with its reasons.
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "sudo systemctl restart nginx"}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Equal(t, "blocked", structured(t, res)["status"])
	require.NotEmpty(t, structured(t, res)["reasons"])

	// A moderate one waits for a person, saying so; approved over REST, the
	// call returns its result.
	scratch, err := os.MkdirTemp("/tmp", "shellgate-mcp-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(scratch) })
	dir := filepath.Join(scratch, "made")
	type call struct {
		res *sdk.CallToolResult
		err error
	}
	done := make(chan call, 1)
	go func() {
		p := &sdk.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "mkdir " + dir, "description": "make a dir"}}
		p.SetProgressToken("mkdir")
		r, err := cs.CallTool(ctx, p)
		done <- call{r, err}
	}()
	var note string
	select {
	case note = <-progress:
	case <-time.After(patience):
		t.Fatal("no progress notification while the command waited")
	}
	require.Contains(t, note, "approve")
	session, approval := heldOf(t, g, "chatbot")
	status, _ := g.api(t, "ana", "POST", "/api/agent-terminal/sessions/"+session+"/approve", map[string]any{"approved": true, "approval_id": approval})
	require.Equal(t, http.StatusOK, status)
	got := <-done
	require.NoError(t, got.err)
	require.False(t, got.res.IsError, textOf(got.res))
	require.Equal(t, "ana", structured(t, got.res)["approved_by"])
	require.DirExists(t, dir)

	// Denied: an error result.
	go func() {
		p := &sdk.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "mkdir " + dir + "-2"}}
		r, err := cs.CallTool(ctx, p)
		done <- call{r, err}
	}()
	session, approval = waitHeld(t, g, "chatbot")
	status, _ = g.api(t, "ana", "POST", "/api/agent-terminal/sessions/"+session+"/approve", map[string]any{"approved": false, "approval_id": approval})
	require.Equal(t, http.StatusOK, status)
	got = <-done
	require.NoError(t, got.err)
	require.True(t, got.res.IsError)
	require.Equal(t, "denied", structured(t, got.res)["status"])
	require.NoDirExists(t, dir+"-2")

	// Cancelled while it waits: the command is withdrawn, and audited so.
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		r, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "mkdir " + dir + "-3"}})
		done <- call{r, err}
	}()
	session, approval = waitHeld(t, g, "chatbot")
	cancel()
	<-done
	require.Eventually(t, func() bool {
		_, s := g.api(t, "ana", "GET", "/api/agent-terminal/sessions/"+session, nil)
		return s["pending_approval"] == nil
	}, patience, 20*time.Millisecond, "the cancelled call's command is no longer held")
	_, rec := g.api(t, "ana", "GET", "/api/agent-terminal/sessions/"+session+"/commands/"+approval, nil)
	require.Equal(t, "denied", rec["status"])
	require.Contains(t, rec["error"], "withdrawn")
	var withdrawn bool
	for _, e := range auditEvents(t, filepath.Join(g.dataDir, "audit.log")) {
		if e["status"] == "withdrawn" && e["approval_id"] == approval {
			withdrawn = true
		}
	}
	require.True(t, withdrawn, "the audit log records the withdrawal")

	// The session appears like any other, and session_status tells its state.
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "session_status"})
	require.NoError(t, err)
	require.Equal(t, "agent_control", structured(t, res)["state"])
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "list_terminals"})
	require.NoError(t, err)
	require.NotEmpty(t, structured(t, res)["terminals"])

	// The daemon stops cleanly with the client still connected (its event
	// stream open) and a call waiting on a held command.
	go func() {
		r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "mkdir " + dir + "-4"}})
		done <- call{r, err}
	}()
	waitHeld(t, g, "chatbot")
	start := time.Now()
	g.stop()
	t.Logf("stopped with a waiting MCP call in %v", time.Since(start))
	<-done
}

func TestMCPRefusesAGuestOrNoTokenWith401(t *testing.T) {
	t.Parallel()
	g := startGateDaemon(t)
	guest := g.addUser(t, "gus", "guest")
	for name, token := range map[string]string{"no token": "", "a guest": guest, "a member": g.tokens["ana"], "unknown": "sg_nope"} {
		req, err := http.NewRequest("POST", "http://"+g.addr+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, name)
	}
	_, err := mcpClient(t, g, "", nil)
	require.Error(t, err, "the official client cannot connect without a token")
}

// heldOf finds the one command held for who's session.
func heldOf(t *testing.T, g *gateDaemon, who string) (session, approval string) {
	t.Helper()
	_, list := g.api(t, who, "GET", "/api/agent-terminal/sessions", nil)
	for _, s := range list["sessions"].([]any) {
		id := s.(map[string]any)["session_id"].(string)
		_, full := g.api(t, who, "GET", "/api/agent-terminal/sessions/"+id, nil)
		if p, ok := full["pending_approval"].(map[string]any); ok {
			return id, p["approval_id"].(string)
		}
	}
	t.Fatal("no held command")
	return "", ""
}

// waitHeld waits until who's session holds a command.
func waitHeld(t *testing.T, g *gateDaemon, who string) (session, approval string) {
	t.Helper()
	var mu sync.Mutex
	require.Eventually(t, func() bool {
		_, list := g.api(t, who, "GET", "/api/agent-terminal/sessions", nil)
		for _, s := range list["sessions"].([]any) {
			id := s.(map[string]any)["session_id"].(string)
			_, full := g.api(t, who, "GET", "/api/agent-terminal/sessions/"+id, nil)
			if p, ok := full["pending_approval"].(map[string]any); ok {
				mu.Lock()
				session, approval = id, p["approval_id"].(string)
				mu.Unlock()
				return true
			}
		}
		return false
	}, patience, 20*time.Millisecond)
	return session, approval
}
