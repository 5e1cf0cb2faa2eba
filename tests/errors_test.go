package tests

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/tests/ahpclient"
)

// answerTo waits for the answer to a raw frame sent with id.
func answerTo(t *testing.T, c *ahpclient.Client, id string) ahpclient.Message {
	t.Helper()
	m, err := c.WaitMessage(ctxT(t), func(m ahpclient.Message) bool { return m.IsResponse() && string(m.ID) == id })
	require.NoError(t, err)
	return m
}

// TestEveryErrorCodeOverTheWire sends each kind of bad input over a real
// WebSocket and checks the code and message; the connection and a terminal
// of the same connection carry on through all of it.
func TestEveryErrorCodeOverTheWire(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	ctx := ctxT(t)
	c := d.dial(t, ahpclient.DialOptions{})

	require.NoError(t, c.Send(ctx, []byte(`{"jsonrpc":"2.0","id":101,"method":"createTerminal","params":{"channel":"ahp-terminal:/early"}}`)))
	early := answerTo(t, c, "101")
	require.Equal(t, -32601, early.Error.Code)
	require.Equal(t, "This host does not serve createTerminal before initialize", early.Error.Message)
	require.NoError(t, c.Send(ctx, []byte(`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/early","clientSeq":1,"action":{"type":"terminal/input","data":"x"}}}`)))

	initialize(t, c, "errors")
	rpcErr, err := c.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/alive", Meta: spawn("cat", false)})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, _, err = c.Subscribe(ctx, "ahp-terminal:/alive")
	require.NoError(t, err)

	cases := []struct {
		name, frame, id string
		code            int
		message         string
	}{
		{"malformed JSON", `{"jsonrpc":"2.0","id":1,`, "null", -32700, ""},
		{"not an object", `[1,2]`, "null", -32600, ""},
		{"unknown method", `{"jsonrpc":"2.0","id":2,"method":"frobnicate","params":{"channel":"ahp-root://"}}`, "2", -32601, "This host does not serve frobnicate yet"},
		{"wrong type names the field", `{"jsonrpc":"2.0","id":3,"method":"subscribe","params":{"channel":42}}`, "3", -32602, "channel must be a string"},
		{"missing field", `{"jsonrpc":"2.0","id":4,"method":"disposeTerminal","params":{}}`, "4", -32602, "channel is required"},
		{"no scheme", `{"jsonrpc":"2.0","id":5,"method":"createTerminal","params":{"channel":"T1"}}`, "5", -32602, "T1 is not a terminal URI"},
		{"no path", `{"jsonrpc":"2.0","id":6,"method":"createTerminal","params":{"channel":"ahp-terminal:/"}}`, "6", -32602, "ahp-terminal:/ is not a terminal URI"},
		{"uri in use", `{"jsonrpc":"2.0","id":7,"method":"createTerminal","params":{"channel":"ahp-terminal:/alive"}}`, "7", -32003, "ahp-terminal:/alive already exists"},
		{"bad claim", `{"jsonrpc":"2.0","id":8,"method":"createTerminal","params":{"channel":"ahp-terminal:/c","claim":{"kind":"user"}}}`, "8", -32602, "That is not a terminal claim"},
		{"unknown terminal", `{"jsonrpc":"2.0","id":9,"method":"disposeTerminal","params":{"channel":"ahp-terminal:/nope"}}`, "9", -32008, "No terminal at ahp-terminal:/nope"},
		{"subscribe unknown", `{"jsonrpc":"2.0","id":10,"method":"subscribe","params":{"channel":"ahp-terminal:/nope"}}`, "10", -32008, "No terminal at ahp-terminal:/nope"},
		{"string id echoed", `{"jsonrpc":"2.0","id":"s-11","method":"nope","params":{}}`, `"s-11"`, -32601, "This host does not serve nope yet"},
	}
	for _, tc := range cases {
		require.NoError(t, c.Send(ctx, []byte(tc.frame)), tc.name)
		m := answerTo(t, c, tc.id)
		require.NotNil(t, m.Error, tc.name)
		require.Equal(t, tc.code, m.Error.Code, tc.name)
		if tc.message != "" {
			require.Equal(t, tc.message, m.Error.Message, tc.name)
		}
		require.NotEmpty(t, m.Error.Message, "%s: every error says what was wrong", tc.name)
	}
	// A notification is never answered, even a bad one; a binary frame
	// carrying JSON is served like a text one.
	require.NoError(t, c.Send(ctx, []byte(`{"jsonrpc":"2.0","method":"frobnicate","params":{}}`)))
	require.NoError(t, c.SendBinary(ctx, []byte(`{"jsonrpc":"2.0","id":12,"method":"ping","params":{"channel":"ahp-root://"}}`)))
	pong := answerTo(t, c, "12")
	require.Nil(t, pong.Error)
	require.Equal(t, json.RawMessage("null"), pong.Result)
	answered := 0
	for _, m := range c.Messages() {
		if m.Error != nil && m.Error.Message == "This host does not serve frobnicate yet" {
			answered++
		}
	}
	require.Equal(t, 1, answered, "the request was answered, the notification was not")

	// The terminal opened before all of this still works.
	_, err = c.Dispatch(ctx, "ahp-terminal:/alive", ahpclient.InputAction("still here\n"))
	require.NoError(t, err)
	_, err = c.WaitOutput(ctx, "ahp-terminal:/alive", "still here")
	require.NoError(t, err)
	cctx, cancel := context.WithTimeout(ctx, patience)
	defer cancel()
	rpcErr, err = c.Ping(cctx)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
}
