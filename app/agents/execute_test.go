package agents_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/shellexpand"
	"github.com/shellgate/shellgate/app/agents"
	"github.com/shellgate/shellgate/domain/access"
	"github.com/shellgate/shellgate/domain/agentsession"
	"github.com/shellgate/shellgate/domain/policy"
	"github.com/shellgate/shellgate/domain/risk"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

func TestSafeCommandFromChatAgentRunsAtOnceWithStdoutAndStderrApart(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s := f.open(chatBot, "chat_agent")

	res, err := f.exec(chatBot, s.ID, "ls nothere")

	require.NoError(t, err)
	require.Equal(t, agents.Ran, res.Outcome)
	require.Equal(t, risk.Safe, res.Assessment.Level)
	require.Equal(t, "listing\n", res.Run.Stdout)
	require.Equal(t, "ls: nothere: No such file or directory\n", res.Run.Stderr)
	require.Equal(t, 2, res.Run.ReturnCode)
	require.Empty(t, res.Run.Signal)
	require.False(t, res.Run.TimedOut)
	require.False(t, res.Run.Truncated)

	got, err := f.app.GetSession.Handle(ctxT(t), chatBot, s.ID)
	require.NoError(t, err)
	require.Equal(t, 1, got.CommandCount)
}

func TestCommandRunsAsAShellLineInAHostOwnedTerminalClaimedByTheSession(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s := f.open(chatBot, "chat_agent")

	res, err := f.exec(chatBot, s.ID, "echo hello")
	require.NoError(t, err)
	require.Equal(t, "hello\n", res.Run.Stdout)

	procs := f.sp.Processes()
	require.Len(t, procs, 1)
	spec := procs[0].Spec()
	require.Equal(t, "/bin/sh", spec.Program, "the daemon's shell, never a connection's defaultShell")
	require.Equal(t, []string{"-c", "echo hello"}, spec.Args, "the line is handed over as is")
	require.Equal(t, f.dir, spec.Dir)
	require.False(t, spec.PTY)
	require.True(t, spec.SeparateStderr)
	for _, kv := range []string{"PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "PATH=/bin"} {
		require.Contains(t, spec.Env, kv)
	}
	require.NotContains(t, spec.Env, "PAGER=less", "the agent's PAGER wins over the daemon's")

	list := f.host.List()
	require.Len(t, list, 1)
	require.Equal(t, res.Run.Terminal, list[0].URI)
	require.Regexp(t, `^ahp-terminal:/agent-`+regexp.QuoteMeta(s.ID)+`-1-[0-9a-f]{16}$`, list[0].URI, "unguessable: it ends in random bits")
	require.Equal(t, terminal.Claim{
		Kind: terminal.ClaimSession, Session: "ahp-session:/" + s.ID,
		Chat: "ahp-chat:/" + s.ConversationID, ToolCallID: res.Run.CommandID,
	}, list[0].Claim)
	require.Equal(t, terminal.StatusExited, list[0].Lifecycle.Status, "the terminal stays listed, exited")
	require.Equal(t, s.AgentID+" #1", list[0].Title, "the root list names the agent and the number, not the command")
	snap, err := f.host.Snapshot(res.Run.Terminal)
	require.NoError(t, err)
	require.Equal(t, "$ echo hello\r\nhello\n", terminal.Text(snap.Content), "viewers keep the scrollback, headed by the command")
}

// TestCommandLineHeadsItsTerminalWithControlsMadeVisible: the line is
// shown to whoever reads the terminal as a prompt would show it, but a
// control character in it cannot act on the viewer's terminal.
func TestCommandLineHeadsItsTerminalWithControlsMadeVisible(t *testing.T) {
	cases := []struct{ name, line, banner string }{
		{"plain", "true # plain", "$ true # plain\r\n"},
		{"several lines", "true\ntrue", "$ true\r\ntrue\r\n"},
		{"escape sequence", "true # \x1b]0;x\x07\x1b[c", "$ true # ^[]0;x^G^[[c\r\n"},
		{"C1 control", "true # \u009b6n", "$ true # <U+009B>6n\r\n"},
	}
	f := newFixture(t, agents.Config{})
	s := f.open(chatBot, "chat_agent")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := f.exec(chatBot, s.ID, c.line)
			require.NoError(t, err)
			require.Empty(t, res.Run.Stdout, "the agent's stdout is the command's alone")
			snap, err := f.host.Snapshot(res.Run.Terminal)
			require.NoError(t, err)
			require.Equal(t, c.banner, terminal.Text(snap.Content))
		})
	}
}

func TestChatWithoutAConversationIsNamedAfterTheSession(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s, err := f.app.CreateSession.Handle(ctxT(t), chatBot, agents.CreateSessionRequest{AgentID: "a", AgentRole: "chat_agent"})
	require.NoError(t, err)
	_, err = f.exec(chatBot, s.ID, "echo hi")
	require.NoError(t, err)
	require.Equal(t, "ahp-chat:/"+s.ID, f.host.List()[0].Claim.Chat)
}

func TestGateFollowsTheRoleByRiskTable(t *testing.T) {
	commands := map[risk.Level]string{
		risk.Safe:      "echo hi",
		risk.Moderate:  "mkdir /tmp/test_dir",
		risk.High:      "sudo ls",
		risk.Dangerous: "rm -rf /tmp/x",
		risk.Forbidden: "kill 1",
	}
	for lvl, cmd := range commands {
		require.Equal(t, lvl, risk.New(shellexpand.New()).Classify(cmd).Level, "fixture command %q", cmd)
	}
	bots := map[policy.Role]agents.Caller{
		policy.ChatAgent:       chatBot,
		policy.AutomationAgent: autoBot,
		policy.SystemAgent:     caller("sysbot", access.RoleSystemAgent),
		policy.AdminAgent:      adminBot,
	}
	for _, role := range policy.Roles() {
		for lvl := risk.Safe; lvl <= risk.Forbidden; lvl++ {
			want := policy.Decide(role, lvl)
			t.Run(string(role)+"/"+lvl.String(), func(t *testing.T) {
				f := newFixture(t, agents.Config{})
				who := bots[role]
				s := f.open(who, string(role))
				res, err := f.exec(who, s.ID, commands[lvl])
				switch want {
				case policy.Auto:
					require.NoError(t, err)
					require.Equal(t, agents.Ran, res.Outcome)
				case policy.Approval:
					require.NoError(t, err)
					require.Equal(t, agents.Held, res.Outcome)
					require.Empty(t, f.sp.Processes(), "nothing runs before a person decides")
				case policy.Blocked:
					var be *agents.CommandBlockedError
					require.ErrorAs(t, err, &be)
					require.Equal(t, policy.BlockMessage(role, lvl), err.Error())
					require.Equal(t, lvl, be.Assessment.Level)
					require.Equal(t, string(role), be.AgentRole)
					require.Empty(t, f.sp.Processes())
				}
			})
		}
	}
}

func TestModerateCommandFromChatAgentWaitsThenRunsOnceAPersonApproves(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s := f.open(chatBot, "chat_agent")

	res, err := f.exec(chatBot, s.ID, "mkdir /tmp/test_dir")
	require.NoError(t, err)
	require.Equal(t, agents.Held, res.Outcome)
	require.Equal(t, risk.Moderate, res.Assessment.Level)
	require.Equal(t, "mkdir /tmp/test_dir", res.Pending.Command)
	require.Equal(t, "moderate", res.Pending.Risk)
	require.Equal(t, "test: mkdir /tmp/test_dir", res.Pending.Description)
	require.Equal(t, t0, res.Pending.RequestedAt)

	got, err := f.app.GetSession.Handle(ctxT(t), ana, s.ID)
	require.NoError(t, err)
	require.Equal(t, res.Pending, got.Pending, "the person sees the held command")
	require.Zero(t, got.CommandCount)

	f.clock.Advance(3 * time.Second)
	dec, err := f.app.DecideApproval.Handle(ctxT(t), ana, agents.DecisionRequest{SessionID: s.ID, Approve: true, ApprovalID: res.Pending.ID, UserID: "user_123"})
	require.NoError(t, err)
	require.True(t, dec.Approved)
	require.Equal(t, "mkdir /tmp/test_dir", dec.Approval.Command)
	require.Equal(t, 0, dec.Run.ReturnCode)
	require.Equal(t, res.Pending.ID, dec.Run.CommandID, "an approved command's tool call is its approval id")
	require.Len(t, f.sp.Processes(), 1)
	require.Equal(t, []string{"-c", "mkdir /tmp/test_dir"}, f.sp.Processes()[0].Spec().Args)

	got, err = f.app.GetSession.Handle(ctxT(t), ana, s.ID)
	require.NoError(t, err)
	require.Nil(t, got.Pending)
	require.Equal(t, 1, got.CommandCount)

	events := f.audit.all()
	approved := events[len(events)-2]
	require.Equal(t, ports.AuditApproved, approved.Event)
	require.Equal(t, "ana", approved.ApprovedBy, "the signed-in person, not the claimed user_id")
	require.Equal(t, "user_123", approved.Detail["user_id"])
	ran := events[len(events)-1]
	require.Equal(t, ports.AuditExecute, ran.Event)
	require.Equal(t, "ana", ran.ApprovedBy)
	require.Equal(t, res.Pending.ID, ran.ApprovalID)
	require.NotNil(t, ran.Result)
}

func TestDeniedCommandNeverRunsAndTheSessionMayHoldAnother(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s := f.open(chatBot, "chat_agent")
	res, err := f.exec(chatBot, s.ID, "mkdir /tmp/a")
	require.NoError(t, err)

	dec, err := f.app.DecideApproval.Handle(ctxT(t), ana, agents.DecisionRequest{SessionID: s.ID, Approve: false})
	require.NoError(t, err)
	require.False(t, dec.Approved)
	require.Equal(t, res.Pending.ID, dec.Approval.ID)
	require.Empty(t, f.sp.Processes())

	_, err = f.app.DecideApproval.Handle(ctxT(t), ana, agents.DecisionRequest{SessionID: s.ID, Approve: true})
	require.ErrorIs(t, err, agentsession.ErrNoPendingApproval, "nothing is held any more")

	again, err := f.exec(chatBot, s.ID, "mkdir /tmp/b")
	require.NoError(t, err)
	require.Equal(t, agents.Held, again.Outcome)
}

func TestSecondCommandIsRefusedWhileOneWaitsForApproval(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s := f.open(chatBot, "chat_agent")
	first, err := f.exec(chatBot, s.ID, "mkdir /tmp/a")
	require.NoError(t, err)

	_, err = f.exec(chatBot, s.ID, "mkdir /tmp/b")
	require.ErrorIs(t, err, agentsession.ErrApprovalPending)

	got, err := f.app.GetSession.Handle(ctxT(t), ana, s.ID)
	require.NoError(t, err)
	require.Equal(t, first.Pending.ID, got.Pending.ID, "the first stays held, unreplaced")
	blocked := f.audit.all()[len(f.audit.all())-1]
	require.Equal(t, ports.AuditBlocked, blocked.Event)
	require.Equal(t, "approval_pending", blocked.Detail["reason"])
}

func TestDecisionNamingAnotherApprovalIsRefused(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s := f.open(chatBot, "chat_agent")
	_, err := f.exec(chatBot, s.ID, "mkdir /tmp/a")
	require.NoError(t, err)

	_, err = f.app.DecideApproval.Handle(ctxT(t), ana, agents.DecisionRequest{SessionID: s.ID, Approve: true, ApprovalID: "stale"})

	require.ErrorIs(t, err, agentsession.ErrNoPendingApproval)
	require.Empty(t, f.sp.Processes())
}

func TestSessionsOwnAgentPrincipalMayNotDecideItsCommands(t *testing.T) {
	f := newFixture(t, agents.Config{})
	both := caller("both", access.RoleMember, access.RoleChatAgent)
	s := f.open(both, "chat_agent")
	res, err := f.exec(both, s.ID, "mkdir /tmp/a")
	require.NoError(t, err)
	require.Equal(t, agents.Held, res.Outcome)

	for _, approve := range []bool{true, false} {
		for _, id := range []string{"", res.Pending.ID} {
			_, err = f.app.DecideApproval.Handle(ctxT(t), both, agents.DecisionRequest{SessionID: s.ID, Approve: approve, ApprovalID: id})
			require.ErrorIs(t, err, agents.ErrOwnApproval)
			require.Contains(t, err.Error(), "another token")
		}
	}
	require.Empty(t, f.sp.Processes())
	got, err := f.app.GetSession.Handle(ctxT(t), ana, s.ID)
	require.NoError(t, err)
	require.Equal(t, res.Pending.ID, got.Pending.ID, "still held for a person")

	dec, err := f.app.DecideApproval.Handle(ctxT(t), ana, agents.DecisionRequest{SessionID: s.ID, Approve: true, ApprovalID: res.Pending.ID})
	require.NoError(t, err)
	require.True(t, dec.Approved)
	require.Len(t, f.sp.Processes(), 1)
}

func TestForceApprovalAndApprovalRequiredForHoldWhatWouldRunAtOnce(t *testing.T) {
	f := newFixture(t, agents.Config{ApprovalRequiredFor: []risk.Level{risk.Moderate}})
	s := f.open(autoBot, "automation_agent")

	held, err := f.exec(autoBot, s.ID, "mkdir /tmp/a")
	require.NoError(t, err)
	require.Equal(t, agents.Held, held.Outcome, "approval_required_for tightens the gate")
	_, err = f.app.DecideApproval.Handle(ctxT(t), ana, agents.DecisionRequest{SessionID: s.ID, Approve: false})
	require.NoError(t, err)

	forced, err := f.app.ExecuteCommand.Handle(ctxT(t), autoBot, agents.ExecuteRequest{SessionID: s.ID, Command: "echo hi", ForceApproval: true})
	require.NoError(t, err)
	require.Equal(t, agents.Held, forced.Outcome)
	require.Equal(t, "true", f.audit.all()[len(f.audit.all())-1].Detail["forced"])

	f2 := newFixture(t, agents.Config{ApprovalRequiredFor: []risk.Level{risk.High}})
	chat := f2.open(chatBot, "chat_agent")
	_, err = f2.app.ExecuteCommand.Handle(ctxT(t), chatBot, agents.ExecuteRequest{SessionID: chat.ID, Command: "sudo ls", ForceApproval: true})
	var be *agents.CommandBlockedError
	require.ErrorAs(t, err, &be, "neither unblocks a blocked command")
}

func TestInterruptBlocksTheAgentShowsThePendingApprovalAndResumeGivesItBack(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s := f.open(chatBot, "chat_agent")
	held, err := f.exec(chatBot, s.ID, "mkdir /tmp/a")
	require.NoError(t, err)

	in, err := f.app.Interrupt.Handle(ctxT(t), ana, agents.InterruptRequest{SessionID: s.ID, UserID: "ana"})
	require.NoError(t, err)
	require.Equal(t, agentsession.AgentControl, in.Transition.From)
	require.Equal(t, agentsession.UserControl, in.Transition.To)
	require.Equal(t, held.Pending, in.Pending)

	_, err = f.exec(chatBot, s.ID, "echo hi")
	require.ErrorIs(t, err, agentsession.ErrUserHasControl)
	require.Empty(t, f.sp.Processes())

	_, err = f.app.DecideApproval.Handle(ctxT(t), ana, agents.DecisionRequest{SessionID: s.ID, Approve: true})
	require.ErrorIs(t, err, agentsession.ErrUserHasControl, "approving waits for the agent to be resumed")

	_, err = f.app.Interrupt.Handle(ctxT(t), ana, agents.InterruptRequest{SessionID: s.ID})
	require.ErrorIs(t, err, agentsession.ErrWrongState)

	tr, err := f.app.Resume.Handle(ctxT(t), ana, s.ID)
	require.NoError(t, err)
	require.Equal(t, agentsession.UserControl, tr.From)
	require.Equal(t, agentsession.AgentControl, tr.To)

	dec, err := f.app.DecideApproval.Handle(ctxT(t), ana, agents.DecisionRequest{SessionID: s.ID, Approve: true})
	require.NoError(t, err)
	require.True(t, dec.Approved)
	res, err := f.exec(chatBot, s.ID, "echo back")
	require.NoError(t, err)
	require.Equal(t, "back\n", res.Run.Stdout)

	_, err = f.app.Resume.Handle(ctxT(t), ana, s.ID)
	require.ErrorIs(t, err, agentsession.ErrWrongState)
}

func TestDenyingWhileAPersonHasControlIsAllowed(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s := f.open(chatBot, "chat_agent")
	_, err := f.exec(chatBot, s.ID, "mkdir /tmp/a")
	require.NoError(t, err)
	_, err = f.app.Interrupt.Handle(ctxT(t), ana, agents.InterruptRequest{SessionID: s.ID})
	require.NoError(t, err)

	dec, err := f.app.DecideApproval.Handle(ctxT(t), ana, agents.DecisionRequest{SessionID: s.ID, Approve: false})
	require.NoError(t, err)
	require.False(t, dec.Approved)
}

func TestCommandTimeoutKillsTheProcessGroupAndSaysSo(t *testing.T) {
	f := newFixture(t, agents.Config{CommandTimeout: time.Minute})
	s := f.open(chatBot, "chat_agent")
	ctx := ctxT(t)

	done := f.execAsync(chatBot, s.ID, "sleep 1000")
	p, err := f.sp.Next(ctx)
	require.NoError(t, err)
	require.NoError(t, f.clock.BlockUntil(ctx, 1), "the command's timer is set")
	f.clock.Advance(59 * time.Second)
	select {
	case <-p.Done():
		t.Fatal("killed before its timeout")
	default:
	}
	f.clock.Advance(time.Second)

	out := wait(t, done)
	require.NoError(t, out.err)
	require.True(t, out.res.Run.TimedOut)
	require.Equal(t, 128, out.res.Run.ReturnCode)
	require.Equal(t, "SIGKILL", out.res.Run.Signal)
	require.Equal(t, time.Minute, out.res.Run.Duration)
	last := f.audit.all()[len(f.audit.all())-1]
	require.Equal(t, "true", last.Detail["timed_out"])
	require.Equal(t, "SIGKILL", last.Result.Signal)
	require.Zero(t, f.clock.Pending(), "no timer outlives the command")
}

func TestCommandKilledByASignalReportsItsName(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s := f.open(chatBot, "chat_agent")

	res, err := f.exec(chatBot, s.ID, "uptime")

	require.NoError(t, err)
	require.Equal(t, 128, res.Run.ReturnCode)
	require.Equal(t, "SIGTERM", res.Run.Signal)
	require.False(t, res.Run.TimedOut)
}

func TestOutputReturnedToTheAgentIsCappedWithoutSplittingACharacter(t *testing.T) {
	f := newFixture(t, agents.Config{OutputCapBytes: 11})
	s := f.open(chatBot, "chat_agent")

	res, err := f.exec(chatBot, s.ID, "cat 40")

	require.NoError(t, err)
	require.True(t, res.Run.Truncated)
	require.Equal(t, strings.Repeat("é", 5), res.Run.Stdout, "11 bytes hold five é and half of one, which is dropped")
	snap, err := f.host.Snapshot(res.Run.Terminal)
	require.NoError(t, err)
	require.Equal(t, "$ cat 40\r\n"+strings.Repeat("é", 20), terminal.Text(snap.Content), "the terminal keeps it all")

	small, err := f.exec(chatBot, s.ID, "cat 10")
	require.NoError(t, err)
	require.False(t, small.Run.Truncated)
	require.Equal(t, strings.Repeat("é", 5), small.Run.Stdout)
}

func TestSpawnFailureIsAnExecutionError(t *testing.T) {
	f := newFixture(t, agents.Config{})
	f.sp.FailWhen(func(ports.SpawnSpec) bool { return true }, context.DeadlineExceeded)
	s := f.open(chatBot, "chat_agent")

	_, err := f.exec(chatBot, s.ID, "echo hi")

	require.ErrorIs(t, err, agents.ErrExecution)
	last := f.audit.all()[len(f.audit.all())-1]
	require.Equal(t, ports.AuditExecute, last.Event)
	require.Equal(t, "error", last.Status)
	require.Equal(t, 127, last.Result.ReturnCode)
}

func TestCommandIsRefusedBeforeRunningWhenTheAuditLogFails(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s := f.open(chatBot, "chat_agent")
	f.audit.failWhen(func(e ports.AuditEvent) error {
		if e.Event == ports.AuditExecute {
			return errDiskFull
		}
		return nil
	})

	_, err := f.exec(chatBot, s.ID, "echo hi")

	require.ErrorIs(t, err, agents.ErrAudit)
	require.ErrorIs(t, err, errDiskFull)
	require.Empty(t, f.sp.Processes(), "nothing ran unaudited")
	got, err := f.app.GetSession.Handle(ctxT(t), chatBot, s.ID)
	require.NoError(t, err)
	require.Zero(t, got.CommandCount, "the refused command did not count")
}

func TestApprovalIsKeptHeldWhenItsDecisionCannotBeAudited(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s := f.open(chatBot, "chat_agent")
	held, err := f.exec(chatBot, s.ID, "mkdir /tmp/a")
	require.NoError(t, err)
	f.audit.failWhen(func(e ports.AuditEvent) error {
		if e.Event == ports.AuditApproved {
			return errDiskFull
		}
		return nil
	})

	_, err = f.app.DecideApproval.Handle(ctxT(t), ana, agents.DecisionRequest{SessionID: s.ID, Approve: true})

	require.ErrorIs(t, err, agents.ErrAudit)
	require.Empty(t, f.sp.Processes())
	got, err := f.app.GetSession.Handle(ctxT(t), ana, s.ID)
	require.NoError(t, err)
	require.Equal(t, held.Pending.ID, got.Pending.ID)
}

func TestHoldIsRefusedWhenItCannotBeAudited(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s := f.open(chatBot, "chat_agent")
	f.audit.failWhen(func(ports.AuditEvent) error { return errDiskFull })

	_, err := f.exec(chatBot, s.ID, "mkdir /tmp/a")

	require.ErrorIs(t, err, agents.ErrAudit)
	f.audit.failWhen(nil)
	got, err := f.app.GetSession.Handle(ctxT(t), ana, s.ID)
	require.NoError(t, err)
	require.Nil(t, got.Pending)
}

func TestMalformedCommandsAreRefusedAsInvalid(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s := f.open(chatBot, "chat_agent")
	for name, cmd := range map[string]string{
		"empty":    "",
		"blank":    "  \n\t",
		"nul byte": "echo a\x00b",
		"too long": "echo " + strings.Repeat("x", agents.MaxCommandBytes),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := f.exec(chatBot, s.ID, cmd)
			require.ErrorIs(t, err, agents.ErrInvalid)
		})
	}
	_, err := f.exec(chatBot, "", "echo hi")
	require.ErrorIs(t, err, agents.ErrInvalid)
	_, err = f.exec(chatBot, "nope", "echo hi")
	require.ErrorIs(t, err, agents.ErrSessionNotFound)
}

func TestAuditHoldsOneRecordPerEventOfTheWorkflow(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s := f.open(chatBot, "chat_agent")
	ctx := ctxT(t)

	_, err := f.exec(chatBot, s.ID, "echo hi")
	require.NoError(t, err)
	_, err = f.exec(chatBot, s.ID, "mkdir /tmp/a")
	require.NoError(t, err)
	_, err = f.app.DecideApproval.Handle(ctx, ana, agents.DecisionRequest{SessionID: s.ID, Approve: true})
	require.NoError(t, err)
	_, err = f.exec(chatBot, s.ID, "mkdir /tmp/b")
	require.NoError(t, err)
	_, err = f.app.DecideApproval.Handle(ctx, ana, agents.DecisionRequest{SessionID: s.ID, Approve: false})
	require.NoError(t, err)
	_, err = f.exec(chatBot, s.ID, "sudo ls")
	require.Error(t, err)
	_, err = f.app.Interrupt.Handle(ctx, ana, agents.InterruptRequest{SessionID: s.ID})
	require.NoError(t, err)
	_, err = f.exec(chatBot, s.ID, "echo hi")
	require.Error(t, err)
	_, err = f.app.Resume.Handle(ctx, ana, s.ID)
	require.NoError(t, err)
	require.NoError(t, f.app.DeleteSession.Handle(ctx, chatBot, s.ID))

	require.Equal(t, []string{
		"session_created/created",
		"execute/running", "execute/success",
		"approval_requested/pending_approval", "approved/approved", "execute/success",
		"approval_requested/pending_approval", "denied/denied",
		"blocked/error",
		"interrupt/success",
		"blocked/error",
		"resume/success",
		"session_deleted/deleted",
	}, f.audit.kinds())
	for _, e := range f.audit.all() {
		require.Equal(t, s.ID, e.SessionID)
		require.Equal(t, "chatbot_1", e.AgentID)
		require.Equal(t, "chat_agent", e.AgentRole)
		require.False(t, e.Time.IsZero())
	}
	blocked := f.audit.all()[8]
	require.Equal(t, "sudo ls", blocked.Command)
	require.Equal(t, "high", blocked.Risk)
	require.NotEmpty(t, blocked.Reasons)
	require.Equal(t, "risk_above_role", blocked.Detail["reason"])
	require.Equal(t, "user_has_control", f.audit.all()[10].Detail["reason"])
}
