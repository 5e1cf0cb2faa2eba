package restapi

import (
	"net/http"

	"github.com/shellgate/shellgate/app/agents"
)

// createSession: POST /api/agent-terminal/sessions → 201.
func (h *Handler) createSession(w http.ResponseWriter, r *http.Request, who agents.Caller) error {
	var req createRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	v, err := h.app.CreateSession.Handle(r.Context(), who, agents.CreateSessionRequest{
		AgentID: req.AgentID, AgentRole: req.AgentRole, ConversationID: req.ConversationID,
		Host: req.Host, Workspace: req.Workspace, Metadata: req.Metadata,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, createdResponse{
		Status: "created", SessionID: v.ID, AgentID: v.AgentID, AgentRole: v.AgentRole,
		ConversationID: v.ConversationID, Host: v.Host, State: v.State.String(),
		CreatedAt: timestamp(v.CreatedAt), Workspace: v.Workspace,
	})
	return nil
}

// listSessions: GET /api/agent-terminal/sessions[?agent_id=…&conversation_id=…].
func (h *Handler) listSessions(w http.ResponseWriter, r *http.Request, who agents.Caller) error {
	q := r.URL.Query()
	list, err := h.app.ListSessions.Handle(r.Context(), who, agents.ListFilter{
		AgentID: q.Get("agent_id"), ConversationID: q.Get("conversation_id"),
	})
	if err != nil {
		return err
	}
	out := listResponse{Status: "success", Total: len(list), Sessions: make([]sessionSummary, 0, len(list))}
	for _, v := range list {
		out.Sessions = append(out.Sessions, summary(v))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// getSession: GET /api/agent-terminal/sessions/{session_id}.
func (h *Handler) getSession(w http.ResponseWriter, r *http.Request, who agents.Caller) error {
	v, err := h.app.GetSession.Handle(r.Context(), who, r.PathValue("session_id"))
	if err != nil {
		return err
	}
	s := summary(v)
	writeJSON(w, http.StatusOK, sessionResponse{
		Status: "success", SessionID: s.SessionID, AgentID: s.AgentID, AgentRole: s.AgentRole,
		ConversationID: s.ConversationID, Host: s.Host, State: s.State,
		CreatedAt: s.CreatedAt, LastActivity: s.LastActivity, Uptime: seconds(v.Uptime),
		CommandCount: v.CommandCount, PendingApproval: pending(v), Metadata: v.Metadata,
		Workspace: v.Workspace,
	})
	return nil
}

// deleteSession: DELETE /api/agent-terminal/sessions/{session_id}.
func (h *Handler) deleteSession(w http.ResponseWriter, r *http.Request, who agents.Caller) error {
	id := r.PathValue("session_id")
	if err := h.app.DeleteSession.Handle(r.Context(), who, id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, deletedResponse{Status: "deleted", SessionID: id})
	return nil
}
