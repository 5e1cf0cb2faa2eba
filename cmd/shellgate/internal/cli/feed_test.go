package cli

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"
)

// TestExecFeedsPipedInputAgainAfterAResumeFromWhereItWasTaken: the
// connection drops while a feed is unanswered; exec resumes and sends it
// again, at the same offset (the daemon skips what it took), then the end,
// and exits with the command's code once its input has ended.
func TestExecFeedsPipedInputAgainAfterAResumeFromWhereItWasTaken(t *testing.T) {
	input := strings.Repeat("line of piped input\n", 3000) // about 60 KB: two feeds
	f := newFakeAHP(t, func(ws *websocket.Conn, n int, method string, id any, params map[string]any) {
		switch {
		case n == 1 && method == "x-shellgate/input":
			// Taken or not, the answer is lost with the connection.
			_ = ws.Close(websocket.StatusPolicyViolation, "this client fell behind; reconnect to resume")
		case n == 1:
			switch method {
			case "initialize":
				wsAnswer(ws, id, map[string]any{"protocolVersion": "1.0.0", "serverSeq": 1, "snapshots": []any{}})
			case "createTerminal":
				wsAnswer(ws, id, nil)
			case "subscribe":
				wsAnswer(ws, id, map[string]any{"snapshot": fakeTerminal(params["channel"].(string), 2, "", nil)})
			}
		case method == "reconnect":
			wsAnswer(ws, id, map[string]any{"type": "replay", "actions": []any{}})
		case method == "x-shellgate/input":
			b, _ := base64.StdEncoding.DecodeString(params["bytes"].(string))
			end := int(params["offset"].(float64)) + len(b)
			wsAnswer(ws, id, map[string]any{"offset": end})
			if params["end"] == true {
				wsAction(ws, params["channel"].(string), 3, map[string]any{"type": "terminal/exited", "exitCode": 5})
			}
		case method == "disposeTerminal":
			wsAnswer(ws, id, nil)
		}
	})
	code, _, errOut := runCLIIn(t, strings.NewReader(input), "exec", "--url", f.srv.URL, "--token", "sg_t", "--", "cat")
	require.Equal(t, 5, code, errOut)

	// What the second connection was fed, in order, from offset 0.
	var fed strings.Builder
	var ended bool
	f.mu.Lock()
	for _, r := range f.requests {
		if r.conn != 2 || r.method != "x-shellgate/input" {
			continue
		}
		require.False(t, ended, "nothing is fed after the end")
		require.Equal(t, float64(fed.Len()), r.params["offset"], "each feed goes on from the last")
		b, err := base64.StdEncoding.DecodeString(r.params["bytes"].(string))
		require.NoError(t, err)
		fed.Write(b)
		ended = r.params["end"] == true
	}
	f.mu.Unlock()
	require.True(t, ended, "the input was ended")
	require.True(t, fed.String() == input, "every byte was fed again over the new connection, once")
}
