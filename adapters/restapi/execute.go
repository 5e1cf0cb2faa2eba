package restapi

import (
	"net/http"

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
	res, err := h.app.ExecuteCommand.Handle(r.Context(), who, agents.ExecuteRequest{
		SessionID: id, Command: req.Command, Description: req.Description, ForceApproval: req.ForceApproval,
		Unconfined: req.Sandbox != nil && !*req.Sandbox,
	})
	if err != nil {
		return err
	}
	a := res.Assessment
	if res.Outcome == agents.Held {
		writeJSON(w, http.StatusOK, pendingResponse{
			Status: "pending_approval", Command: res.Command, Risk: a.Level.String(),
			Reasons: nonNil(a.Reasons), Description: req.Description, AgentRole: res.AgentRole,
			ApprovalRequired: true, ApprovalID: res.Pending.ID,
			Security: securityOf(a, res.Sandbox, false),
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
