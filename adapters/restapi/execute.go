package restapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/shellgate/shellgate/app/agents"
)

// execute: POST /api/agent-terminal/execute?session_id=… → the command's
// result, or its pending approval; a blocked command is a 403 error.
func (h *Handler) execute(w http.ResponseWriter, r *http.Request, who agents.Caller) error {
	id := r.URL.Query().Get("session_id")
	if id == "" {
		return malformed("the session_id query parameter is required: POST /api/agent-terminal/execute?session_id=<id>")
	}
	var req executeRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	wait, err := waitOf(req.Wait)
	if err != nil {
		return err
	}
	res, err := h.app.ExecuteCommand.Handle(r.Context(), who, agents.ExecuteRequest{
		SessionID: id, Command: req.Command, Description: req.Description, ForceApproval: req.ForceApproval,
		Unconfined: req.Sandbox != nil && !*req.Sandbox, Wait: wait,
	})
	if err != nil {
		return err
	}
	a := res.Assessment
	if res.Final != nil && res.Final.Status != agents.CommandPending {
		// It was decided (and, approved, has run) while the agent waited.
		writeJSON(w, http.StatusOK, commandOf(*res.Final))
		return nil
	}
	if res.Outcome == agents.Held {
		writeJSON(w, http.StatusOK, pendingResponse{
			Status: "pending_approval", Command: res.Command, Risk: a.Level.String(),
			Reasons: nonNil(a.Reasons), Description: req.Description, AgentRole: res.AgentRole,
			ApprovalRequired: true, ApprovalID: res.Pending.ID,
			Security: securityOf(a, res.Sandbox, false), CommandID: res.CommandID,
		})
		return nil
	}
	run := res.Run
	writeJSON(w, http.StatusOK, successResponse{
		Status: "success", Command: res.Command, Stdout: run.Stdout, Stderr: run.Stderr,
		ReturnCode: run.ReturnCode,
		Security:   securityOf(a, res.Sandbox, false),
		runFields:  runExtras(run),
	})
	return nil
}

// waitOf checks a wait given in seconds (0–600).
func waitOf(seconds float64) (time.Duration, error) {
	if seconds < 0 || seconds > agents.MaxWait.Seconds() {
		return 0, malformed("wait is %g; give 0 to %d seconds", seconds, int(agents.MaxWait.Seconds()))
	}
	return time.Duration(seconds * float64(time.Second)), nil
}

// getCommand: GET /api/agent-terminal/sessions/{session_id}/commands/{command_id}[?wait=SECONDS].
func (h *Handler) getCommand(w http.ResponseWriter, r *http.Request, who agents.Caller) error {
	var wait time.Duration
	if q := r.URL.Query().Get("wait"); q != "" {
		s, err := strconv.ParseFloat(q, 64)
		if err != nil {
			return malformed("wait=%q is not a number of seconds (0–%d)", q, int(agents.MaxWait.Seconds()))
		}
		if wait, err = waitOf(s); err != nil {
			return err
		}
	}
	v, err := h.app.GetCommand.Handle(r.Context(), who, agents.GetCommandRequest{
		SessionID: r.PathValue("session_id"), CommandID: r.PathValue("command_id"), Wait: wait,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, commandOf(v))
	return nil
}

// listCommands: GET /api/agent-terminal/sessions/{session_id}/commands, newest first.
func (h *Handler) listCommands(w http.ResponseWriter, r *http.Request, who agents.Caller) error {
	list, err := h.app.ListCommands.Handle(r.Context(), who, r.PathValue("session_id"))
	if err != nil {
		return err
	}
	out := commandsResponse{Status: "success", Total: len(list), Commands: make([]commandResponse, 0, len(list))}
	for _, v := range list {
		out.Commands = append(out.Commands, commandOf(v))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
