package agents

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shellgate/shellgate/domain/access"
	"github.com/shellgate/shellgate/domain/agentsession"
	"github.com/shellgate/shellgate/domain/policy"
	"github.com/shellgate/shellgate/domain/risk"
	"github.com/shellgate/shellgate/ports"
)

// MaxCommandBytes bounds a submitted command; a longer shell line could
// not be handed to a shell as one argument anyway.
const MaxCommandBytes = 64 << 10

// MaxDescriptionBytes bounds a command's description (as UTF-8, invalid
// bytes counted as the U+FFFD that replaces them). It is read by the person
// asked to approve and copied into every audit record of the command, so
// it is a note, not a document.
const MaxDescriptionBytes = 4 << 10

// ExecuteRequest is an agent command (seed 002, execute).
type ExecuteRequest struct {
	// SessionID is the session to run in; required.
	SessionID string
	// Command is the shell line; required.
	Command string
	// Description is the agent's own account of the command, shown to the
	// person asked to approve it. It is untrusted text, at most
	// MaxDescriptionBytes.
	Description string
	// ForceApproval holds the command for a person's approval even when the
	// gate would run it at once. It never unblocks a blocked command.
	ForceApproval bool
	// Unconfined asks for the command to run outside the sandbox
	// ("sandbox": false): it is then decided by the unconfined table, with
	// no contained tier (R21).
	Unconfined bool
	// Wait, up to MaxWait, holds the answer for a held command until it has
	// been decided and, if it ran, has finished (ExecuteResult.Final); zero
	// answers pending_approval at once, as seed 002 does.
	Wait time.Duration
	// Timeout, when positive, ends the command sooner than the configured
	// command_timeout (never later).
	Timeout time.Duration
}

// Outcome says what became of a submitted command that was not refused.
type Outcome int

// The outcomes.
const (
	// Ran: the command was auto-approved and has run (see Run).
	Ran Outcome = iota + 1
	// Held: the command waits for a person's approval (see Pending).
	Held
)

// ExecuteResult is what became of a submitted command.
type ExecuteResult struct {
	Outcome Outcome
	// Command is the command as submitted.
	Command string
	// AgentRole is the session's agent role.
	AgentRole string
	// Assessment is the classifier's verdict.
	Assessment risk.Assessment
	// Pending is the held command, when Outcome is Held.
	Pending *agentsession.PendingApproval
	// Run is how the command ran, when Outcome is Ran.
	Run RunResult
	// Sandbox is the confinement the command runs (or, held, would run)
	// under; nil when it runs unconfined.
	Sandbox *ports.Confinement
	// CommandID names the command's record (GET …/commands/{id}).
	CommandID string
	// Final is the held command's record once the wait asked for has
	// ended: decided and, if it ran, finished — or still pending.
	Final *CommandView
}

// ExecuteCommand is the gate: classify, judge against the session's role,
// then run, hold or refuse.
type ExecuteCommand struct{ c *core }

// Handle needs agent:execute, and the session's agent in control. Every
// submission to a session is audited before it is answered: a refusal as
// "blocked" (a description over MaxDescriptionBytes and a session already
// running MaxConcurrentCommands are refusals too), a hold as
// "approval_requested", a run as "execute" twice — once before it starts
// (if that cannot be written, nothing runs) and once with its result.
func (h ExecuteCommand) Handle(ctx context.Context, who Caller, req ExecuteRequest) (ExecuteResult, error) {
	c := h.c
	if err := c.enter(); err != nil {
		return ExecuteResult{}, err
	}
	defer c.leave()
	if err := who.require(access.AgentExecute); err != nil {
		return ExecuteResult{}, err
	}
	if err := checkCommand(req.Command); err != nil {
		return ExecuteResult{}, err
	}
	if req.Wait < 0 || req.Wait > MaxWait {
		return ExecuteResult{}, refuse(ErrInvalid, "wait is %s; give 0 to %d seconds", req.Wait, int(MaxWait/time.Second))
	}
	req.Description = validUTF8(req.Description)
	a := c.risk.ClassifyIn(req.Command, c.workspaceOf(req.SessionID))
	e, err := c.locked(who, req.SessionID)
	if err != nil {
		return ExecuteResult{}, err
	}
	confine := c.confinement(e, req.Unconfined)
	res := ExecuteResult{Command: req.Command, AgentRole: e.s.AgentRole, Assessment: a, Sandbox: confine}

	if n := len(req.Description); n > MaxDescriptionBytes {
		// The record keeps the start of it, so the log shows what was tried.
		req.Description = cutUTF8(req.Description, MaxDescriptionBytes) + "… [cut]"
		return res, c.block(ctx, e, req, a, refuse(ErrInvalid,
			"the description is %d bytes, over the %d-byte limit; shorten it to a note for the person who approves the command", n, MaxDescriptionBytes))
	}
	if err := e.s.CheckExecute(); err != nil {
		return res, c.block(ctx, e, req, a, err)
	}
	decision, _, err := policy.CheckIn(policy.Role(e.s.AgentRole), a, tier(confine))
	if err != nil {
		var be *policy.BlockedError
		if errors.As(err, &be) {
			err = &CommandBlockedError{Command: req.Command, Assessment: a, AgentRole: e.s.AgentRole, Err: be, Sandbox: confine}
		}
		return res, c.block(ctx, e, req, a, err)
	}
	if decision == policy.Auto && (req.ForceApproval || slices.Contains(c.cfg.ApprovalRequiredFor, a.Level)) {
		decision = policy.Approval
	}
	if decision == policy.Approval {
		res, err := c.hold(ctx, e, req, a, res)
		if err != nil || req.Wait <= 0 {
			return res, err
		}
		// The hold released e.mu; wait for a person and the run.
		e.mu.Lock()
		r := e.find(res.CommandID)
		e.mu.Unlock()
		if r != nil {
			c.waitFor(ctx, r.done, req.Wait)
			e.mu.Lock()
			v := copyView(r.view)
			e.mu.Unlock()
			res.Final = &v
		}
		return res, nil
	}

	if err := c.checkRunning(e); err != nil {
		return res, c.block(ctx, e, req, a, err)
	}
	next := e.s
	if err := next.StartCommand(c.clock.Now()); err != nil {
		e.mu.Unlock()
		return res, err
	}
	cmd := newCommand(e, &next, c.newID(), req.Command)
	cmd.confine, cmd.timeout = confine, req.Timeout
	base := c.commandEvent(&next, req.Command, a)
	base.Detail = mergeDetail(base.Detail, map[string]string{"command_id": cmd.id, "decision": policy.Auto.String(), "description": req.Description})
	base.Detail = mergeDetail(base.Detail, sandboxDetail(confine))
	if err := c.record(ctx, withStatus(base, ports.AuditExecute, statusRunning)); err != nil {
		e.mu.Unlock()
		return res, err
	}
	e.s = next
	e.running++
	res.CommandID = cmd.id
	c.remember(e, CommandView{
		ID: cmd.id, Command: req.Command, Description: req.Description, Status: CommandRunning,
		Assessment: a, Sandbox: confine, Terminal: cmd.uri,
	})
	e.mu.Unlock()

	res.Run, err = c.execute(ctx, cmd, base)
	if err != nil {
		return res, err
	}
	res.Outcome = Ran
	return res, nil
}

// checkRunning refuses a command while the session already runs
// MaxConcurrentCommands of them. e.mu is held.
func (c *core) checkRunning(e *entry) error {
	if max := c.cfg.MaxConcurrentCommands; max > 0 && e.running >= max {
		return refuse(ErrTooManyCommands,
			"this session already runs %d commands, its max_concurrent_commands; wait for one of them to finish (or end it over AHP) and submit again", e.running)
	}
	return nil
}

// validUTF8 replaces each invalid byte of s with U+FFFD, as encoding/json
// does when the text reaches a JSON answer or the audit log.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r) // an invalid byte comes out as utf8.RuneError, U+FFFD
	}
	return b.String()
}

// cutUTF8 is s cut to at most n bytes without splitting a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func checkCommand(cmd string) error {
	switch {
	case strings.TrimSpace(cmd) == "":
		return refuse(ErrInvalid, "command is required: give the shell line to run")
	case len(cmd) > MaxCommandBytes:
		return refuse(ErrInvalid, "the command is %d bytes, over the %d-byte limit; put a long script in a file and run that", len(cmd), MaxCommandBytes)
	case strings.ContainsRune(cmd, 0):
		return refuse(ErrInvalid, "the command holds a NUL byte, which no shell line can carry")
	}
	return nil
}

// commandEvent is the part every record about one command shares.
func (c *core) commandEvent(s *agentsession.Session, line string, a risk.Assessment) ports.AuditEvent {
	rec := c.event("", s, "")
	rec.Command = line
	rec.Risk = a.Level.String()
	rec.Reasons = slices.Clone(a.Reasons)
	return rec
}

func withStatus(e ports.AuditEvent, kind ports.AuditEventKind, status string) ports.AuditEvent {
	e.Event, e.Status = kind, status
	e.Detail = mergeDetail(nil, e.Detail)
	return e
}

// block audits a refused command and returns why it was refused (or why
// it could not be audited). e.mu is held on entry and released.
func (c *core) block(ctx context.Context, e *entry, req ExecuteRequest, a risk.Assessment, why error) error {
	defer e.mu.Unlock()
	rec := withStatus(c.commandEvent(&e.s, req.Command, a), ports.AuditBlocked, statusError)
	reason := "risk_above_role"
	switch {
	case agentsession.KindOf(why) != 0:
		reason = agentsession.KindOf(why).String()
	case errors.Is(why, ErrTooManyCommands):
		reason = "too_many_commands"
	case errors.Is(why, ErrInvalid):
		reason = "invalid_request"
	}
	id := c.newID()
	rec.Detail = mergeDetail(rec.Detail, map[string]string{"reason": reason, "message": why.Error(), "description": req.Description, "command_id": id})
	if k := keyOf(e.owner, rec); !c.repeats.absorb(k, id) {
		if err := c.record(ctx, rec); err != nil {
			return err
		}
		c.repeats.opened(k, rec)
	}
	var blocked *CommandBlockedError
	var confine *ports.Confinement
	if errors.As(why, &blocked) {
		confine = blocked.Sandbox
	}
	c.remember(e, CommandView{
		ID: id, Command: req.Command, Description: req.Description, Status: CommandBlocked,
		Assessment: a, Sandbox: confine, Error: why.Error(),
	})
	return &CommandRefusedError{CommandID: id, Err: why}
}

// hold keeps the command as the session's pending approval. e.mu is held
// on entry and released.
func (c *core) hold(ctx context.Context, e *entry, req ExecuteRequest, a risk.Assessment, res ExecuteResult) (ExecuteResult, error) {
	p := agentsession.PendingApproval{
		ID: c.newID(), Command: req.Command, Risk: a.Level.String(),
		Reasons: a.Reasons, Description: req.Description, RequestedAt: c.clock.Now(),
		Unconfined: req.Unconfined,
	}
	next := e.s
	if err := next.Hold(p); err != nil {
		return res, c.block(ctx, e, req, a, err)
	}
	defer e.mu.Unlock()
	rec := withStatus(c.commandEvent(&next, req.Command, a), ports.AuditApprovalRequested, statusPending)
	rec.ApprovalID = p.ID
	detail := map[string]string{"description": req.Description}
	if req.ForceApproval {
		detail["forced"] = "true"
	}
	rec.Detail = mergeDetail(mergeDetail(nil, detail), sandboxDetail(res.Sandbox))
	if err := c.record(ctx, rec); err != nil {
		return res, err
	}
	e.s = next
	res.Outcome = Held
	res.Pending = copyPending(next.Pending)
	res.CommandID = p.ID
	c.remember(e, CommandView{
		ID: p.ID, Command: req.Command, Description: req.Description, Status: CommandPending,
		Assessment: a, Sandbox: res.Sandbox, SubmittedAt: p.RequestedAt,
	})
	return res, nil
}

// execute runs cmd, marks the session active again, and records the
// result on top of base.
func (c *core) execute(ctx context.Context, cmd command, base ports.AuditEvent) (RunResult, error) {
	r, runErr := c.run(ctx, cmd)

	cmd.e.mu.Lock()
	cmd.e.running--
	if !cmd.e.gone {
		cmd.e.s.Touch(c.clock.Now())
	}
	c.update(cmd.e, cmd.id, func(v *CommandView) {
		run := r
		v.Run, v.Terminal, v.Status = &run, r.Terminal, CommandSuccess
		if runErr != nil {
			v.Status, v.Error = CommandError, runErr.Error()
		}
	})
	cmd.e.mu.Unlock()

	rec := withStatus(base, ports.AuditExecute, statusSuccess)
	rec.Time = c.clock.Now()
	rec = withResult(rec, r)
	if runErr != nil {
		rec.Status = statusError
		rec.Detail["error"] = runErr.Error()
	}
	if err := c.recordAfter(ctx, rec); err != nil {
		return r, errors.Join(err, runErr)
	}
	return r, runErr
}

// workspaceOf is the workspace of session id, or "" (it never changes, so
// it is read without the session's lock).
func (c *core) workspaceOf(id string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.sessions[id]; e != nil {
		return e.workspace
	}
	return ""
}

// confinement is what a command of e runs under: nil when it runs
// unconfined (the agent asked so, or the sandbox is off or unavailable).
func (c *core) confinement(e *entry, unconfined bool) *ports.Confinement {
	if unconfined || e.scope == nil || !c.confines() || e.machine != MainHost {
		return nil
	}
	return &ports.Confinement{
		Mode: c.cfg.Sandbox, Network: c.cfg.Network, Workspace: e.workspace, TempDir: e.scope.TempDir(),
	}
}

// tier is how far the gate trusts a command's confinement (R21): only a
// sandbox without network contains what moderate commands do.
func tier(c *ports.Confinement) policy.Tier {
	if c == nil || c.Network {
		return policy.Unconfined
	}
	return policy.Contained
}

// sandboxDetail is the audit record's note of the confinement.
func sandboxDetail(c *ports.Confinement) map[string]string {
	if c == nil {
		return map[string]string{"sandboxed": "false"}
	}
	network := "off"
	if c.Network {
		network = "on"
	}
	return map[string]string{"sandboxed": "true", "sandbox_mode": string(c.Mode), "sandbox_network": network, "workspace": c.Workspace}
}
