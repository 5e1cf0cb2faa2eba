package agents_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/app/agents"
)

func TestAWaiterThatGoesAwayChangesNothingAndAnEndedSessionExpiresItsHeldCommand(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s := f.open(chatBot, "chat_agent")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan agents.ExecuteResult, 1)
	go func() {
		r, _ := f.app.ExecuteCommand.Handle(ctx, chatBot, agents.ExecuteRequest{SessionID: s.ID, Command: "mkdir /tmp/a", Wait: time.Minute})
		done <- r
	}()
	require.NoError(t, f.clock.BlockUntil(ctxT(t), 1), "the wait's timer is set")
	cancel()
	r := <-done
	require.NotNil(t, r.Final)
	require.Equal(t, agents.CommandPending, r.Final.Status, "the agent went away: the command stays held")

	v, err := f.app.GetCommand.Handle(ctxT(t), ana, agents.GetCommandRequest{SessionID: s.ID, CommandID: r.CommandID})
	require.NoError(t, err)
	require.Equal(t, agents.CommandPending, v.Status)

	// A waiter on it learns when the session ends.
	waited := make(chan agents.CommandView, 1)
	go func() {
		v, _ := f.app.GetCommand.Handle(context.Background(), ana, agents.GetCommandRequest{SessionID: s.ID, CommandID: r.CommandID, Wait: time.Minute})
		waited <- v
	}()
	require.NoError(t, f.clock.BlockUntil(ctxT(t), 1))
	list, err := f.app.ListCommands.Handle(ctxT(t), chatBot, s.ID)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.NoError(t, f.app.DeleteSession.Handle(ctxT(t), chatBot, s.ID))
	require.Equal(t, agents.CommandExpired, (<-waited).Status)
}

func TestASessionRemembersABoundedNumberOfCommands(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s := f.open(autoBot, "automation_agent")
	var first string
	for i := 0; i < agents.MaxCommandRecords+5; i++ {
		r, err := f.exec(autoBot, s.ID, "echo "+itoa(i))
		require.NoError(t, err)
		if i == 0 {
			first = r.CommandID
		}
	}
	list, err := f.app.ListCommands.Handle(ctxT(t), autoBot, s.ID)
	require.NoError(t, err)
	require.Len(t, list, agents.MaxCommandRecords)
	_, err = f.app.GetCommand.Handle(ctxT(t), autoBot, agents.GetCommandRequest{SessionID: s.ID, CommandID: first})
	require.ErrorIs(t, err, agents.ErrCommandNotFound, "the oldest finished ones are forgotten")
}

func TestAnAgentsTimeoutEndsItsCommandSoonerButNeverLater(t *testing.T) {
	f := newFixture(t, agents.Config{CommandTimeout: time.Hour})
	s := f.open(autoBot, "automation_agent")
	done := make(chan agents.ExecuteResult, 1)
	go func() {
		r, _ := f.app.ExecuteCommand.Handle(context.Background(), autoBot, agents.ExecuteRequest{SessionID: s.ID, Command: "sleep 1000", Timeout: 5 * time.Second})
		done <- r
	}()
	require.NoError(t, f.clock.BlockUntil(ctxT(t), 1), "the command's timer is set")
	f.clock.Advance(5 * time.Second)
	r := <-done
	require.True(t, r.Run.TimedOut, "it ended at the agent's 5 s, not the host's hour")
}
