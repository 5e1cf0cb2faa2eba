package agents_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/app/agents"
	"github.com/shellgate/shellgate/ports"
)

func TestSessionRunsAtMostMaxConcurrentCommandsAndRefusesTheNextAudited(t *testing.T) {
	f := newFixture(t, agents.Config{MaxConcurrentCommands: 2})
	s := f.open(chatBot, "chat_agent")
	ctx := ctxT(t)

	first := f.execAsync(chatBot, s.ID, "sleep 1000")
	p1, err := f.sp.Next(ctx)
	require.NoError(t, err)
	second := f.execAsync(chatBot, s.ID, "sleep 1000")
	p2, err := f.sp.Next(ctx)
	require.NoError(t, err)

	_, err = f.app.ExecuteCommand.Handle(ctx, chatBot, agents.ExecuteRequest{SessionID: s.ID, Command: "sleep 1000", Description: "a third"})
	require.ErrorIs(t, err, agents.ErrTooManyCommands)
	require.Contains(t, err.Error(), "wait for one of them to finish")
	require.Len(t, f.sp.Processes(), 2, "nothing ran")
	blocked := f.audit.all()[len(f.audit.all())-1]
	require.Equal(t, ports.AuditBlocked, blocked.Event)
	require.Equal(t, "sleep 1000", blocked.Command)
	require.Equal(t, "too_many_commands", blocked.Detail["reason"])
	require.Equal(t, "a third", blocked.Detail["description"])

	// Another session is not held back by this one.
	other := f.open(chatBot, "chat_agent")
	res, err := f.exec(chatBot, other.ID, "echo hi")
	require.NoError(t, err)
	require.Equal(t, "hi\n", res.Run.Stdout)

	// Once one ends, the next one runs.
	p1.Exit(0)
	require.NoError(t, wait(t, first).err)
	res, err = f.exec(chatBot, s.ID, "echo again")
	require.NoError(t, err)
	require.Equal(t, "again\n", res.Run.Stdout)

	p2.Exit(0)
	require.NoError(t, wait(t, second).err)
}

func TestApprovalWaitsWhileTheSessionRunsMaxConcurrentCommands(t *testing.T) {
	f := newFixture(t, agents.Config{MaxConcurrentCommands: 1})
	s := f.open(chatBot, "chat_agent")
	ctx := ctxT(t)

	running := f.execAsync(chatBot, s.ID, "sleep 1000")
	p, err := f.sp.Next(ctx)
	require.NoError(t, err)
	held, err := f.exec(chatBot, s.ID, "mkdir /tmp/test_dir")
	require.NoError(t, err)
	require.Equal(t, agents.Held, held.Outcome)

	_, err = f.app.DecideApproval.Handle(ctx, ana, agents.DecisionRequest{SessionID: s.ID, Approve: true, ApprovalID: held.Pending.ID})
	require.ErrorIs(t, err, agents.ErrTooManyCommands)
	got, err := f.app.GetSession.Handle(ctx, ana, s.ID)
	require.NoError(t, err)
	require.NotNil(t, got.Pending, "the command is still held")
	require.Len(t, f.sp.Processes(), 1)

	p.Exit(0)
	require.NoError(t, wait(t, running).err)
	dec, err := f.app.DecideApproval.Handle(ctx, ana, agents.DecisionRequest{SessionID: s.ID, Approve: true, ApprovalID: held.Pending.ID})
	require.NoError(t, err)
	require.True(t, dec.Approved)
}

func TestDescriptionOverTheLimitIsRefusedAuditedAndNothingRuns(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s := f.open(chatBot, "chat_agent")
	ctx := ctxT(t)

	at := strings.Repeat("d", agents.MaxDescriptionBytes)
	res, err := f.app.ExecuteCommand.Handle(ctx, chatBot, agents.ExecuteRequest{SessionID: s.ID, Command: "echo ok", Description: at})
	require.NoError(t, err, "a description at the limit is fine")
	require.Equal(t, "ok\n", res.Run.Stdout)

	for name, desc := range map[string]string{
		"one byte over":                   at + "d",
		"invalid UTF-8, counted replaced": strings.Repeat("\xff", agents.MaxDescriptionBytes/2),
		"near the request body's limit":   strings.Repeat("é", 500_000),
	} {
		t.Run(name, func(t *testing.T) {
			before := len(f.sp.Processes())
			_, err := f.app.ExecuteCommand.Handle(ctx, chatBot, agents.ExecuteRequest{SessionID: s.ID, Command: "echo no", Description: desc})
			require.ErrorIs(t, err, agents.ErrInvalid)
			require.Contains(t, err.Error(), "4096-byte limit")
			require.Len(t, f.sp.Processes(), before, "nothing ran")
			rec := f.audit.all()[len(f.audit.all())-1]
			require.Equal(t, ports.AuditBlocked, rec.Event)
			require.Equal(t, "echo no", rec.Command)
			require.Equal(t, "invalid_request", rec.Detail["reason"])
			require.LessOrEqual(t, len(rec.Detail["description"]), agents.MaxDescriptionBytes+16, "the record keeps only the start of it")
			require.True(t, strings.HasSuffix(rec.Detail["description"], "[cut]"))
		})
	}
}

func TestRealCommandReadingStdinSeesEndOfInputAtOnce(t *testing.T) {
	app, _, _ := realGate(t, agents.Config{CommandTimeout: time.Hour})
	s, err := app.CreateSession.Handle(ctxT(t), chatBot, agents.CreateSessionRequest{AgentID: "a", AgentRole: "chat_agent"})
	require.NoError(t, err)

	for _, tc := range []struct{ cmd, stdout string }{
		{"cat", ""},
		{`printf 'Proceed? [Y/n] '; read answer; echo "read=$? answer=$answer"`, "Proceed? [Y/n] read=1 answer=\n"},
		{"head -n 1", ""},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			done := make(chan execOutcome, 1)
			go func() {
				r, err := app.ExecuteCommand.Handle(context.Background(), chatBot, agents.ExecuteRequest{SessionID: s.ID, Command: tc.cmd})
				done <- execOutcome{r, err}
			}()
			select {
			case out := <-done:
				require.NoError(t, out.err)
				require.Equal(t, tc.stdout, out.res.Run.Stdout)
				require.False(t, out.res.Run.TimedOut)
			case <-time.After(10 * time.Second):
				// The fake clock's hour never passes: only the session's
				// deletion at cleanup would end it.
				t.Fatalf("%q is still waiting for input nobody will type", tc.cmd)
			}
		})
	}
}
