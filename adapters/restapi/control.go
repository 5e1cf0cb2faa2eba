package restapi

import (
	"net/http"
	"strings"

	"github.com/shellgate/shellgate/app/agents"
	"github.com/shellgate/shellgate/domain/agentsession"
	"github.com/shellgate/shellgate/domain/risk"
)

// approve: POST /api/agent-terminal/sessions/{session_id}/approve.
func (h *Handler) approve(w http.ResponseWriter, r *http.Request, who agents.Caller) error {
	var req approveRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if req.Approved == nil {
		return malformed(`"approved" is required: true to run the held command, false to deny it`)
	}
	res, err := h.app.DecideApproval.Handle(r.Context(), who, agents.DecisionRequest{
		SessionID: r.PathValue("session_id"), Approve: *req.Approved,
		ApprovalID: req.ApprovalID, UserID: req.UserID,
	})
	if err != nil {
		return err
	}
	if !res.Approved {
		writeJSON(w, http.StatusOK, deniedResponse{
			Status: "denied", Command: res.Approval.Command,
			Message: "Command execution denied by user", ApprovalID: res.Approval.ID,
		})
		return nil
	}
	run := res.Run
	writeJSON(w, http.StatusOK, approvedResponse{
		Status: "approved", Command: res.Approval.Command, ApprovalID: res.Approval.ID,
		Result:   runResult{Stdout: run.Stdout, Stderr: run.Stderr, ReturnCode: run.ReturnCode, runFields: runExtras(run)},
		Security: securityOf(approvedAssessment(res.Approval), res.Sandbox, true),
	})
	return nil
}

// interrupt: POST /api/agent-terminal/sessions/{session_id}/interrupt.
func (h *Handler) interrupt(w http.ResponseWriter, r *http.Request, who agents.Caller) error {
	var req interruptRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if strings.TrimSpace(req.UserID) == "" {
		return malformed(`"user_id" is required: name the person taking control`)
	}
	res, err := h.app.Interrupt.Handle(r.Context(), who, agents.InterruptRequest{
		SessionID: r.PathValue("session_id"), UserID: req.UserID,
	})
	if err != nil {
		return err
	}
	out := interruptResponse{
		Status: "success", Message: "Agent interrupted, user has control",
		PreviousState: res.Transition.From.String(), CurrentState: res.Transition.To.String(),
	}
	if p := res.Pending; p != nil {
		out.PendingApproval = &pendingBrief{Command: p.Command, Risk: p.Risk, ApprovalID: p.ID}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// resume: POST /api/agent-terminal/sessions/{session_id}/resume; no body.
func (h *Handler) resume(w http.ResponseWriter, r *http.Request, who agents.Caller) error {
	tr, err := h.app.Resume.Handle(r.Context(), who, r.PathValue("session_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resumeResponse{
		Status: "success", Message: "Agent control resumed",
		PreviousState: tr.From.String(), CurrentState: tr.To.String(),
	})
	return nil
}

// approvedAssessment is the held command's verdict as it was shown.
func approvedAssessment(p agentsession.PendingApproval) risk.Assessment {
	a := risk.Assessment{Reasons: p.Reasons}
	if lvl, err := risk.ParseLevel(p.Risk); err == nil {
		a.Level = lvl
	}
	return a
}
