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
)

// TestTrickledRequestBodyIsCutOffAtItsDeadline: a client that sends its
// body a byte at a time does not hold the connection and its handler past
// request_body_timeout. (Signed in, so that the handler reads the body; a
// request without a token is answered 401 first.)
func TestTrickledRequestBodyIsCutOffAtItsDeadline(t *testing.T) {
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
