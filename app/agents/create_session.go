package agents

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/shellgate/shellgate/domain/access"
	"github.com/shellgate/shellgate/domain/agentsession"
	"github.com/shellgate/shellgate/domain/policy"
	"github.com/shellgate/shellgate/ports"
)

// CreateSessionRequest is what an agent opens a session with (seed 002).
type CreateSessionRequest struct {
	// AgentID names the agent; required.
	AgentID string
	// AgentRole is one of the seed's agent roles; required, and no higher
	// than the caller's own agent role.
	AgentRole string
	// ConversationID ties the session to a chat; optional.
	ConversationID string
	// Host is where commands run: MainHost, a configured host or the
	// default host; empty means the default.
	Host string
	// Workspace is the absolute directory every command of the session
	// starts in (and, sandboxed, the only one it may write); it must lie
	// inside one of the workspace roots once symlinks are resolved. Empty
	// means the first root.
	Workspace string
	// Metadata is a free-form object kept with the session.
	Metadata map[string]any
}

// CreateSession opens an agent session in agent_control.
type CreateSession struct{ c *core }

// Handle opens the session, audits it, and starts its idle clock. It needs
// agent:create, and an agent role at least as high as the one asked for.
func (h CreateSession) Handle(ctx context.Context, who Caller, req CreateSessionRequest) (SessionView, error) {
	c := h.c
	if err := c.enter(); err != nil {
		return SessionView{}, err
	}
	defer c.leave()
	if err := who.require(access.AgentCreate); err != nil {
		return SessionView{}, err
	}
	if strings.TrimSpace(req.AgentID) == "" {
		return SessionView{}, refuse(ErrInvalid, "agent_id is required: name the agent opening the session")
	}
	if strings.TrimSpace(req.AgentRole) == "" {
		return SessionView{}, fmt.Errorf("agent_role is required: %w", policy.ErrUnknownRole)
	}
	role, err := policy.ParseRole(req.AgentRole)
	if err != nil {
		return SessionView{}, err
	}
	if !who.Principal.MayOpenAgentRole(string(role)) {
		return SessionView{}, ceilingError(who.Principal, role)
	}
	host, err := c.resolveHost(req.Host)
	if err != nil {
		return SessionView{}, err
	}
	machine := c.machine(host)
	var workspace string
	if machine == MainHost {
		workspace, err = c.resolveWorkspace(req.Workspace)
	} else {
		workspace, err = remoteWorkspace(req.Workspace)
	}
	if err != nil {
		return SessionView{}, err
	}

	s, err := agentsession.New(agentsession.Spec{
		ID: c.newID(), AgentID: req.AgentID, AgentRole: string(role),
		ConversationID: req.ConversationID, Host: host, Workspace: workspace, Metadata: req.Metadata,
		CreatedAt: c.clock.Now(),
	})
	if err != nil {
		return SessionView{}, err
	}
	e := &entry{id: s.ID, created: s.CreatedAt, owner: who.Principal.ID, workspace: workspace, machine: machine, s: s}
	if c.confines() && workspace != "" && machine == MainHost {
		if e.scope, err = c.sandbox.NewScope(s.ID); err != nil {
			return SessionView{}, refuseCause(ErrExecution, err, "the session's private temporary directory could not be made")
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := c.admit(e); err != nil {
		c.dispose(leftovers{scope: e.scope})
		return SessionView{}, err
	}
	rec := c.event(ports.AuditSessionCreated, &e.s, statusCreated)
	rec.Detail = mergeDetail(nil, map[string]string{
		"principal": who.Principal.ID, "host": host, "conversation_id": req.ConversationID,
		"workspace": workspace,
	})
	if err := c.record(ctx, rec); err != nil {
		c.dispose(c.end(e))
		return SessionView{}, err
	}
	c.scheduleExpiry(e, c.cfg.SessionTimeout)
	return c.viewOf(e, e.s, c.clock.Now()), nil
}

// admit puts e on the map unless the gate is closing or full.
func (c *core) admit(e *entry) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closing:
		return refuse(ErrClosing, "shellgate is stopping, so no new agent session opens")
	case c.cfg.MaxSessionsPerAgent > 0 && c.ownedBy(e.owner) >= c.cfg.MaxSessionsPerAgent:
		return refuse(ErrTooManyAgentSessions, "%s already has %d agent sessions open, this daemon's max_sessions_per_agent; delete one of yours (DELETE /api/agent-terminal/sessions/{session_id}) before opening another", e.owner, c.cfg.MaxSessionsPerAgent)
	case c.cfg.MaxConcurrentSessions > 0 && len(c.sessions) >= c.cfg.MaxConcurrentSessions:
		return refuse(ErrTooManySessions, "%d agent sessions are open, which is this daemon's max_concurrent_sessions; delete one (DELETE /api/agent-terminal/sessions/{session_id}) or wait for an idle one to expire", len(c.sessions))
	}
	c.sessions[e.id] = e
	return nil
}

// ownedBy counts the open sessions principal opened; c.mu is held. The
// count is by principal, not by the request's agent_id: that is the
// agent's own word, and one token could name a new agent for every
// session.
func (c *core) ownedBy(principal string) int {
	n := 0
	for _, e := range c.sessions {
		if e.owner == principal {
			n++
		}
	}
	return n
}

// resolveHost resolves the host a session asks for: MainHost, a
// configured host, or the default host.
func (c *core) resolveHost(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return c.cfg.DefaultHost, nil
	case name == MainHost || name == c.cfg.DefaultHost || slices.Contains(c.cfg.Hosts, name):
		return name, nil
	}
	known := []string{MainHost + " (this machine)"}
	if c.cfg.DefaultHost != MainHost && !slices.Contains(c.cfg.Hosts, c.cfg.DefaultHost) {
		known = append(known, c.cfg.DefaultHost+" (this machine)")
	}
	hosts := slices.Clone(c.cfg.Hosts)
	slices.Sort(hosts)
	known = append(known, hosts...)
	return "", refuse(ErrUnknownHost, "host %q is not one this daemon runs commands on; use one of: %s; or leave host out for %s", name, strings.Join(known, ", "), c.cfg.DefaultHost)
}

// machine is the machine a session's host name means: a configured host,
// or this one.
func (c *core) machine(host string) string {
	if slices.Contains(c.cfg.Hosts, host) {
		return host
	}
	return MainHost
}

// remoteWorkspace checks the workspace a session on another machine names:
// an absolute path there, not checked against this machine's roots; empty
// means the remote user's home.
func remoteWorkspace(ws string) (string, error) {
	switch {
	case ws == "":
		return "", nil
	case path.IsAbs(ws):
		return path.Clean(ws), nil
	}
	return "", refuse(ErrInvalidWorkspace, "workspace %q is not an absolute path; on another host name an absolute directory there, or leave workspace out for the remote home", ws)
}

func ceilingError(p access.Principal, want policy.Role) error {
	ceiling, ok := p.MaxAgentRole()
	if !ok {
		return refuse(ErrRoleCeiling, "%s holds no agent role, so it may not open an agent session; give it a role such as %s in the users file", p.ID, policy.ChatAgent)
	}
	return refuse(ErrRoleCeiling, "%s may open agent sessions up to %s, not %s; ask for %s or lower", p.ID, ceiling, want, ceiling)
}

// confines reports whether the gate runs commands sandboxed: the
// configuration asks for it and the kernel allows it.
func (c *core) confines() bool {
	return c.cfg.Sandbox != ports.SandboxOff && c.sandbox != nil && c.sandbox.Status().Available
}

// resolveWorkspace checks the workspace a session asks for against the
// roots, with symlinks resolved on both sides; empty means the first root.
func (c *core) resolveWorkspace(ws string) (string, error) {
	roots := c.cfg.WorkspaceRoots
	if len(roots) == 0 {
		if ws != "" {
			return "", refuse(ErrInvalidWorkspace, "this daemon has no workspace roots (agent_terminal.workspace_roots), so a session cannot name a workspace; leave workspace out")
		}
		return c.cfg.Dir, nil
	}
	resolve := func(p string) (string, error) {
		if c.sandbox != nil {
			return c.sandbox.ResolveDir(p)
		}
		if !filepath.IsAbs(p) {
			return "", fmt.Errorf("%q is not an absolute path", p)
		}
		return filepath.Clean(p), nil
	}
	if strings.TrimSpace(ws) == "" {
		return resolve(roots[0])
	}
	r, err := resolve(ws)
	if err != nil {
		return "", refuse(ErrInvalidWorkspace, "workspace %s; give an existing absolute directory inside %s", err, strings.Join(roots, ", "))
	}
	for _, root := range roots {
		rr, err := resolve(root)
		if err != nil {
			continue
		}
		if r == rr || strings.HasPrefix(r, strings.TrimSuffix(rr, "/")+"/") {
			return r, nil
		}
	}
	return "", refuse(ErrInvalidWorkspace, "workspace %s lies outside the workspace roots (%s); choose a directory inside one of them", ws, strings.Join(roots, ", "))
}
