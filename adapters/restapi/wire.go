package restapi

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/shellgate/shellgate/app/agents"
	"github.com/shellgate/shellgate/domain/risk"
	"github.com/shellgate/shellgate/ports"
)

// The JSON shapes of seed 002, field for field and in its order. Fields the
// seed does not show (approval_id, terminal, signal, …) are shellgate's
// additions; a client written against the seed ignores them.

type createRequest struct {
	AgentID        string         `json:"agent_id"`
	AgentRole      string         `json:"agent_role"`
	ConversationID string         `json:"conversation_id"`
	Host           string         `json:"host"`
	Workspace      string         `json:"workspace"`
	Metadata       map[string]any `json:"metadata"`
}

type executeRequest struct {
	Command       string `json:"command"`
	Description   string `json:"description"`
	ForceApproval bool   `json:"force_approval"`
	// Sandbox false asks to run unconfined (R21); absent or true: confined
	// where the daemon can.
	Sandbox *bool `json:"sandbox"`
	// Wait holds the answer for a held command up to this many seconds,
	// until it has been decided and has run (0–600; 0: answer at once).
	Wait float64 `json:"wait"`
}

type approveRequest struct {
	Approved   *bool  `json:"approved"`
	UserID     string `json:"user_id"`
	ApprovalID string `json:"approval_id"`
}

type interruptRequest struct {
	UserID string `json:"user_id"`
}

type createdResponse struct {
	Status         string      `json:"status"`
	SessionID      string      `json:"session_id"`
	AgentID        string      `json:"agent_id"`
	AgentRole      string      `json:"agent_role"`
	ConversationID string      `json:"conversation_id"`
	Host           string      `json:"host"`
	State          string      `json:"state"`
	CreatedAt      json.Number `json:"created_at"`
	Workspace      string      `json:"workspace"`
}

type sessionSummary struct {
	SessionID      string      `json:"session_id"`
	AgentID        string      `json:"agent_id"`
	AgentRole      string      `json:"agent_role"`
	ConversationID string      `json:"conversation_id"`
	Host           string      `json:"host"`
	State          string      `json:"state"`
	CreatedAt      json.Number `json:"created_at"`
	LastActivity   json.Number `json:"last_activity"`
	CommandCount   int         `json:"command_count"`
	Workspace      string      `json:"workspace"`
}

type listResponse struct {
	Status   string           `json:"status"`
	Total    int              `json:"total"`
	Sessions []sessionSummary `json:"sessions"`
}

type sessionResponse struct {
	Status          string           `json:"status"`
	SessionID       string           `json:"session_id"`
	AgentID         string           `json:"agent_id"`
	AgentRole       string           `json:"agent_role"`
	ConversationID  string           `json:"conversation_id"`
	Host            string           `json:"host"`
	State           string           `json:"state"`
	CreatedAt       json.Number      `json:"created_at"`
	LastActivity    json.Number      `json:"last_activity"`
	Uptime          json.Number      `json:"uptime"`
	CommandCount    int              `json:"command_count"`
	PendingApproval *pendingApproval `json:"pending_approval"`
	Metadata        map[string]any   `json:"metadata"`
	Workspace       string           `json:"workspace"`
}

type pendingApproval struct {
	Command     string      `json:"command"`
	Risk        string      `json:"risk"`
	Reasons     []string    `json:"reasons"`
	Timestamp   json.Number `json:"timestamp"`
	ApprovalID  string      `json:"approval_id"`
	Description string      `json:"description,omitempty"`
	// Sandboxed says the command runs confined if approved.
	Sandboxed bool `json:"sandboxed"`
}

type deletedResponse struct {
	Status    string `json:"status"`
	SessionID string `json:"session_id"`
}

type security struct {
	Risk      string   `json:"risk"`
	Reasons   []string `json:"reasons"`
	Sandboxed bool     `json:"sandboxed"`
	Approved  bool     `json:"approved"`
	// Sandbox says what confined the command, when Sandboxed.
	Sandbox *sandboxInfo `json:"sandbox,omitempty"`
}

type sandboxInfo struct {
	Mode      string `json:"mode"`
	Network   string `json:"network"`
	Workspace string `json:"workspace"`
}

// securityOf is the security block of a command.
func securityOf(a risk.Assessment, c *ports.Confinement, approved bool) security {
	s := security{Risk: a.Level.String(), Reasons: nonNil(a.Reasons), Approved: approved}
	if c != nil {
		network := "off"
		if c.Network {
			network = "on"
		}
		s.Sandboxed = true
		s.Sandbox = &sandboxInfo{Mode: string(c.Mode), Network: network, Workspace: c.Workspace}
	}
	return s
}

type successResponse struct {
	Status     string   `json:"status"`
	Command    string   `json:"command"`
	Stdout     string   `json:"stdout"`
	Stderr     string   `json:"stderr"`
	ReturnCode int      `json:"return_code"`
	Security   security `json:"security"`
	runFields
}

// runFields are shellgate's additions to every command result.
type runFields struct {
	Signal        string      `json:"signal,omitempty"`
	TimedOut      bool        `json:"timed_out"`
	Truncated     bool        `json:"truncated"`
	ExecutionTime json.Number `json:"execution_time"`
	Terminal      string      `json:"terminal"`
	CommandID     string      `json:"command_id"`
}

type pendingResponse struct {
	Status           string   `json:"status"`
	Command          string   `json:"command"`
	Risk             string   `json:"risk"`
	Reasons          []string `json:"reasons"`
	Description      string   `json:"description"`
	AgentRole        string   `json:"agent_role"`
	ApprovalRequired bool     `json:"approval_required"`
	ApprovalID       string   `json:"approval_id"`
	Security         security `json:"security"`
	CommandID        string   `json:"command_id"`
}

type approvedResponse struct {
	Status     string    `json:"status"`
	Command    string    `json:"command"`
	Result     runResult `json:"result"`
	ApprovalID string    `json:"approval_id"`
	Security   security  `json:"security"`
}

type runResult struct {
	Stdout     string `json:"stdout"`
	Stderr     string `json:"stderr"`
	ReturnCode int    `json:"return_code"`
	runFields
}

type deniedResponse struct {
	Status     string `json:"status"`
	Command    string `json:"command"`
	Message    string `json:"message"`
	ApprovalID string `json:"approval_id"`
}

type interruptResponse struct {
	Status          string        `json:"status"`
	Message         string        `json:"message"`
	PreviousState   string        `json:"previous_state"`
	CurrentState    string        `json:"current_state"`
	PendingApproval *pendingBrief `json:"pending_approval"`
}

type pendingBrief struct {
	Command    string `json:"command"`
	Risk       string `json:"risk"`
	ApprovalID string `json:"approval_id"`
}

type resumeResponse struct {
	Status        string `json:"status"`
	Message       string `json:"message"`
	PreviousState string `json:"previous_state"`
	CurrentState  string `json:"current_state"`
}

// errorResponse is every refusal: seed 002's {"status": "error", "error":
// message} with the error code beside it; a blocked command adds what the
// seed shows (command, risk, agent_role).
type errorResponse struct {
	Status    string   `json:"status"`
	Error     string   `json:"error"`
	Code      string   `json:"code"`
	Command   string   `json:"command,omitempty"`
	Risk      string   `json:"risk,omitempty"`
	AgentRole string   `json:"agent_role,omitempty"`
	Reasons   []string `json:"reasons,omitempty"`
	// Security is a blocked command's security block.
	Security *security `json:"security,omitempty"`
	// CommandID names the refused command's record.
	CommandID string `json:"command_id,omitempty"`
}

// timestamp is seconds since the epoch with milliseconds, as the seed's
// 1234567890.123.
func timestamp(t time.Time) json.Number {
	ms := t.UnixMilli()
	sign := ""
	if ms < 0 {
		sign, ms = "-", -ms
	}
	return json.Number(fmt.Sprintf("%s%d.%03d", sign, ms/1000, ms%1000))
}

// seconds is a duration in seconds, to the millisecond (3600.5).
func seconds(d time.Duration) json.Number {
	return json.Number(strconv.FormatFloat(d.Round(time.Millisecond).Seconds(), 'f', -1, 64))
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

func summary(v agents.SessionView) sessionSummary {
	return sessionSummary{
		SessionID: v.ID, AgentID: v.AgentID, AgentRole: v.AgentRole,
		ConversationID: v.ConversationID, Host: v.Host, State: v.State.String(),
		CreatedAt: timestamp(v.CreatedAt), LastActivity: timestamp(v.LastActivity),
		CommandCount: v.CommandCount, Workspace: v.Workspace,
	}
}

func pending(v agents.SessionView) *pendingApproval {
	p := v.Pending
	if p == nil {
		return nil
	}
	return &pendingApproval{
		Command: p.Command, Risk: p.Risk, Reasons: nonNil(p.Reasons),
		Timestamp: timestamp(p.RequestedAt), ApprovalID: p.ID, Description: p.Description,
		Sandboxed: v.Sandboxed && !p.Unconfined,
	}
}

func runExtras(r agents.RunResult) runFields {
	return runFields{
		Signal: r.Signal, TimedOut: r.TimedOut, Truncated: r.Truncated,
		ExecutionTime: seconds(r.Duration), Terminal: r.Terminal, CommandID: r.CommandID,
	}
}

// commandResponse is one command's record (GET …/commands/{command_id}),
// and the answer to an execute that waited for its held command.
type commandResponse struct {
	Status      string         `json:"status"`
	CommandID   string         `json:"command_id"`
	SessionID   string         `json:"session_id"`
	Command     string         `json:"command"`
	Description string         `json:"description,omitempty"`
	Security    security       `json:"security"`
	ApprovedBy  string         `json:"approved_by,omitempty"`
	DeniedBy    string         `json:"denied_by,omitempty"`
	Terminal    string         `json:"terminal,omitempty"`
	SubmittedAt json.Number    `json:"submitted_at"`
	FinishedAt  *json.Number   `json:"finished_at"`
	Result      *commandResult `json:"result"`
	Error       string         `json:"error,omitempty"`
}

type commandResult struct {
	Stdout        string      `json:"stdout"`
	Stderr        string      `json:"stderr"`
	ReturnCode    int         `json:"return_code"`
	Signal        string      `json:"signal,omitempty"`
	TimedOut      bool        `json:"timed_out"`
	Truncated     bool        `json:"truncated"`
	ExecutionTime json.Number `json:"execution_time"`
}

type commandsResponse struct {
	Status   string            `json:"status"`
	Total    int               `json:"total"`
	Commands []commandResponse `json:"commands"`
}

func commandOf(v agents.CommandView) commandResponse {
	out := commandResponse{
		Status: string(v.Status), CommandID: v.ID, SessionID: v.SessionID, Command: v.Command,
		Description: v.Description, Security: securityOf(v.Assessment, v.Sandbox, v.Approved),
		Terminal: v.Terminal, SubmittedAt: timestamp(v.SubmittedAt), Error: v.Error,
	}
	if v.Approved {
		out.ApprovedBy = v.DecidedBy
	} else {
		out.DeniedBy = v.DecidedBy
	}
	if !v.FinishedAt.IsZero() {
		t := timestamp(v.FinishedAt)
		out.FinishedAt = &t
	}
	if r := v.Run; r != nil {
		out.Result = &commandResult{
			Stdout: r.Stdout, Stderr: r.Stderr, ReturnCode: r.ReturnCode, Signal: r.Signal,
			TimedOut: r.TimedOut, Truncated: r.Truncated, ExecutionTime: seconds(r.Duration),
		}
	}
	return out
}
