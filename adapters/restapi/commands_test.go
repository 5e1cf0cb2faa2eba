package restapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/app/agents"
)

func TestEveryExecuteAnswerNamesItsCommandAndItsRecordTellsWhatHappened(t *testing.T) {
	a := newAPI(t, agents.Config{})
	id := a.create("chatbot", "chat_agent")
	exec := "/api/agent-terminal/execute?session_id=" + id
	cmds := "/api/agent-terminal/sessions/" + id + "/commands"

	_, ran := a.call("chatbot", "POST", exec, map[string]any{"command": "echo hi"})
	require.Equal(t, "success", ran["status"])
	ranID := ran["command_id"].(string)
	status, got := a.call("chatbot", "GET", cmds+"/"+ranID, nil)
	require.Equal(t, http.StatusOK, status, "%v", got)
	require.Equal(t, "success", got["status"])
	require.Equal(t, "hi\n", got["result"].(map[string]any)["stdout"])
	require.EqualValues(t, 0, got["result"].(map[string]any)["return_code"])
	require.Equal(t, ran["terminal"], got["terminal"])
	require.Equal(t, "safe", got["security"].(map[string]any)["risk"])

	_, held := a.call("chatbot", "POST", exec, map[string]any{"command": "mkdir /tmp/x"})
	require.Equal(t, "pending_approval", held["status"])
	heldID := held["command_id"].(string)
	require.Equal(t, held["approval_id"], heldID)
	_, got = a.call("chatbot", "GET", cmds+"/"+heldID, nil)
	require.Equal(t, "pending_approval", got["status"])
	require.Nil(t, got["result"])
	status, _ = a.call("ana", "POST", "/api/agent-terminal/sessions/"+id+"/approve", map[string]any{"approved": true, "approval_id": heldID})
	require.Equal(t, http.StatusOK, status)
	_, got = a.call("chatbot", "GET", cmds+"/"+heldID, nil)
	require.Equal(t, "success", got["status"], "the agent learns the approved command's result")
	require.Equal(t, "ana", got["approved_by"])
	require.NotNil(t, got["result"])

	status, blocked := a.call("chatbot", "POST", exec, map[string]any{"command": "sudo ls"})
	require.Equal(t, http.StatusForbidden, status)
	blockedID := blocked["command_id"].(string)
	require.NotEmpty(t, blockedID)
	_, got = a.call("chatbot", "GET", cmds+"/"+blockedID, nil)
	require.Equal(t, "blocked", got["status"])
	require.Contains(t, got["error"], "exceeds agent max risk")

	_, list := a.call("ana", "GET", cmds, nil)
	require.EqualValues(t, 3, list["total"])
	var order []string
	for _, c := range list["commands"].([]any) {
		order = append(order, c.(map[string]any)["command_id"].(string))
	}
	require.Equal(t, []string{blockedID, heldID, ranID}, order, "newest first")

	status, _ = a.call("otherbot", "GET", cmds+"/"+heldID, nil)
	require.Equal(t, http.StatusNotFound, status, "another agent cannot read them")
	status, _ = a.call("gus", "GET", cmds, nil)
	require.Equal(t, http.StatusForbidden, status, "a guest cannot either")
	status, res := a.call("chatbot", "GET", cmds+"/no-such-command", nil)
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, "command_not_found", res["code"])
}

func TestWaitAnswersWhenTheHeldCommandHasRunOrWhenTheWaitEnds(t *testing.T) {
	a := newAPI(t, agents.Config{})
	id := a.create("chatbot", "chat_agent")
	exec := "/api/agent-terminal/execute?session_id=" + id
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()

	type answer struct {
		status int
		body   map[string]any
	}
	// Decided while the agent waits: the answer is the command's result.
	done := make(chan answer, 1)
	go func() {
		s, b := a.callQuiet("chatbot", "POST", exec, map[string]any{"command": "mkdir /tmp/a", "wait": 60})
		done <- answer{s, b}
	}()
	require.NoError(t, a.clk.BlockUntil(ctx, 1), "the wait's timer is set")
	_, sess := a.call("ana", "GET", "/api/agent-terminal/sessions/"+id, nil)
	p := sess["pending_approval"].(map[string]any)
	status, _ := a.call("ana", "POST", "/api/agent-terminal/sessions/"+id+"/approve", map[string]any{"approved": true, "approval_id": p["approval_id"]})
	require.Equal(t, http.StatusOK, status)
	got := <-done
	require.Equal(t, http.StatusOK, got.status, "%v", got.body)
	require.Equal(t, "success", got.body["status"])
	require.Equal(t, p["approval_id"], got.body["command_id"])
	require.NotNil(t, got.body["result"])

	// Nobody decides: the answer comes when the wait ends, still pending.
	go func() {
		s, b := a.callQuiet("chatbot", "POST", exec, map[string]any{"command": "mkdir /tmp/b", "wait": 5})
		done <- answer{s, b}
	}()
	require.NoError(t, a.clk.BlockUntil(ctx, 1))
	a.clk.Advance(5 * time.Second)
	got = <-done
	require.Equal(t, "pending_approval", got.body["status"])
	heldID := got.body["command_id"].(string)

	// The same for GET …?wait=, denied meanwhile.
	go func() {
		s, b := a.callQuiet("chatbot", "GET", "/api/agent-terminal/sessions/"+id+"/commands/"+heldID+"?wait=30", nil)
		done <- answer{s, b}
	}()
	require.NoError(t, a.clk.BlockUntil(ctx, 1))
	status, _ = a.call("ana", "POST", "/api/agent-terminal/sessions/"+id+"/approve", map[string]any{"approved": false, "approval_id": heldID})
	require.Equal(t, http.StatusOK, status)
	got = <-done
	require.Equal(t, "denied", got.body["status"])
	require.Equal(t, "ana", got.body["denied_by"])

	for _, bad := range []any{-1, 601, "soon"} {
		status, res := a.call("chatbot", "POST", exec, map[string]any{"command": "echo x", "wait": bad})
		require.Equal(t, http.StatusBadRequest, status, "wait %v: %v", bad, res)
	}
}

// callQuiet is call for a goroutine other than the test's: it reports
// failures in its answer instead of failing the test.
func (a *api) callQuiet(who, method, path string, body any) (int, map[string]any) {
	var rd *bytes.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, map[string]any{"error": err.Error()}
		}
		rd = bytes.NewReader(raw)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, a.srv.URL+path, rd)
	if err != nil {
		return 0, map[string]any{"error": err.Error()}
	}
	req.Header.Set("Authorization", "Bearer "+a.tokens[who])
	resp, err := a.srv.Client().Do(req)
	if err != nil {
		return 0, map[string]any{"error": err.Error()}
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		return resp.StatusCode, map[string]any{"error": err.Error()}
	}
	return resp.StatusCode, m
}
