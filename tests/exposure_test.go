package tests

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/tests/ahpclient"
)

// noSandbox is a config that runs agent commands unconfined, so these
// tests do not depend on the kernel's sandbox features.
func noSandbox(t *testing.T, extra string) string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("agent_terminal:\n  sandbox: \"off\"\n"+extra), 0o600))
	return cfg
}

// TestStrangerReadsNoAgentCommandLineFromTheRootList: the root list is one
// state for everyone, signed in or not, so an agent command's terminal is
// listed by the agent's id and a number; the line itself is in the
// terminal's own output, which needs the read grant.
func TestStrangerReadsNoAgentCommandLineFromTheRootList(t *testing.T) {
	t.Parallel()
	g := startGateDaemon(t, "--config", noSandbox(t, ""))
	ctx := ctxT(t)

	status, created := g.api(t, "chatbot", "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": "helper", "agent_role": "chat_agent"})
	require.Equal(t, http.StatusCreated, status, created)
	id := created["session_id"].(string)
	status, ran := g.api(t, "chatbot", "POST", "/api/agent-terminal/execute?session_id="+id, map[string]any{"command": "echo topsecret-$((6*7))"})
	require.Equal(t, http.StatusOK, status, ran)
	require.Equal(t, "topsecret-42\n", ran["stdout"])
	uri := ran["terminal"].(string)

	stranger := g.dialRaw(t, ahpclient.DialOptions{})
	res, rpcErr, err := stranger.Initialize(ctx, "stranger", nil, []string{ahpclient.RootChannel})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	require.Contains(t, string(res.Raw), uri, "the terminal is listed")
	require.Contains(t, string(res.Raw), `"helper #1"`, "by the agent's id and its number")
	require.NotContains(t, string(res.Raw), "topsecret", "and not by its command")
	_, rpcErr, err = stranger.Subscribe(ctx, uri)
	require.NoError(t, err)
	require.NotNil(t, rpcErr, "a stranger may not read the terminal itself")

	person := g.dial(t, ahpclient.DialOptions{Token: g.tokens["ana"]})
	initialize(t, person, "ana")
	snap, rpcErr, err := person.Subscribe(ctx, uri)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	state, err := snap.Terminal()
	require.NoError(t, err)
	require.Equal(t, "$ echo topsecret-$((6*7))\r\ntopsecret-42\n", state.Text(), "a reader sees the line, then its output")
}

// TestTerminalsMadeAtAgentLikeURIsDoNotStopTheAgentsCommands: a member
// knows a session's id and can count its commands, but not the random end
// of each command's terminal URI, so terminals made first at the URIs
// the agent's commands once had take nothing from it.
func TestTerminalsMadeAtAgentLikeURIsDoNotStopTheAgentsCommands(t *testing.T) {
	t.Parallel()
	g := startGateDaemon(t, "--config", noSandbox(t, ""))
	ctx := ctxT(t)

	status, created := g.api(t, "chatbot", "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": "helper", "agent_role": "chat_agent"})
	require.Equal(t, http.StatusCreated, status, created)
	id := created["session_id"].(string)

	member := g.dial(t, ahpclient.DialOptions{Token: g.tokens["ana"]})
	initialize(t, member, "ana")
	for _, n := range []string{"1", "2", "3"} {
		rpcErr, err := member.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/agent-" + id + "-" + n})
		require.NoError(t, err)
		require.Nil(t, rpcErr)
	}

	for _, word := range []string{"one", "two", "three"} {
		status, ran := g.api(t, "chatbot", "POST", "/api/agent-terminal/execute?session_id="+id, map[string]any{"command": "echo " + word})
		require.Equal(t, http.StatusOK, status, ran)
		require.Equal(t, word+"\n", ran["stdout"])
		require.True(t, strings.HasPrefix(ran["terminal"].(string), "ahp-terminal:/agent-"+id+"-"), ran["terminal"])
	}
}

// TestIdenticalRefusalsBecomeOneAuditRecordWithACount: an agent that sends
// the same refused command again and again is answered every time, but the
// log gets the first refusal at once and one record counting the rest when
// audit_repeat_window ends.
func TestIdenticalRefusalsBecomeOneAuditRecordWithACount(t *testing.T) {
	t.Parallel()
	g := startGateDaemon(t, "--config", noSandbox(t, "  audit_repeat_window: 5s\n"))
	status, created := g.api(t, "chatbot", "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": "loop", "agent_role": "chat_agent"})
	require.Equal(t, http.StatusCreated, status, created)
	id := created["session_id"].(string)
	ids := map[string]bool{}
	var last string
	for i := 0; i < 20; i++ {
		status, body := g.api(t, "chatbot", "POST", "/api/agent-terminal/execute?session_id="+id, map[string]any{"command": "kill 1"})
		require.Equal(t, http.StatusForbidden, status, body)
		require.Equal(t, "insufficient_permissions", body["code"])
		last = body["command_id"].(string)
		ids[last] = true
	}
	require.Len(t, ids, 20, "each refusal is its own command, as the agent sees it")

	// Each record stands for one refusal, or for as many as it counts.
	refusals := func() (recs []map[string]any, total int) {
		for _, rec := range auditEvents(t, filepath.Join(g.dataDir, "audit.log")) {
			if rec["event"] != "blocked" || rec["command"] != "kill 1" {
				continue
			}
			recs = append(recs, rec)
			n := 1
			if r, ok := rec["detail"].(map[string]any)["repeated"].(string); ok {
				var err error
				n, err = strconv.Atoi(r)
				require.NoError(t, err)
			}
			total += n
		}
		return recs, total
	}
	got, total := refusals()
	require.NotEmpty(t, got, "the first refusal is on disk before its answer")
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for ctx := ctxT(t); total < 20; got, total = refusals() {
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("the records count %d of the 20 refusals: %v", total, got)
		}
	}
	require.Equal(t, 20, total, "no refusal is counted twice")
	require.Less(t, len(got), 20, "repeats were merged")
	lastRec := got[len(got)-1]["detail"].(map[string]any)
	// A window that ended just before the last refusal leaves it as the
	// first of the next, written whole.
	require.Contains(t, []any{lastRec["last_command_id"], lastRec["command_id"]}, last, "the last record names the last refusal: %v", got)
	t.Logf("20 refusals, %d records", len(got))
}
