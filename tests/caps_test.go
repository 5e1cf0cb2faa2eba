package tests

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/userstore"
	"github.com/shellgate/shellgate/tests/ahpclient"
)

// TestTrickledRequestBodyIsCutOffAtItsDeadline: a client that sends its
// body a byte at a time does not hold the connection and its handler past
// request_body_timeout. (Signed in, so that the handler reads the body; a
// request without a token is answered 401 first.)
func TestTrickledRequestBodyIsCutOffAtItsDeadline(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("request_body_timeout: 1s\n"), 0o600))
	d := startDaemon(t, "--config", cfg)

	conn, err := net.Dial("tcp", d.addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	_, err = fmt.Fprintf(conn, "POST /api/agent-terminal/sessions HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", d.addr, d.token)
	require.NoError(t, err)
	sent := time.Now()

	// The daemon answers or hangs up; either way it stops waiting. The
	// read deadline is only this test's patience.
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(patience)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err == nil {
		_ = resp.Body.Close()
		require.GreaterOrEqual(t, resp.StatusCode, 400)
	} else {
		var ne net.Error
		require.False(t, errors.As(err, &ne) && ne.Timeout(), "the daemon still waits for the body after %s", time.Since(sent))
	}
	t.Logf("cut off after %s", time.Since(sent).Round(10*time.Millisecond))

	// Others are served meanwhile and after.
	resp2, err := http.Get("http://" + d.addr + "/healthz")
	require.NoError(t, err)
	require.NoError(t, resp2.Body.Close())
	require.Equal(t, http.StatusOK, resp2.StatusCode)
}

// TestConnectionsWithoutSignInAreCappedAndGivenADeadline: strangers cannot
// hold more than max_unauthenticated_connections, nor stay past
// sign_in_grace; a person with a token always gets in and stays.
func TestConnectionsWithoutSignInAreCappedAndGivenADeadline(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("sign_in_grace: 2s\nmax_unauthenticated_connections: 2\n"), 0o600))
	d := startDaemon(t, "--config", cfg)
	ctx := ctxT(t)

	strangers := []*ahpclient.Client{d.dialRaw(t, ahpclient.DialOptions{}), d.dialRaw(t, ahpclient.DialOptions{})}
	for _, s := range strangers {
		rpcErr, err := s.Ping(ctx) // answered: each is counted by now
		require.NoError(t, err)
		require.Nil(t, rpcErr)
	}
	third := d.dialRaw(t, ahpclient.DialOptions{})
	require.NoError(t, third.WaitClosed(ctx))
	code, reason := third.CloseStatus()
	require.Equal(t, 1008, int(code))
	require.Contains(t, reason, "without a sign-in")

	person := d.dial(t, ahpclient.DialOptions{}) // the admin's token: not counted
	initialize(t, person, "admin")

	for _, s := range strangers {
		require.NoError(t, s.WaitClosed(ctx))
		code, reason := s.CloseStatus()
		require.Equal(t, 1008, int(code))
		require.Contains(t, reason, "not signed in within 2s")
	}
	rpcErr, err := person.Ping(ctx)
	require.NoError(t, err)
	require.Nil(t, rpcErr, "the signed-in connection stays")

	// Their places are free again.
	again := d.dialRaw(t, ahpclient.DialOptions{})
	rpcErr, err = again.Ping(ctx)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
}

// getMetrics reads /metrics signed in as the admin.
func (d *daemon) getMetrics() (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+d.addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	return http.DefaultClient.Do(req)
}

func TestMetricsNeedASignInUnlessPublic(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	status := func(d *daemon, token string) int {
		req, err := http.NewRequest(http.MethodGet, "http://"+d.addr+"/metrics", nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		return resp.StatusCode
	}
	require.Equal(t, http.StatusUnauthorized, status(d, ""))
	require.Equal(t, http.StatusUnauthorized, status(d, "sg_wrong"))
	require.Equal(t, http.StatusOK, status(d, d.token))

	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("metrics_public: true\n"), 0o600))
	public := startDaemon(t, "--config", cfg)
	require.Equal(t, http.StatusOK, status(public, ""))
}

// TestOneAgentCannotTakeEverySessionSlot: max_sessions_per_agent counts the
// sessions of one agent (its token), so with the daemon's slots nearly full
// of one agent's sessions another agent still opens its own.
func TestOneAgentCannotTakeEverySessionSlot(t *testing.T) {
	t.Parallel()
	g := startGateDaemon(t, "--config", noSandbox(t, "  max_concurrent_sessions: 3\n  max_sessions_per_agent: 2\n"))
	open := func(who, agentID, role string) (int, map[string]any) {
		return g.api(t, who, "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": agentID, "agent_role": role})
	}
	var mine []string
	for _, agentID := range []string{"a1", "a2"} {
		status, body := open("chatbot", agentID, "chat_agent")
		require.Equal(t, http.StatusCreated, status, body)
		mine = append(mine, body["session_id"].(string))
	}
	// A new agent_id is the same agent: the count is by token.
	status, body := open("chatbot", "a3", "chat_agent")
	require.Equal(t, http.StatusTooManyRequests, status, body)
	require.Equal(t, "too_many_agent_sessions", body["code"])
	require.Contains(t, body["error"], "max_sessions_per_agent; delete one of yours")

	status, body = open("autobot", "other", "automation_agent")
	require.Equal(t, http.StatusCreated, status, "another agent still gets a session: %v", body)

	// The daemon's own cap still holds for everyone.
	status, body = g.api(t, "autobot", "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": "other2", "agent_role": "automation_agent"})
	require.Equal(t, http.StatusTooManyRequests, status, body)
	require.Equal(t, "too_many_sessions", body["code"])

	// Deleting one of its own gives the first agent its place back.
	status, body = g.api(t, "chatbot", "DELETE", "/api/agent-terminal/sessions/"+mine[0], nil)
	require.Equal(t, http.StatusOK, status, body)
	status, body = open("chatbot", "a3", "chat_agent")
	require.Equal(t, http.StatusCreated, status, body)
}

// configFile writes a daemon config and returns its path.
func configFile(t *testing.T, yaml string) string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(yaml), 0o600))
	return cfg
}

// requireLimit asserts a refusal by one of the host's caps.
func requireLimit(t *testing.T, rpcErr *ahpclient.RPCError, limit, says string) {
	t.Helper()
	require.NotNil(t, rpcErr, "refused")
	require.Equal(t, -31001, rpcErr.Code, rpcErr.Message)
	require.Contains(t, rpcErr.Message, says)
	require.JSONEq(t, fmt.Sprintf(`{"limit": %q}`, limit), string(rpcErr.Data))
}

// TestPersonAtTerminalCapIsRefusedWithWhatToDo: max_terminals_per_person
// refuses the next terminal with a reason, holds nobody else back, and
// frees a place when one is disposed of.
func TestPersonAtTerminalCapIsRefusedWithWhatToDo(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, "--config", configFile(t, "max_terminals_per_person: 2\n"))
	ctx := ctxT(t)
	token := d.addUser(t, "sam", "member")
	sam := d.dial(t, ahpclient.DialOptions{Token: token})
	initialize(t, sam, "sam")
	for _, uri := range []string{"ahp-terminal:/sam-1", "ahp-terminal:/sam-2"} {
		rpcErr, err := sam.CreateTerminal(ctx, ahpclient.CreateParams{Channel: uri})
		require.NoError(t, err)
		require.Nil(t, rpcErr)
	}
	rpcErr, err := sam.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/sam-3"})
	require.NoError(t, err)
	requireLimit(t, rpcErr, "max_terminals_per_person", "sam already holds 2 terminals, this host's max_terminals_per_person; dispose of one (disposeTerminal) and try again")

	// Another connection of the same person is the same person.
	again := d.dial(t, ahpclient.DialOptions{Token: token})
	initialize(t, again, "sam-again")
	rpcErr, err = again.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/sam-3"})
	require.NoError(t, err)
	requireLimit(t, rpcErr, "max_terminals_per_person", "sam already holds 2 terminals")

	other := d.dial(t, ahpclient.DialOptions{Token: d.addUser(t, "ana", "member")})
	initialize(t, other, "ana")
	rpcErr, err = other.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/ana-1"})
	require.NoError(t, err)
	require.Nil(t, rpcErr, "another person is not held back")

	admin := d.dial(t, ahpclient.DialOptions{})
	initialize(t, admin, "admin")
	for _, uri := range []string{"ahp-terminal:/admin-1", "ahp-terminal:/admin-2", "ahp-terminal:/admin-3"} {
		rpcErr, err := admin.CreateTerminal(ctx, ahpclient.CreateParams{Channel: uri})
		require.NoError(t, err)
		require.Nil(t, rpcErr, "the cap is not an admin's")
	}

	rpcErr, err = sam.DisposeTerminal(ctx, "ahp-terminal:/sam-1")
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	rpcErr, err = sam.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/sam-3"})
	require.NoError(t, err)
	require.Nil(t, rpcErr, "disposing of one gave the place back")
}

// TestAdminStillStartsAndDisposesAtTheOpenFileLimit: the daemon runs with
// a small open-file limit (prlimit, so nothing else on the machine is
// short of files); a member's terminals use up all but the reserve and are
// then refused with a reason, and the admin still connects, starts a
// terminal and disposes of the member's.
func TestAdminStillStartsAndDisposesAtTheOpenFileLimit(t *testing.T) {
	t.Parallel()
	prlimit, err := exec.LookPath("prlimit")
	require.NoError(t, err, "util-linux's prlimit runs the daemon under a small open-file limit")
	dataDir := t.TempDir()
	store, err := userstore.Open(filepath.Join(dataDir, "users.yaml"))
	require.NoError(t, err)
	admin, _, err := store.Bootstrap("admin")
	require.NoError(t, err)
	member, err := store.Add("sam", "member")
	require.NoError(t, err)
	bot, err := store.Add("bot", "chat_agent")
	require.NoError(t, err)
	cfg := configFile(t, "max_terminals_per_person: 0\nopen_file_reserve: 48\nagent_terminal:\n  sandbox: \"off\"\n")
	d := startDaemonUnder(t, []string{prlimit, "--nofile=160:160", "--"}, dataDir, nil, "--config", cfg)
	d.token = admin
	ctx := ctxT(t)

	sam := d.dial(t, ahpclient.DialOptions{Token: member})
	initialize(t, sam, "sam")
	var mine []string
	var refused *ahpclient.RPCError
	for i := 0; i < 160 && refused == nil; i++ {
		uri := fmt.Sprintf("ahp-terminal:/sam-%d", i)
		rpcErr, err := sam.CreateTerminal(ctx, ahpclient.CreateParams{Channel: uri})
		require.NoError(t, err)
		if rpcErr != nil {
			refused = rpcErr
			break
		}
		mine = append(mine, uri)
	}
	requireLimit(t, refused, "open_file_reserve", "and keeps the last 48 for admins; dispose of terminals you no longer need, or ask an admin to")
	require.NotEmpty(t, mine, "the member started some before the reserve")
	t.Logf("the member started %d terminals before the reserve: %s", len(mine), refused.Message)

	// An agent's command is refused as the daemon being at capacity, not
	// as a failure inside it.
	status, created := d.agentAPI(t, bot, "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": "bot", "agent_role": "chat_agent"})
	require.Equal(t, http.StatusCreated, status, created)
	status, ran := d.agentAPI(t, bot, "POST", "/api/agent-terminal/execute?session_id="+created["session_id"].(string), map[string]any{"command": "echo hi"})
	require.Equal(t, http.StatusServiceUnavailable, status, ran)
	require.Equal(t, "at_capacity", ran["code"])
	require.Contains(t, ran["error"], "the command was not started: the daemon has")

	root := d.dial(t, ahpclient.DialOptions{})
	initialize(t, root, "admin")
	rpcErr, err := root.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/repair"})
	require.NoError(t, err)
	require.Nil(t, rpcErr, "the admin starts a terminal from the reserve")
	for _, uri := range mine {
		rpcErr, err := root.DisposeTerminal(ctx, uri)
		require.NoError(t, err)
		require.Nil(t, rpcErr)
	}
	rpcErr, err = sam.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/sam-again"})
	require.NoError(t, err)
	require.Nil(t, rpcErr, "once the admin disposed of them, the member starts again")
}

// TestConnectionsInTotalAreCappedWithRoomKeptForAdmins: max_connections
// counts every protocol connection, signed in or not; one more is closed
// with 1013 and a reason, except an admin's while the reserve lasts.
func TestConnectionsInTotalAreCappedWithRoomKeptForAdmins(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, "--config", configFile(t, "max_connections: 2\nadmin_reserved_connections: 1\n"))
	ctx := ctxT(t)
	token := d.addUser(t, "sam", "member")
	ping := func(c *ahpclient.Client) *ahpclient.RPCError {
		rpcErr, err := c.Ping(ctx)
		require.NoError(t, err)
		return rpcErr
	}
	requireTryLater := func(c *ahpclient.Client, reason string) {
		require.NoError(t, c.WaitClosed(ctx))
		code, got := c.CloseStatus()
		require.Equal(t, 1013, int(code))
		require.Equal(t, reason, got)
	}
	const full = "max_connections (2) are in use; try again once one has closed"

	first := d.dial(t, ahpclient.DialOptions{Token: token})
	require.Nil(t, ping(first)) // answered: counted by now
	stranger := d.dialRaw(t, ahpclient.DialOptions{})
	require.Nil(t, ping(stranger))
	requireTryLater(d.dial(t, ahpclient.DialOptions{Token: token}), full)
	requireTryLater(d.dialRaw(t, ahpclient.DialOptions{}), full)

	admin := d.dial(t, ahpclient.DialOptions{})
	require.Nil(t, ping(admin), "the admin gets the reserved place")
	requireTryLater(d.dial(t, ahpclient.DialOptions{}), "max_connections (2) and the admins' reserve (1) are in use; try again once one has closed")

	// Places freed are places for anyone again. The server counts a
	// connection until it has seen it close, a moment after the client.
	require.NoError(t, first.Close())
	require.NoError(t, admin.Close())
	for {
		c := d.dial(t, ahpclient.DialOptions{Token: token})
		if _, err := c.Ping(ctx); err == nil {
			break
		}
		code, reason := c.CloseStatus()
		require.Equal(t, 1013, int(code), "refused for the cap, not anything else: %s", reason)
		require.NoError(t, ctx.Err(), "no place was freed")
	}
}
