package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeAgentAPI plays the daemon's agent REST API for one session, s1,
// deciding as the daemon does: a decision that names an approval id lands
// on that held command or on nothing.
type fakeAgentAPI struct {
	srv *httptest.Server

	mu   sync.Mutex
	held *heldCmd
	// posts are the bodies of every decision received.
	posts []map[string]any
	// decided lists "approved <id>" / "denied <id>" in order.
	decided []string
	// afterGet, when set, runs once after the session has been read (the
	// agent submitting another command meanwhile).
	afterGet func(f *fakeAgentAPI)
}

// heldCmd is a held command as the daemon shows it.
type heldCmd struct {
	Command    string   `json:"command"`
	Risk       string   `json:"risk"`
	Reasons    []string `json:"reasons"`
	ApprovalID string   `json:"approval_id"`
}

func newFakeAgentAPI(t *testing.T, held *heldCmd) *fakeAgentAPI {
	f := &fakeAgentAPI{held: held}
	const session = "/api/agent-terminal/sessions/s1"
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sg_person" {
			reply(w, http.StatusUnauthorized, map[string]any{"status": "error", "code": "unauthorized", "error": "no"})
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		switch {
		case r.Method == "GET" && r.URL.Path == "/api/agent-terminal/sessions":
			reply(w, http.StatusOK, map[string]any{"status": "success", "total": 1, "sessions": []any{
				map[string]any{"session_id": "s1", "agent_id": "helper", "agent_role": "chat_agent", "state": "agent_control"},
			}})
		case r.Method == "GET" && r.URL.Path == session:
			reply(w, http.StatusOK, map[string]any{"status": "success", "session_id": "s1", "agent_id": "helper",
				"agent_role": "chat_agent", "state": "agent_control", "pending_approval": f.held})
			if f.afterGet != nil {
				f.afterGet(f)
				f.afterGet = nil
			}
		case r.Method == "POST" && r.URL.Path == session+"/approve":
			var body map[string]any
			if json.NewDecoder(r.Body).Decode(&body) != nil {
				reply(w, http.StatusBadRequest, map[string]any{"status": "error", "code": "invalid_request", "error": "not JSON"})
				return
			}
			f.posts = append(f.posts, body)
			id, _ := body["approval_id"].(string)
			switch {
			case f.held == nil:
				reply(w, http.StatusConflict, map[string]any{"status": "error", "code": "no_pending_approval", "error": "no command is waiting for approval"})
				return
			case id != "" && id != f.held.ApprovalID:
				reply(w, http.StatusConflict, map[string]any{"status": "error", "code": "no_pending_approval",
					"error": fmt.Sprintf("approval %s is no longer waiting; approval %s (%q) is, and needs its own decision", id, f.held.ApprovalID, f.held.Command)})
				return
			}
			p := f.held
			f.held = nil
			if body["approved"] == true {
				f.decided = append(f.decided, "approved "+p.ApprovalID)
				reply(w, http.StatusOK, map[string]any{"status": "approved", "command": p.Command, "approval_id": p.ApprovalID,
					"result": map[string]any{"stdout": "ran " + p.ApprovalID + "\n", "stderr": "", "return_code": 0}})
				return
			}
			f.decided = append(f.decided, "denied "+p.ApprovalID)
			reply(w, http.StatusOK, map[string]any{"status": "denied", "command": p.Command, "approval_id": p.ApprovalID,
				"message": "Command execution denied by user"})
		default:
			reply(w, http.StatusNotFound, map[string]any{"status": "error", "code": "not_found", "error": r.URL.Path})
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// hold makes the agent's next command the held one.
func (f *fakeAgentAPI) hold(id, command string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held = &heldCmd{ApprovalID: id, Command: command, Risk: "moderate", Reasons: []string{"Moderate-risk command"}}
}

func (f *fakeAgentAPI) state() (decided []string, posts int, held string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.held != nil {
		held = f.held.ApprovalID
	}
	return append([]string(nil), f.decided...), len(f.posts), held
}

// cliAgainst runs the command line against f as a person.
func (f *fakeAgentAPI) cli(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	args = append(args, "--url", f.srv.URL, "--token", "sg_person")
	code := run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// playPerson makes the command line believe a person is at a terminal.
func playPerson(t *testing.T) {
	was := isTerminal
	isTerminal = func(io.Reader) bool { return true }
	t.Cleanup(func() { isTerminal = was })
}

func TestApprovalsListTheApprovalIDOfEachHeldCommand(t *testing.T) {
	f := newFakeAgentAPI(t, nil)
	f.hold("ap1", "mkdir /tmp/a")
	code, out, errOut := f.cli(t, "", "approvals")
	require.Zero(t, code, errOut)
	require.Regexp(t, `(?m)^SESSION\s+APPROVAL\s+AGENT\s+ROLE\s+RISK\s+RUNS\s+COMMAND\s+REASONS\s+DESCRIPTION$`, out)
	require.Regexp(t, `(?m)^s1\s+ap1\s+helper\s+chat_agent\s+moderate\s+-\s+mkdir /tmp/a\s+Moderate-risk command\s+-$`, out, "a daemon that does not say where it runs: -")
}

// TestStaleDecisionNeverLandsOnACommandSubmittedSince is the review's
// case: the person lists ap1; someone else denies it and the agent submits
// ap2; the person's decision about ap1 must not run ap2.
func TestStaleDecisionNeverLandsOnACommandSubmittedSince(t *testing.T) {
	f := newFakeAgentAPI(t, nil)
	f.hold("ap1", "mkdir /tmp/a")
	code, out, errOut := f.cli(t, "", "approvals")
	require.Zero(t, code, errOut)
	require.Contains(t, out, "ap1")

	f.hold("ap2", "rm -rf /srv/data") // ap1 denied elsewhere; the agent's next one

	code, _, errOut = f.cli(t, "", "approve", "s1", "ap1")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "did not approve: approval ap1 is no longer the command session s1 is waiting on, so nothing was decided")
	require.Contains(t, errOut, "shellgate approvals")
	decided, posts, held := f.state()
	require.Empty(t, decided, "the stale decision decided nothing")
	require.Equal(t, "ap2", held)
	require.Equal(t, 1, posts)

	// The old form, from a script: it shows what is held but does not
	// approve a command nobody confirmed.
	code, _, errOut = f.cli(t, "", "approve", "s1")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "rm -rf /srv/data")
	require.Contains(t, errOut, "shellgate approve s1 ap2")
	decided, posts, held = f.state()
	require.Empty(t, decided)
	require.Equal(t, 1, posts, "nothing was sent")
	require.Equal(t, "ap2", held)

	// Denying needs no confirmation off a terminal, but is bound to the
	// command it shows.
	code, _, errOut = f.cli(t, "", "deny", "s1")
	require.Zero(t, code, errOut)
	require.Contains(t, errOut, "denied: rm -rf /srv/data")
	decided, _, _ = f.state()
	require.Equal(t, []string{"denied ap2"}, decided)
	f.mu.Lock()
	require.Equal(t, "ap2", f.posts[len(f.posts)-1]["approval_id"])
	f.mu.Unlock()

	// Named, the listed command is approved and its result shown.
	f.hold("ap3", "mkdir /tmp/b")
	code, out, errOut = f.cli(t, "", "approve", "s1", "ap3")
	require.Zero(t, code, errOut)
	require.Equal(t, "ran ap3\n", out)
	require.Contains(t, errOut, "approved: mkdir /tmp/b")
}

func TestApproveWithoutAnIDAsksAndIsBoundToTheCommandShown(t *testing.T) {
	playPerson(t)
	f := newFakeAgentAPI(t, nil)

	f.hold("ap1", "mkdir /tmp/a")
	code, _, errOut := f.cli(t, "n\n", "approve", "s1")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "mkdir /tmp/a")
	require.Contains(t, errOut, "Approve this command? [y/N] ")
	require.Contains(t, errOut, "not confirmed: nothing was decided")
	_, posts, _ := f.state()
	require.Zero(t, posts, "declined: nothing sent")

	code, out, errOut := f.cli(t, "y\n", "approve", "s1")
	require.Zero(t, code, errOut)
	require.Equal(t, "ran ap1\n", out)

	// The agent's next command replaces the one shown while the person
	// reads it: their yes is about the one they saw.
	f.hold("ap2", "mkdir /tmp/b")
	f.mu.Lock()
	f.afterGet = func(f *fakeAgentAPI) {
		f.held = &heldCmd{ApprovalID: "ap3", Command: "rm -rf /srv/data", Risk: "moderate"}
	}
	f.mu.Unlock()
	code, _, errOut = f.cli(t, "y\n", "approve", "s1")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "mkdir /tmp/b", "it showed the command held then")
	require.Contains(t, errOut, "did not approve: approval ap2 is no longer")
	decided, _, held := f.state()
	require.Equal(t, []string{"approved ap1"}, decided)
	require.Equal(t, "ap3", held)
}
