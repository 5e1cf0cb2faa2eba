package agents

import (
	"context"
	"slices"
	"time"

	"github.com/shellgate/shellgate/domain/access"
	"github.com/shellgate/shellgate/domain/risk"
	"github.com/shellgate/shellgate/ports"
)

// MaxCommandRecords is how many commands a session remembers, newest kept;
// an older one is forgotten once it has finished.
const MaxCommandRecords = 100

// MaxWait bounds how long a caller may wait for a command (wait=SECONDS).
const MaxWait = 600 * time.Second

// CommandStatus is where a submitted command stands.
type CommandStatus string

// The command statuses. Pending and running change; the others are final.
const (
	CommandPending CommandStatus = "pending_approval"
	CommandRunning CommandStatus = "running"
	CommandSuccess CommandStatus = "success" // it ran; see the exit code
	CommandError   CommandStatus = "error"   // it could not run, or its result could not be kept
	CommandDenied  CommandStatus = "denied"
	CommandBlocked CommandStatus = "blocked"
	CommandExpired CommandStatus = "expired" // its session ended while it was held
)

// Final reports whether the status can no longer change.
func (s CommandStatus) Final() bool { return s != CommandPending && s != CommandRunning }

// CommandView is one command as the gate remembers it: a copy.
type CommandView struct {
	ID          string
	SessionID   string
	Command     string
	Description string
	Status      CommandStatus
	Assessment  risk.Assessment
	// Sandbox is the confinement it runs (or would run) under; nil when
	// unconfined.
	Sandbox *ports.Confinement
	// DecidedBy is the person who approved or denied it; empty when the
	// gate decided alone.
	DecidedBy string
	// Approved says a person approved it.
	Approved bool
	// Terminal is the URI its output can be watched on, once it runs.
	Terminal    string
	SubmittedAt time.Time
	// FinishedAt is when it reached a final status; zero before.
	FinishedAt time.Time
	// Run is how it ran, once it ran and ended.
	Run *RunResult
	// Error says why it was refused, could not run, or expired.
	Error string
}

// record is a command's entry on its session; the session's mu guards it.
type record struct {
	view CommandView
	done chan struct{} // closed once the status is final
}

// remember adds a command to e's records and returns it. e.mu is held.
func (c *core) remember(e *entry, v CommandView) *record {
	v.SessionID = e.id
	if v.SubmittedAt.IsZero() {
		v.SubmittedAt = c.clock.Now()
	}
	r := &record{view: v, done: make(chan struct{})}
	if v.Status.Final() {
		r.view.FinishedAt = v.SubmittedAt
		close(r.done)
	}
	e.cmds = append(e.cmds, r)
	for len(e.cmds) > MaxCommandRecords {
		i := slices.IndexFunc(e.cmds, func(r *record) bool { return r.view.Status.Final() })
		if i < 0 {
			break
		}
		e.cmds = slices.Delete(e.cmds, i, i+1)
	}
	return r
}

// update changes a command's record; once final, its waiters are woken.
// e.mu is held.
func (c *core) update(e *entry, id string, f func(v *CommandView)) {
	for _, r := range e.cmds {
		if r.view.ID != id {
			continue
		}
		if r.view.Status.Final() {
			return
		}
		f(&r.view)
		if r.view.Status.Final() {
			r.view.FinishedAt = c.clock.Now()
			close(r.done)
		}
		return
	}
}

// expirePending marks a session's held command expired; e.mu is held.
func (c *core) expirePending(e *entry, why string) {
	for _, r := range e.cmds {
		if r.view.Status == CommandPending {
			c.update(e, r.view.ID, func(v *CommandView) { v.Status, v.Error = CommandExpired, why })
		}
	}
}

// readable returns e locked if who may read its commands: the session's
// own agent (agent:get), or a person with approval:list.
func (c *core) readable(who Caller, sessionID string) (*entry, error) {
	op := access.ApprovalList
	if who.isAgent() {
		op = access.AgentGet
	}
	if err := who.require(op); err != nil {
		return nil, err
	}
	return c.locked(who, sessionID)
}

func copyView(v CommandView) CommandView {
	out := v
	out.Assessment.Reasons = slices.Clone(v.Assessment.Reasons)
	if v.Run != nil {
		r := *v.Run
		out.Run = &r
	}
	if v.Sandbox != nil {
		s := *v.Sandbox
		out.Sandbox = &s
	}
	return out
}

// GetCommandRequest names one command, and how long to wait for it to
// reach a final status.
type GetCommandRequest struct {
	SessionID string
	CommandID string
	// Wait, up to MaxWait, holds the answer until the command is final;
	// zero answers at once.
	Wait time.Duration
}

// GetCommand describes one command of a session.
type GetCommand struct{ c *core }

// Handle answers the command's record, once final or once the wait ends
// (whichever comes first). A caller that goes away while waiting changes
// nothing. It needs the session's own agent, or a person's approval:list.
func (h GetCommand) Handle(ctx context.Context, who Caller, req GetCommandRequest) (CommandView, error) {
	c := h.c
	if err := c.enter(); err != nil {
		return CommandView{}, err
	}
	defer c.leave()
	if req.Wait < 0 || req.Wait > MaxWait {
		return CommandView{}, refuse(ErrInvalid, "wait is %s; give 0 to %d seconds", req.Wait, int(MaxWait/time.Second))
	}
	e, err := c.readable(who, req.SessionID)
	if err != nil {
		return CommandView{}, err
	}
	r := e.find(req.CommandID)
	e.mu.Unlock()
	if r == nil {
		return CommandView{}, refuse(ErrCommandNotFound, "session %s has no command %q; list them with GET /api/agent-terminal/sessions/%s/commands", req.SessionID, req.CommandID, req.SessionID)
	}
	c.waitFor(ctx, r.done, req.Wait)
	e.mu.Lock()
	defer e.mu.Unlock()
	return copyView(r.view), nil
}

// waitFor returns once done is closed, wait has passed on the core's clock,
// or ctx ends.
func (c *core) waitFor(ctx context.Context, done <-chan struct{}, wait time.Duration) {
	if wait <= 0 {
		return
	}
	expired := make(chan struct{})
	t := c.clock.AfterFunc(wait, func() { close(expired) })
	defer t.Stop()
	select {
	case <-done:
	case <-expired:
	case <-ctx.Done():
	}
}

func (e *entry) find(id string) *record {
	for _, r := range e.cmds {
		if r.view.ID == id {
			return r
		}
	}
	return nil
}

// ListCommands lists a session's remembered commands, newest first.
type ListCommands struct{ c *core }

// Handle needs the session's own agent, or a person's approval:list.
func (h ListCommands) Handle(ctx context.Context, who Caller, sessionID string) ([]CommandView, error) {
	c := h.c
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.leave()
	e, err := c.readable(who, sessionID)
	if err != nil {
		return nil, err
	}
	defer e.mu.Unlock()
	out := make([]CommandView, 0, len(e.cmds))
	for i := len(e.cmds) - 1; i >= 0; i-- {
		out = append(out, copyView(e.cmds[i].view))
	}
	return out, nil
}

// WithdrawCommand is an agent taking its command back: a client that
// cancelled its call (MCP cancellation) no longer wants it.
type WithdrawCommand struct{ c *core }

// Handle drops the held command (audited as denied, withdrawn by the
// agent) or kills the running one; a command already final is left alone.
// It needs agent:execute on the caller's own session.
func (h WithdrawCommand) Handle(ctx context.Context, who Caller, sessionID, commandID string) error {
	c := h.c
	if err := c.enter(); err != nil {
		return err
	}
	defer c.leave()
	if err := who.require(access.AgentExecute); err != nil {
		return err
	}
	e, err := c.locked(who, sessionID)
	if err != nil {
		return err
	}
	r := e.find(commandID)
	if r == nil {
		e.mu.Unlock()
		return refuse(ErrCommandNotFound, "session %s has no command %q", sessionID, commandID)
	}
	switch r.view.Status {
	case CommandPending:
		defer e.mu.Unlock()
		next := e.s
		p, err := next.DecideHeld(commandID, false, who.Principal.ID, c.clock.Now())
		if err != nil {
			return err
		}
		rec := withStatus(c.commandEvent(&next, p.Command, r.view.Assessment), ports.AuditDenied, "withdrawn")
		rec.ApprovalID = p.ID
		rec.Detail = mergeDetail(rec.Detail, map[string]string{"command_id": p.ID, "withdrawn_by": who.Principal.ID})
		if err := c.record(ctx, rec); err != nil {
			return err
		}
		e.s = next
		c.update(e, commandID, func(v *CommandView) { v.Status, v.Error = CommandDenied, "withdrawn by the agent" })
		return nil
	case CommandRunning:
		uri := r.view.Terminal
		rec := withStatus(c.commandEvent(&e.s, r.view.Command, r.view.Assessment), ports.AuditExecute, "withdrawn")
		rec.Detail = mergeDetail(rec.Detail, map[string]string{"command_id": commandID, "withdrawn_by": who.Principal.ID, "terminal": uri})
		e.mu.Unlock()
		if err := c.record(ctx, rec); err != nil {
			return err
		}
		if t, err := c.host.Get(uri); err == nil {
			_ = t.Kill()
		}
		return nil
	}
	e.mu.Unlock()
	return nil
}
