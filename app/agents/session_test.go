package agents_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/app/agents"
	"github.com/shellgate/shellgate/domain/access"
	"github.com/shellgate/shellgate/domain/agentsession"
	"github.com/shellgate/shellgate/domain/policy"
	"github.com/shellgate/shellgate/ports"
)

func TestCreateOpensASessionInAgentControlAndAuditsIt(t *testing.T) {
	f := newFixture(t, agents.Config{})
	v, err := f.app.CreateSession.Handle(ctxT(t), chatBot, agents.CreateSessionRequest{
		AgentID: "chat_agent_1", AgentRole: "Chat_Agent ", ConversationID: "conv_abc123",
		Metadata: map[string]any{"k": "v"},
	})
	require.NoError(t, err)
	require.Equal(t, "id1", v.ID)
	require.Equal(t, "chat_agent", v.AgentRole, "the role is stored by its wire name")
	require.Equal(t, "main", v.Host)
	require.Equal(t, agentsession.AgentControl, v.State)
	require.Equal(t, t0, v.CreatedAt)
	require.Equal(t, map[string]any{"k": "v"}, v.Metadata)

	rec := f.audit.all()
	require.Len(t, rec, 1)
	require.Equal(t, ports.AuditSessionCreated, rec[0].Event)
	require.Equal(t, "chatbot", rec[0].Detail["principal"])
}

func TestCreateRefusals(t *testing.T) {
	tests := []struct {
		name string
		who  agents.Caller
		req  agents.CreateSessionRequest
		is   error
		as   any
		msg  string
	}{
		{"unknown role", chatBot, agents.CreateSessionRequest{AgentID: "a", AgentRole: "god_agent"}, policy.ErrUnknownRole, nil, `"god_agent"`},
		{"no role", chatBot, agents.CreateSessionRequest{AgentID: "a"}, policy.ErrUnknownRole, nil, "agent_role is required"},
		{"no agent id", chatBot, agents.CreateSessionRequest{AgentRole: "chat_agent"}, agents.ErrInvalid, nil, "agent_id is required"},
		{"role above the token's", chatBot, agents.CreateSessionRequest{AgentID: "a", AgentRole: "automation_agent"}, agents.ErrRoleCeiling, nil, "up to chat_agent, not automation_agent"},
		{"system above automation", autoBot, agents.CreateSessionRequest{AgentID: "a", AgentRole: "system_agent"}, agents.ErrRoleCeiling, nil, "up to automation_agent"},
		{"person without an agent role", boss, agents.CreateSessionRequest{AgentID: "a", AgentRole: "chat_agent"}, agents.ErrRoleCeiling, nil, "holds no agent role"},
		{"no agent:create", ana, agents.CreateSessionRequest{AgentID: "a", AgentRole: "chat_agent"}, nil, new(*access.DeniedError), "ana may not agent:create here"},
		{"guest", guest, agents.CreateSessionRequest{AgentID: "a", AgentRole: "chat_agent"}, nil, new(*access.DeniedError), "gus may not agent:create here"},
		{"other host", chatBot, agents.CreateSessionRequest{AgentID: "a", AgentRole: "chat_agent", Host: "frontend"}, agents.ErrUnknownHost, nil, `host "frontend" is not one this daemon runs commands on`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, agents.Config{})
			_, err := f.app.CreateSession.Handle(ctxT(t), tt.who, tt.req)
			if tt.is != nil {
				require.ErrorIs(t, err, tt.is)
			} else {
				require.ErrorAs(t, err, tt.as)
			}
			require.ErrorContains(t, err, tt.msg)
			require.Empty(t, f.audit.all(), "a refused create records nothing")
		})
	}
}

func TestLowerRolesThanTheTokensAreAllowed(t *testing.T) {
	f := newFixture(t, agents.Config{})
	for _, role := range []string{"chat_agent", "automation_agent", "system_agent", "admin_agent"} {
		_, err := f.app.CreateSession.Handle(ctxT(t), adminBot, agents.CreateSessionRequest{AgentID: "a", AgentRole: role})
		require.NoError(t, err, role)
	}
}

func TestConfiguredDefaultHostAndMainAreBothThisMachine(t *testing.T) {
	f := newFixture(t, agents.Config{DefaultHost: "devbox"})
	for host, want := range map[string]string{"": "devbox", "devbox": "devbox", "main": "main"} {
		v, err := f.app.CreateSession.Handle(ctxT(t), chatBot, agents.CreateSessionRequest{AgentID: "a", AgentRole: "chat_agent", Host: host})
		require.NoError(t, err)
		require.Equal(t, want, v.Host)
	}
	_, err := f.app.CreateSession.Handle(ctxT(t), chatBot, agents.CreateSessionRequest{AgentID: "a", AgentRole: "chat_agent", Host: "redis"})
	require.ErrorIs(t, err, agents.ErrUnknownHost)
	require.ErrorContains(t, err, "main (this machine), devbox (this machine)")
}

func TestConfiguredHostsAreAcceptedAndNamedWhenAHostIsUnknown(t *testing.T) {
	f := newFixture(t, agents.Config{Hosts: []string{"frontend", "npu-worker"}})
	v, err := f.app.CreateSession.Handle(ctxT(t), chatBot, agents.CreateSessionRequest{AgentID: "a", AgentRole: "chat_agent", Host: "frontend"})
	require.NoError(t, err)
	require.Equal(t, "frontend", v.Host)

	_, err = f.app.CreateSession.Handle(ctxT(t), chatBot, agents.CreateSessionRequest{AgentID: "a", AgentRole: "chat_agent", Host: "redis"})
	require.ErrorIs(t, err, agents.ErrUnknownHost)
	require.ErrorContains(t, err, "main (this machine), frontend, npu-worker")

	_, err = f.app.CreateSession.Handle(ctxT(t), chatBot, agents.CreateSessionRequest{AgentID: "a", AgentRole: "chat_agent", Host: "frontend", Workspace: "relative/dir"})
	require.ErrorIs(t, err, agents.ErrInvalidWorkspace, "a remote workspace is an absolute path there")
}

func TestMaxConcurrentSessionsRefusesTheNextCreateUntilOneCloses(t *testing.T) {
	f := newFixture(t, agents.Config{MaxConcurrentSessions: 2})
	a := f.open(chatBot, "chat_agent")
	f.open(chatBot, "chat_agent")

	_, err := f.app.CreateSession.Handle(ctxT(t), chatBot, agents.CreateSessionRequest{AgentID: "a", AgentRole: "chat_agent"})
	require.ErrorIs(t, err, agents.ErrTooManySessions)
	require.ErrorContains(t, err, "max_concurrent_sessions")

	require.NoError(t, f.app.DeleteSession.Handle(ctxT(t), chatBot, a.ID))
	f.open(chatBot, "chat_agent")
}

func TestCreateThatCannotBeAuditedLeavesNoSession(t *testing.T) {
	f := newFixture(t, agents.Config{MaxConcurrentSessions: 1})
	f.audit.failWhen(func(ports.AuditEvent) error { return errDiskFull })
	_, err := f.app.CreateSession.Handle(ctxT(t), chatBot, agents.CreateSessionRequest{AgentID: "a", AgentRole: "chat_agent"})
	require.ErrorIs(t, err, agents.ErrAudit)
	f.audit.failWhen(nil)

	list, err := f.app.ListSessions.Handle(ctxT(t), ana, agents.ListFilter{})
	require.NoError(t, err)
	require.Empty(t, list)
	f.open(chatBot, "chat_agent")
}

func TestAnAgentSeesAndDrivesOnlyItsOwnSessionsAPersonSeesAll(t *testing.T) {
	f := newFixture(t, agents.Config{})
	mine := f.open(chatBot, "chat_agent")
	theirs := f.open(autoBot, "chat_agent")
	ctx := ctxT(t)

	list, err := f.app.ListSessions.Handle(ctx, chatBot, agents.ListFilter{})
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, mine.ID, list[0].ID)

	_, err = f.app.GetSession.Handle(ctx, chatBot, theirs.ID)
	require.ErrorIs(t, err, agents.ErrSessionNotFound, "another agent's session is not confirmed to exist")
	_, err = f.exec(chatBot, theirs.ID, "echo hi")
	require.ErrorIs(t, err, agents.ErrSessionNotFound)
	require.ErrorIs(t, f.app.DeleteSession.Handle(ctx, chatBot, theirs.ID), agents.ErrSessionNotFound)

	all, err := f.app.ListSessions.Handle(ctx, ana, agents.ListFilter{})
	require.NoError(t, err)
	require.Equal(t, []string{mine.ID, theirs.ID}, []string{all[0].ID, all[1].ID}, "oldest first")
	_, err = f.app.GetSession.Handle(ctx, ana, theirs.ID)
	require.NoError(t, err)
}

func TestListFiltersByAgentAndConversation(t *testing.T) {
	f := newFixture(t, agents.Config{})
	ctx := ctxT(t)
	mk := func(agent, conv string) string {
		v, err := f.app.CreateSession.Handle(ctx, autoBot, agents.CreateSessionRequest{AgentID: agent, AgentRole: "chat_agent", ConversationID: conv})
		require.NoError(t, err)
		return v.ID
	}
	a1, a2, b1 := mk("a", "c1"), mk("a", "c2"), mk("b", "c1")
	ids := func(f agents.ListFilter, app *agents.App) []string {
		list, err := app.ListSessions.Handle(ctx, ana, f)
		require.NoError(t, err)
		var out []string
		for _, v := range list {
			out = append(out, v.ID)
		}
		return out
	}
	require.Equal(t, []string{a1, a2}, ids(agents.ListFilter{AgentID: "a"}, f.app))
	require.Equal(t, []string{a1, b1}, ids(agents.ListFilter{ConversationID: "c1"}, f.app))
	require.Equal(t, []string{a1}, ids(agents.ListFilter{AgentID: "a", ConversationID: "c1"}, f.app))
	require.Empty(t, ids(agents.ListFilter{AgentID: "zzz"}, f.app))
}

func TestPersonsGrantsAreNeededToDecideInterruptAndResume(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s := f.open(chatBot, "chat_agent")
	_, err := f.exec(chatBot, s.ID, "mkdir /tmp/a")
	require.NoError(t, err)
	ctx := ctxT(t)

	var denied *access.DeniedError
	_, err = f.app.DecideApproval.Handle(ctx, chatBot, agents.DecisionRequest{SessionID: s.ID, Approve: true})
	require.ErrorAs(t, err, &denied)
	require.Equal(t, access.ApprovalDecide, denied.Operation, "an agent cannot approve its own command")
	_, err = f.app.Interrupt.Handle(ctx, chatBot, agents.InterruptRequest{SessionID: s.ID})
	require.ErrorAs(t, err, &denied)
	require.Equal(t, access.ControlInterrupt, denied.Operation)
	_, err = f.app.Resume.Handle(ctx, guest, s.ID)
	require.ErrorAs(t, err, &denied)
	require.Equal(t, access.ControlResume, denied.Operation)
	_, err = f.exec(ana, s.ID, "echo hi")
	require.ErrorAs(t, err, &denied, "a member may watch but not run agent commands")
	require.ErrorAs(t, f.app.DeleteSession.Handle(ctx, ana, s.ID), &denied)
	_, err = f.app.ListSessions.Handle(ctx, guest, agents.ListFilter{})
	require.ErrorAs(t, err, &denied)

	_, err = f.app.Interrupt.Handle(ctx, boss, agents.InterruptRequest{SessionID: s.ID})
	require.NoError(t, err, "admin holds every grant")
}

func TestIdleSessionExpiresWithItsTerminalsAndDropsItsPendingApproval(t *testing.T) {
	f := newFixture(t, agents.Config{SessionTimeout: time.Hour})
	s := f.open(chatBot, "chat_agent")
	ran, err := f.exec(chatBot, s.ID, "echo hi")
	require.NoError(t, err)
	held, err := f.exec(chatBot, s.ID, "mkdir /tmp/a")
	require.NoError(t, err)
	require.Len(t, f.host.List(), 1)

	f.clock.Advance(time.Hour - time.Second)
	_, err = f.app.GetSession.Handle(ctxT(t), chatBot, s.ID)
	require.NoError(t, err, "not idle long enough yet")

	f.clock.Advance(time.Second)

	_, err = f.app.GetSession.Handle(ctxT(t), chatBot, s.ID)
	require.ErrorIs(t, err, agents.ErrSessionNotFound)
	require.Empty(t, f.host.List(), "its terminals are disposed")
	_, err = f.host.Snapshot(ran.Run.Terminal)
	require.Error(t, err)
	last := f.audit.all()[len(f.audit.all())-1]
	require.Equal(t, ports.AuditSessionExpired, last.Event)
	require.Equal(t, held.Pending.ID, last.Detail["dropped_approval"])
	require.Zero(t, f.clock.Pending(), "its timer is gone")
}

func TestActivityPostponesExpiry(t *testing.T) {
	f := newFixture(t, agents.Config{SessionTimeout: time.Hour})
	s := f.open(chatBot, "chat_agent")

	f.clock.Advance(50 * time.Minute)
	_, err := f.exec(chatBot, s.ID, "echo hi")
	require.NoError(t, err)
	f.clock.Advance(50 * time.Minute)

	_, err = f.app.GetSession.Handle(ctxT(t), chatBot, s.ID)
	require.NoError(t, err, "the command 50 minutes ago kept it alive")
	f.clock.Advance(10 * time.Minute)
	_, err = f.app.GetSession.Handle(ctxT(t), chatBot, s.ID)
	require.ErrorIs(t, err, agents.ErrSessionNotFound)
}

func TestRunningCommandKeepsItsSessionAliveAndExpiryWaitsForIt(t *testing.T) {
	f := newFixture(t, agents.Config{SessionTimeout: time.Hour})
	s := f.open(chatBot, "chat_agent")
	ctx := ctxT(t)
	done := f.execAsync(chatBot, s.ID, "sleep 1000")
	p, err := f.sp.Next(ctx)
	require.NoError(t, err)

	f.clock.Advance(2 * time.Hour)
	_, err = f.app.GetSession.Handle(ctx, chatBot, s.ID)
	require.NoError(t, err, "a running command is activity")

	p.Exit(0)
	out := wait(t, done)
	require.NoError(t, out.err)
	f.clock.Advance(time.Hour)
	_, err = f.app.GetSession.Handle(ctx, chatBot, s.ID)
	require.ErrorIs(t, err, agents.ErrSessionNotFound)
}

func TestSessionsNeverExpireWithoutATimeout(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s := f.open(chatBot, "chat_agent")
	require.Zero(t, f.clock.Pending())
	f.clock.Advance(1000 * time.Hour)
	_, err := f.app.GetSession.Handle(ctxT(t), chatBot, s.ID)
	require.NoError(t, err)
}

func TestDeleteKillsARunningCommandAndDisposesItsTerminals(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s := f.open(chatBot, "chat_agent")
	ctx := ctxT(t)
	done := f.execAsync(chatBot, s.ID, "sleep 1000")
	_, err := f.sp.Next(ctx)
	require.NoError(t, err)

	require.NoError(t, f.app.DeleteSession.Handle(ctx, chatBot, s.ID))

	out := wait(t, done)
	require.NoError(t, out.err, "the command's result still comes back")
	require.Equal(t, "SIGKILL", out.res.Run.Signal)
	require.Empty(t, f.host.List())
	_, err = f.app.GetSession.Handle(ctx, chatBot, s.ID)
	require.ErrorIs(t, err, agents.ErrSessionNotFound)
	deleted := f.audit.all()[2]
	require.Equal(t, ports.AuditSessionDeleted, deleted.Event)
	require.Equal(t, "1", deleted.Detail["killed_commands"])
}

func TestOldFinishedTerminalsArePrunedBeyondTheKeptNumber(t *testing.T) {
	f := newFixture(t, agents.Config{KeptTerminals: 2})
	s := f.open(chatBot, "chat_agent")
	var uris []string
	for range 4 {
		res, err := f.exec(chatBot, s.ID, "echo hi")
		require.NoError(t, err)
		uris = append(uris, res.Run.Terminal)
	}
	var listed []string
	for _, info := range f.host.List() {
		listed = append(listed, info.URI)
	}
	require.Equal(t, uris[2:], listed)
}

func TestCloseEndsEverySessionAndRefusesNewRequests(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s := f.open(chatBot, "chat_agent")
	done := f.execAsync(chatBot, s.ID, "sleep 1000")
	_, err := f.sp.Next(ctxT(t))
	require.NoError(t, err)

	require.NoError(t, f.app.Close(ctxT(t)))

	out := wait(t, done)
	require.NoError(t, out.err)
	require.Equal(t, "SIGKILL", out.res.Run.Signal)
	_, err = f.app.CreateSession.Handle(context.Background(), chatBot, agents.CreateSessionRequest{AgentID: "a", AgentRole: "chat_agent"})
	require.ErrorIs(t, err, agents.ErrClosing)
	_, err = f.app.ListSessions.Handle(context.Background(), ana, agents.ListFilter{})
	require.ErrorIs(t, err, agents.ErrClosing)
	require.Empty(t, f.host.List())
}
