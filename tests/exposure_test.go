package tests

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
