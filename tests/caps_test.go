package tests

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
