// Package mcp serves the agent command gate as a Model Context Protocol
// server (streamable HTTP, on the official SDK), so that agents that take
// their tools through MCP use the gate without glue. A client signs in with
// its agent's bearer token (the same users file and roles as the REST API);
// each MCP session is an agent session, opened on first use with the
// token's agent role (or a lower one asked for in the URL) and its
// workspace, and every command goes through app/agents exactly as REST's
// do: classified, confined, run, held for a person or refused, audited.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate/app/agents"
	"github.com/shellgate/shellgate/app/gate"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/access"
	"github.com/shellgate/shellgate/domain/agentsession"
	"github.com/shellgate/shellgate/ports"
)

// Path is where the server is mounted.
const Path = "/mcp"

// pollEvery is how often a held command's call tells the client it still
// waits (a progress notification), while it waits for a person.
const pollEvery = 10 * time.Second

// Options configure the server.
type Options struct {
	// BaseURL returns the daemon's URL, for the "approve it here" notes.
	BaseURL func() string
	// Log receives what cannot be told to a client; nil discards.
	Log *slog.Logger
	// Version is shellgate's, for the MCP implementation info.
	Version string
}

// Handler is the MCP endpoint. Close it before the HTTP server drains.
type Handler struct {
	s       *server
	next    http.Handler
	stopped context.Context
	stop    context.CancelFunc
}

// New returns the MCP handler over the agent gate and the terminal use
// cases.
func New(app *agents.App, terms *terminals.App, users ports.UserStore, opts Options) *Handler {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	s := &server{app: app, terms: terms, users: users, opts: opts}
	handler := sdk.NewStreamableHTTPHandler(s.newSession, &sdk.StreamableHTTPOptions{Logger: opts.Log})
	ctx, cancel := context.WithCancel(context.Background())
	return &Handler{s: s, next: auth.RequireBearerToken(s.verify, nil)(handler), stopped: ctx, stop: cancel}
}

// ServeHTTP serves one request; Close ends it, long-lived event streams
// and waiting calls included.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodDelete {
		// The client ends its session: its calls still waiting on a person
		// end too (and withdraw their commands), or the session's close
		// would wait on them.
		h.s.cancelCalls(r.Header.Get("Mcp-Session-Id"))
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	release := context.AfterFunc(h.stopped, cancel)
	defer release()
	h.next.ServeHTTP(w, r.WithContext(ctx))
}

// Close ends every request under way and every one to come: the daemon is
// stopping, and an MCP client's open event stream must not hold that up.
func (h *Handler) Close() {
	h.stop()
	h.s.cancelCalls("")
}

type server struct {
	app   *agents.App
	terms *terminals.App
	users ports.UserStore
	opts  Options

	mu sync.Mutex
	// calls are the run_command calls waiting on a person, by MCP session.
	calls map[string]map[*context.CancelFunc]struct{}
}

// waiting registers a call of MCP session id that waits on a person; the
// returned context ends with the call, the session, or the daemon.
func (s *server) waiting(ctx context.Context, id string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	if s.calls == nil {
		s.calls = map[string]map[*context.CancelFunc]struct{}{}
	}
	if s.calls[id] == nil {
		s.calls[id] = map[*context.CancelFunc]struct{}{}
	}
	s.calls[id][&cancel] = struct{}{}
	s.mu.Unlock()
	return ctx, func() {
		s.mu.Lock()
		delete(s.calls[id], &cancel)
		if len(s.calls[id]) == 0 {
			delete(s.calls, id)
		}
		s.mu.Unlock()
		cancel()
	}
}

// cancelCalls ends the waiting calls of MCP session id, or of every
// session when id is empty.
func (s *server) cancelCalls(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sid, calls := range s.calls {
		if id == "" || sid == id {
			for c := range calls {
				(*c)()
			}
		}
	}
}

// verify signs a request in: an agent's token, or 401. People's tokens are
// refused too: MCP here is for agents.
func (s *server) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	p, ok := s.users.Lookup(token)
	if !ok {
		return nil, fmt.Errorf("%w: the token is not one this host knows", auth.ErrInvalidToken)
	}
	if _, ok := p.MaxAgentRole(); !ok {
		return nil, fmt.Errorf("%w: %s holds no agent role; give it one such as chat_agent", auth.ErrInvalidToken, p.ID)
	}
	return &auth.TokenInfo{UserID: p.ID, Expiration: time.Now().Add(24 * time.Hour)}, nil
}

// session is one MCP session's agent session, opened on first use.
type session struct {
	s         *server
	role      string
	workspace string

	mu      sync.Mutex
	agentID string
	id      string // the agent session's id, once open
}

// newSession makes the MCP server of one new MCP session: the tools, bound
// to that session's agent session. The URL may ask for a lower agent role
// (?agent_role=chat_agent) and a workspace (?workspace=/abs/path).
func (s *server) newSession(r *http.Request) *sdk.Server {
	sess := &session{s: s, role: r.URL.Query().Get("agent_role"), workspace: r.URL.Query().Get("workspace")}
	srv := sdk.NewServer(&sdk.Implementation{Name: "shellgate", Version: s.opts.Version}, &sdk.ServerOptions{
		Instructions: "Run shell commands on this machine through shellgate's command gate. Each command is classified by risk, " +
			"may run sandboxed (its workspace only, no network), may wait for a person's approval, or may be refused; " +
			"the result says which and why. Do not retry a refused command in another spelling: ask the person instead.",
	})
	sdk.AddTool(srv, &sdk.Tool{
		Name: "run_command",
		Description: "Run one shell line (bash syntax) in this session's workspace and return its stdout, stderr and exit code. " +
			"Safe commands run at once; others run sandboxed or wait until a person approves them (the call then waits, " +
			"with progress notifications saying where to approve); high-risk commands may be refused with the reasons.",
	}, sess.runCommand)
	sdk.AddTool(srv, &sdk.Tool{
		Name:        "session_status",
		Description: "The agent session's state: who has control (agent_control, user_interrupt, user_control), whether a command waits for approval, the workspace. An agent that was interrupted should say so instead of retrying.",
	}, sess.sessionStatus)
	sdk.AddTool(srv, &sdk.Tool{
		Name:        "list_terminals",
		Description: "The terminals this host has open: URI, title, who holds them, running or exited. Read-only.",
	}, sess.listTerminals)
	sdk.AddTool(srv, &sdk.Tool{
		Name:        "read_terminal",
		Description: "The last characters of a terminal's output (its scrollback), where this token may read terminals.",
	}, sess.readTerminal)
	return srv
}

// caller resolves the request's principal again, so that a token rotated
// or removed meanwhile stops at once.
func (sess *session) caller(req *sdk.CallToolRequest) (agents.Caller, error) {
	if req.Extra == nil || req.Extra.TokenInfo == nil {
		return agents.Caller{}, errors.New("not signed in: send Authorization: Bearer <agent token>")
	}
	c, ok := agents.CallerOf(sess.s.users, req.Extra.TokenInfo.UserID)
	if !ok {
		return agents.Caller{}, fmt.Errorf("%s is no longer in the users file", req.Extra.TokenInfo.UserID)
	}
	return c, nil
}

// terminalCaller is the agent as the terminal use cases ask their gate
// about it: the principal by id and the credential it signed in with.
func terminalCaller(who agents.Caller) terminals.Caller {
	return terminals.Caller{ID: who.Principal.ID, Root: who.Principal.Root, Credential: who.Principal.Credential}
}

// open returns the agent session, opening it on first use.
func (sess *session) open(ctx context.Context, who agents.Caller, req *sdk.CallToolRequest) (string, error) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.id != "" {
		return sess.id, nil
	}
	role := sess.role
	if role == "" {
		max, _ := who.Principal.MaxAgentRole()
		role = string(max)
	}
	conv := ""
	if req.Session != nil {
		conv = "mcp-" + req.Session.ID()
	}
	v, err := sess.s.app.CreateSession.Handle(ctx, who, agents.CreateSessionRequest{
		AgentID: who.Principal.ID, AgentRole: role, ConversationID: conv, Workspace: sess.workspace,
		Metadata: map[string]any{"client": "mcp"},
	})
	if err != nil {
		return "", err
	}
	sess.id, sess.agentID = v.ID, who.Principal.ID
	return sess.id, nil
}

// runIn is run_command's input.
type runIn struct {
	Command        string `json:"command" jsonschema:"the shell line to run, in bash syntax"`
	Description    string `json:"description,omitempty" jsonschema:"why you run it, in one sentence; shown to the person asked to approve it"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"end the command after this many seconds of running (never later than the host's own limit)"`
}

// runOut is run_command's structured result.
type runOut struct {
	Status     string   `json:"status" jsonschema:"success (it ran: see exit_code), or pending_approval, denied, blocked, expired, error"`
	CommandID  string   `json:"command_id"`
	Stdout     string   `json:"stdout"`
	Stderr     string   `json:"stderr"`
	ExitCode   int      `json:"exit_code"`
	Signal     string   `json:"signal,omitempty"`
	Truncated  bool     `json:"truncated,omitempty"`
	Risk       string   `json:"risk"`
	Reasons    []string `json:"reasons"`
	Sandboxed  bool     `json:"sandboxed"`
	Terminal   string   `json:"terminal,omitempty"`
	ApprovedBy string   `json:"approved_by,omitempty"`
	Error      string   `json:"error,omitempty"`
	// Code names a refusal the way the REST API does (user_has_control,
	// approval_pending, …).
	Code string `json:"code,omitempty"`
}

func (sess *session) runCommand(ctx context.Context, req *sdk.CallToolRequest, in runIn) (*sdk.CallToolResult, runOut, error) {
	who, err := sess.caller(req)
	if err != nil {
		return nil, runOut{}, err
	}
	id, err := sess.open(ctx, who, req)
	if err != nil {
		return failed(err), runOut{Status: "error", Error: err.Error()}, nil
	}
	res, err := sess.s.app.ExecuteCommand.Handle(ctx, who, agents.ExecuteRequest{
		SessionID: id, Command: in.Command, Description: in.Description,
		Timeout: time.Duration(max(in.TimeoutSeconds, 0)) * time.Second,
	})
	if err != nil {
		return sess.refused(err)
	}
	if res.Outcome == agents.Ran {
		out := fromRun(res)
		return resultOf(out), out, nil
	}
	// Held: wait for a person, telling the client where to look.
	cmdID := res.CommandID
	if req.Session != nil {
		var done func()
		ctx, done = sess.s.waiting(ctx, req.Session.ID())
		defer done()
	}
	note := fmt.Sprintf("Waiting for a person to approve %q (risk %s): on the web page at %s, or `shellgate approve %s %s`.",
		in.Command, res.Assessment.Level, sess.s.opts.BaseURL(), id, cmdID)
	for n := 1; ; n++ {
		sess.progress(ctx, req, note, n)
		v, err := sess.s.app.GetCommand.Handle(ctx, who, agents.GetCommandRequest{SessionID: id, CommandID: cmdID, Wait: pollEvery})
		if ctx.Err() != nil {
			// The client cancelled the call: it no longer wants the command.
			wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			werr := sess.s.app.WithdrawCommand.Handle(wctx, who, id, cmdID)
			cancel()
			if werr != nil {
				sess.s.opts.Log.Warn("mcp: a cancelled call's command could not be withdrawn", "command_id", cmdID, "err", werr)
			}
			return nil, runOut{}, ctx.Err()
		}
		if err != nil {
			return failed(err), runOut{Status: "error", CommandID: cmdID, Error: err.Error()}, nil
		}
		if v.Status.Final() {
			out := fromView(v)
			return resultOf(out), out, nil
		}
	}
}

func (sess *session) progress(ctx context.Context, req *sdk.CallToolRequest, note string, n int) {
	tok := req.Params.GetProgressToken()
	if tok == nil || req.Session == nil {
		return
	}
	_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Message: note, Progress: float64(n)})
}

// refused answers a refusal as an error result an LLM can act on.
func (sess *session) refused(err error) (*sdk.CallToolResult, runOut, error) {
	out := runOut{Status: "error", Error: err.Error(), Reasons: []string{}}
	if k := agentsession.KindOf(err); k != 0 {
		out.Code = k.String()
	}
	var refusal *agents.CommandRefusedError
	if errors.As(err, &refusal) {
		out.Status, out.CommandID = "blocked", refusal.CommandID
	}
	var blocked *agents.CommandBlockedError
	if errors.As(err, &blocked) {
		out.Risk, out.Reasons, out.Sandboxed = blocked.Assessment.Level.String(), blocked.Assessment.Reasons, blocked.Sandbox != nil
	}
	if errors.Is(err, agents.ErrSessionNotFound) {
		sess.mu.Lock()
		sess.id = "" // it expired: the next call opens a new one
		sess.mu.Unlock()
	}
	text := "Refused: " + err.Error()
	if out.Code != "" {
		text = "Refused (" + out.Code + "): " + err.Error()
	}
	if len(out.Reasons) > 0 {
		text += "\nRisk " + out.Risk + ": " + strings.Join(out.Reasons, "; ")
	}
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}}}, out, nil
}

func fromRun(res agents.ExecuteResult) runOut {
	r := res.Run
	return runOut{
		Status: "success", CommandID: res.CommandID, Stdout: r.Stdout, Stderr: r.Stderr, ExitCode: r.ReturnCode,
		Signal: r.Signal, Truncated: r.Truncated, Risk: res.Assessment.Level.String(), Reasons: nonNil(res.Assessment.Reasons),
		Sandboxed: res.Sandbox != nil, Terminal: r.Terminal,
	}
}

func fromView(v agents.CommandView) runOut {
	out := runOut{
		Status: string(v.Status), CommandID: v.ID, Risk: v.Assessment.Level.String(), Reasons: nonNil(v.Assessment.Reasons),
		Sandboxed: v.Sandbox != nil, Terminal: v.Terminal, Error: v.Error,
	}
	if v.Approved {
		out.ApprovedBy = v.DecidedBy
	}
	if r := v.Run; r != nil {
		out.Stdout, out.Stderr, out.ExitCode, out.Signal, out.Truncated = r.Stdout, r.Stderr, r.ReturnCode, r.Signal, r.Truncated
	}
	return out
}

// resultOf is the text an LLM reads beside the structured output.
func resultOf(o runOut) *sdk.CallToolResult {
	var b strings.Builder
	switch o.Status {
	case "success":
		fmt.Fprintf(&b, "exit code %d", o.ExitCode)
		if o.Signal != "" {
			fmt.Fprintf(&b, " (killed by %s)", o.Signal)
		}
		if o.Stdout != "" {
			fmt.Fprintf(&b, "\nstdout:\n%s", o.Stdout)
		}
		if o.Stderr != "" {
			fmt.Fprintf(&b, "\nstderr:\n%s", o.Stderr)
		}
	default:
		fmt.Fprintf(&b, "%s: %s (risk %s", o.Status, o.Error, o.Risk)
		if len(o.Reasons) > 0 {
			fmt.Fprintf(&b, ": %s", strings.Join(o.Reasons, "; "))
		}
		b.WriteString(")")
	}
	return &sdk.CallToolResult{IsError: o.Status != "success", Content: []sdk.Content{&sdk.TextContent{Text: b.String()}}}
}

func failed(err error) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type statusOut struct {
	SessionID   string `json:"session_id"`
	State       string `json:"state" jsonschema:"agent_control: you may run commands; user_interrupt or user_control: a person took control, stop and say so"`
	AgentRole   string `json:"agent_role"`
	Workspace   string `json:"workspace"`
	Sandboxed   bool   `json:"sandboxed"`
	Commands    int    `json:"command_count"`
	PendingID   string `json:"pending_command_id,omitempty"`
	PendingLine string `json:"pending_command,omitempty"`
}

func (sess *session) sessionStatus(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, statusOut, error) {
	who, err := sess.caller(req)
	if err != nil {
		return nil, statusOut{}, err
	}
	id, err := sess.open(ctx, who, req)
	if err != nil {
		return failed(err), statusOut{}, nil
	}
	v, err := sess.s.app.GetSession.Handle(ctx, who, id)
	if err != nil {
		return failed(err), statusOut{}, nil
	}
	out := statusOut{SessionID: v.ID, State: v.State.String(), AgentRole: v.AgentRole, Workspace: v.Workspace, Sandboxed: v.Sandboxed, Commands: v.CommandCount}
	if v.Pending != nil {
		out.PendingID, out.PendingLine = v.Pending.ID, v.Pending.Command
	}
	text := fmt.Sprintf("session %s: %s, role %s, workspace %s", out.SessionID, out.State, out.AgentRole, out.Workspace)
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, out, nil
}

type terminalInfo struct {
	URI     string `json:"uri"`
	Title   string `json:"title"`
	Claim   string `json:"claim"`
	Running bool   `json:"running"`
}

type listOut struct {
	Terminals []terminalInfo `json:"terminals"`
}

func (sess *session) listTerminals(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, listOut, error) {
	who, err := sess.caller(req)
	if err != nil {
		return nil, listOut{}, err
	}
	list, err := sess.s.terms.ListTerminals.Handle(ctx, terminalCaller(who))
	if err != nil {
		return failed(err), listOut{Terminals: []terminalInfo{}}, nil
	}
	out := listOut{Terminals: []terminalInfo{}}
	var b strings.Builder
	for _, t := range list {
		claim := string(t.Claim.Kind)
		if t.Claim.Session != "" {
			claim += " " + t.Claim.Session
		} else if t.Claim.ClientID != "" {
			claim += " " + t.Claim.ClientID
		}
		info := terminalInfo{URI: t.URI, Title: t.Title, Claim: claim, Running: !t.Lifecycle.IsExited()}
		out.Terminals = append(out.Terminals, info)
		state := "running"
		if !info.Running {
			state = "exited"
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", info.URI, state, info.Claim, info.Title)
	}
	if b.Len() == 0 {
		b.WriteString("no terminals")
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: b.String()}}}, out, nil
}

type readIn struct {
	URI      string `json:"uri" jsonschema:"the terminal's URI, from list_terminals"`
	MaxChars int    `json:"max_chars,omitempty" jsonschema:"how many of the last characters to return (default 4000, at most 100000)"`
}

type readOut struct {
	URI  string `json:"uri"`
	Text string `json:"text"`
	Cut  bool   `json:"cut" jsonschema:"true when older output was left out"`
}

func (sess *session) readTerminal(ctx context.Context, req *sdk.CallToolRequest, in readIn) (*sdk.CallToolResult, readOut, error) {
	who, err := sess.caller(req)
	if err != nil {
		return nil, readOut{}, err
	}
	snap, err := sess.s.terms.ReadTerminal.Handle(ctx, terminalCaller(who), in.URI)
	var denied *access.DeniedError
	switch {
	case errors.As(err, &denied), errors.Is(err, gate.ErrSignIn):
		return failed(err), readOut{URI: in.URI}, nil
	case err != nil:
		return failed(fmt.Errorf("%v; list them with list_terminals", err)), readOut{URI: in.URI}, nil
	}
	max := in.MaxChars
	if max <= 0 {
		max = 4000
	}
	max = min(max, 100_000)
	var tb strings.Builder
	for _, part := range snap.Content {
		tb.WriteString(part.Text)
	}
	text := tb.String()
	out := readOut{URI: in.URI, Text: text}
	if n := utf8.RuneCountInString(text); n > max {
		r := []rune(text)
		out.Text, out.Cut = string(r[n-max:]), true
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: out.Text}}}, out, nil
}
