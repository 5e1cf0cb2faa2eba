package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/tests/ahpclient"
)

func TestMain(m *testing.M) {
	// The daemon starts its run guard as this test binary.
	if code, ok := shellgate.Helper(os.Args); ok {
		os.Exit(code)
	}
	goleak.VerifyTestMain(m,
		// The thread children are forked on lives as long as the process.
		goleak.IgnoreTopFunction("github.com/shellgate/shellgate/adapters/spawner/internal/proc.spawnThread"))
}

// TestEmbedderServesARealShellOverAUnixSocket starts the example, signs
// in over the socket, opens a terminal, sees its shell's output and stops
// the example.
func TestEmbedderServesARealShellOverAUnixSocket(t *testing.T) {
	// A unix socket's path is short (108 bytes); t.TempDir's can be long.
	dir, err := os.MkdirTemp("", "sg-unix")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	socket := filepath.Join(dir, "ahp.sock")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	serving, stop := context.WithCancel(ctx)
	tokens := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(serving, socket, t.TempDir(), io.Discard, func(tok string) { tokens <- tok }) }()
	var token string
	select {
	case token = <-tokens:
	case err := <-done:
		t.Fatalf("the example ended before serving: %v", err)
	}
	info, err := os.Stat(socket)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "only the socket's owner may connect")

	overSocket := &http.Client{Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", socket)
		},
	}}
	c, err := ahpclient.Dial(ctx, "ws://unix/", ahpclient.DialOptions{Token: token, HTTPClient: overSocket})
	require.NoError(t, err)
	defer c.Close()
	_, rpcErr, err := c.Initialize(ctx, "unix-example", nil, nil)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	const uri = "ahp-terminal:/unix-example"
	rpcErr, err = c.CreateTerminal(ctx, ahpclient.CreateParams{Channel: uri})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, rpcErr, err = c.Subscribe(ctx, uri)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, err = c.Dispatch(ctx, uri, ahpclient.InputAction("echo over-the-socket-$((6*7))\n"))
	require.NoError(t, err)
	_, err = c.WaitOutput(ctx, uri, "over-the-socket-42")
	require.NoError(t, err, "the shell's output comes back over the socket")

	stop()
	require.NoError(t, <-done)
	require.NoError(t, c.WaitClosed(ctx), "stopping the example closes its clients")
}
