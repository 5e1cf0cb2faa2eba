package main

import (
	"context"
	"io"
	"os"
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
		// The thread the run guard (a real process even here) is forked on
		// lives as long as the process.
		goleak.IgnoreTopFunction("github.com/shellgate/shellgate/adapters/spawner/internal/proc.spawnThread"))
}

// TestSwappedInFakeServesScriptedTerminals starts the example, opens a
// terminal over the daemon's WebSocket, sees the fake shell's greeting and
// its echo of what was typed, and stops the example.
func TestSwappedInFakeServesScriptedTerminals(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	serving, stop := context.WithCancel(ctx)
	type readyInfo struct{ url, token string }
	ready := make(chan readyInfo, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(serving, t.TempDir(), io.Discard, func(url, token string) { ready <- readyInfo{url, token} })
	}()
	var at readyInfo
	select {
	case at = <-ready:
	case err := <-done:
		t.Fatalf("the example ended before serving: %v", err)
	}

	c, err := ahpclient.Dial(ctx, at.url, ahpclient.DialOptions{Token: at.token})
	require.NoError(t, err)
	defer c.Close()
	_, rpcErr, err := c.Initialize(ctx, "fake-example", nil, nil)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	const uri = "ahp-terminal:/fake-example"
	rpcErr, err = c.CreateTerminal(ctx, ahpclient.CreateParams{Channel: uri})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	snap, rpcErr, err := c.Subscribe(ctx, uri)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, err = c.Dispatch(ctx, uri, ahpclient.InputAction("hello\n"))
	require.NoError(t, err)
	live, err := c.WaitOutput(ctx, uri, "HELLO")
	require.NoError(t, err, "the fake's shell echoes in capitals")
	before, err := ahpclient.TerminalText(snap, nil)
	require.NoError(t, err)
	// The greeting came before the subscription or after it, not both.
	require.Contains(t, before+live, "fake shell ready\r\nHELLO", "the terminal runs the fake's script, not a real shell")

	stop()
	require.NoError(t, <-done)
	require.NoError(t, c.WaitClosed(ctx), "stopping the example closes its clients")
}
