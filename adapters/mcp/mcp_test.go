package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shellgate/shellgate/adapters/clock"
	"github.com/shellgate/shellgate/adapters/mcp"
	"github.com/shellgate/shellgate/adapters/shellexpand"
	"github.com/shellgate/shellgate/adapters/spawner/fake"
	"github.com/shellgate/shellgate/adapters/userstore"
	"github.com/shellgate/shellgate/app/agents"
	"github.com/shellgate/shellgate/app/gate"
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/risk"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

// MCP sessions, held approvals and waiting calls leave nothing running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const waitFor = 20 * time.Second

type fixture struct {
	store  *userstore.Store
	srv    *httptest.Server
	app    *agents.App
	h      *mcp.Handler
	tokens map[string]string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	store, err := userstore.Open(filepath.Join(t.TempDir(), "users.yaml"))
	require.NoError(t, err)
	f := &fixture{store: store, tokens: map[string]string{}}
	for id, role := range map[string]string{"chatbot": "chat_agent", "ana": "member"} {
		f.tokens[id], err = store.Add(id, role)
		require.NoError(t, err)
	}
	sp := fake.New()
	sp.Register("sh", func(p *fake.Process) terminal.ExitStatus {
		if line := p.Spec().Args[1]; strings.HasPrefix(line, "echo ") {
			_ = p.Emit(strings.TrimPrefix(line, "echo ") + "\n")
		}
		return terminal.ExitedWith(0)
	})
	clk := clock.NewFake(time.Date(2025, 10, 4, 12, 0, 0, 0, time.UTC))
	host := terminals.New(terminals.Config{Shell: "/bin/sh", Dir: t.TempDir()}, hub.New(hub.Options{}), sp, clk)
	f.app = agents.New(agents.Config{}, agents.Deps{Classifier: risk.New(shellexpand.New()), Clock: clk, Audit: nopAudit{}, Terminals: host})
	f.h = mcp.New(f.app, terminals.NewApp(host, gate.New(store)), store, mcp.Options{BaseURL: func() string { return "http://shellgate.test/" }})
	f.srv = httptest.NewServer(f.h)
	t.Cleanup(func() {
		// As the daemon stops: MCP first, then the gate, then the host.
		f.h.Close()
		f.srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		require.NoError(t, f.app.Close(ctx))
		require.NoError(t, host.Stop(ctx))
	})
	return f
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func (f *fixture) connect(t *testing.T, who string) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{
		Endpoint: f.srv.URL, HTTPClient: &http.Client{Transport: bearer{f.tokens[who]}}, MaxRetries: -1,
	}, nil)
	require.NoError(t, err)
	return cs
}

func TestRunCommandRunsASafeCommandAndAnswersItsOutput(t *testing.T) {
	f := newFixture(t)
	cs := f.connect(t, "chatbot")
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "echo hi"}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	out := res.StructuredContent.(map[string]any)
	require.Equal(t, "hi\n", out["stdout"])
	require.Equal(t, "safe", out["risk"])
}

func TestAClientThatLeavesWithACallWaitingLeavesNothingRunning(t *testing.T) {
	f := newFixture(t)
	cs := f.connect(t, "chatbot")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "mkdir /tmp/x"}})
		done <- err
	}()
	// Wait until the command is held, then walk away mid-call.
	require.Eventually(t, func() bool {
		list, err := f.app.ListSessions.Handle(context.Background(), caller(t, f, "ana"), agents.ListFilter{})
		return err == nil && len(list) == 1 && list[0].Pending != nil
	}, waitFor, 10*time.Millisecond)
	cancel()
	require.Error(t, <-done)
	require.NoError(t, cs.Close())
	// goleak (TestMain) checks that nothing of the session, the wait or the
	// held command is left once the fixture has stopped.
}

func caller(t *testing.T, f *fixture, who string) agents.Caller {
	t.Helper()
	p, ok := f.store.Principal(who)
	require.True(t, ok)
	return agents.Caller{Principal: p, Roles: f.store.Roles()}
}

type nopAudit struct{}

func (nopAudit) Record(context.Context, ports.AuditEvent) error { return nil }

func TestRunCommandAnswersUserHasControlWhileAPersonHoldsTheSession(t *testing.T) {
	f := newFixture(t)
	cs := f.connect(t, "chatbot")
	defer cs.Close()
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "session_status"})
	require.NoError(t, err)
	id := res.StructuredContent.(map[string]any)["session_id"].(string)
	_, err = f.app.Interrupt.Handle(ctx, caller(t, f, "ana"), agents.InterruptRequest{SessionID: id})
	require.NoError(t, err)
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "echo hi"}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Equal(t, "user_has_control", res.StructuredContent.(map[string]any)["code"])
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "session_status"})
	require.NoError(t, err)
	require.NotEqual(t, "agent_control", res.StructuredContent.(map[string]any)["state"])
}
