package tests

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/tests/ahpclient"
)

// A connection's read loop hands typed input to the terminal and moves on:
// a process that never reads its input holds up neither that connection
// nor anything else, and input beyond the terminal's bound is refused with
// a reason instead of waiting.
func TestInputToAProcessThatDoesNotReadLeavesTheConnectionServing(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	ctx := ctxT(t)
	c := d.dial(t, ahpclient.DialOptions{})
	_, _, err := c.Initialize(ctx, "typist", nil, nil)
	require.NoError(t, err)
	for _, term := range []struct{ uri, command string }{
		{"ahp-terminal:/stuck", "exec sleep 100"},
		{"ahp-terminal:/cat", "exec cat"},
	} {
		rpcErr, err := c.CreateTerminal(ctx, ahpclient.CreateParams{Channel: term.uri, Meta: spawn(term.command, false)})
		require.NoError(t, err)
		require.Nil(t, rpcErr)
		_, _, err = c.Subscribe(ctx, term.uri)
		require.NoError(t, err)
	}

	// 2.5 MiB to a pipe of 64 KiB that nobody reads.
	chunk := strings.Repeat("x", 64<<10)
	for range 40 {
		_, err := c.Dispatch(ctx, "ahp-terminal:/stuck", ahpclient.InputAction(chunk))
		require.NoError(t, err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, patience)
	defer cancel()
	rpcErr, err := c.Ping(pingCtx)
	require.NoError(t, err, "the connection still answers after input its process does not read")
	require.Nil(t, rpcErr)

	refused, err := c.WaitAction(ctx, func(e ahpclient.Envelope) bool {
		return e.Channel == "ahp-terminal:/stuck" && e.RejectionReason != nil
	})
	require.NoError(t, err, "input beyond the bound is refused")
	require.Contains(t, *refused.RejectionReason, "not reading its input")

	_, err = c.Dispatch(ctx, "ahp-terminal:/cat", ahpclient.InputAction("still typing\n"))
	require.NoError(t, err)
	_, err = c.WaitOutput(ctx, "ahp-terminal:/cat", "still typing")
	require.NoError(t, err, "another terminal on the same connection takes input meanwhile")

	for _, uri := range []string{"ahp-terminal:/stuck", "ahp-terminal:/cat"} {
		rpcErr, err := c.DisposeTerminal(ctx, uri)
		require.NoError(t, err)
		require.Nil(t, rpcErr)
	}
}
