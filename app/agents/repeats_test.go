package agents_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/app/agents"
	"github.com/shellgate/shellgate/ports"
)

// blocked lists the audit's blocked records.
func (a *memAudit) blocked() []ports.AuditEvent {
	var out []ports.AuditEvent
	for _, e := range a.all() {
		if e.Event == ports.AuditBlocked {
			out = append(out, e)
		}
	}
	return out
}

// TestIdenticalRefusalsAreCountedIntoOneRecordPerWindow: the first refusal
// is written at once; the identical ones within the window become one
// record with their count when it ends; anything else is written at once.
func TestIdenticalRefusalsAreCountedIntoOneRecordPerWindow(t *testing.T) {
	f := newFixture(t, agents.Config{RepeatWindow: time.Minute})
	s := f.open(chatBot, "chat_agent")

	var last string
	for i := 0; i < 5; i++ {
		_, err := f.exec(chatBot, s.ID, "kill 1")
		var refused *agents.CommandRefusedError
		require.ErrorAs(t, err, &refused, "every one is refused and answered")
		last = refused.CommandID
		f.clock.Advance(time.Second)
	}
	require.Len(t, f.audit.blocked(), 1, "only the first is written now")
	require.Equal(t, "kill 1", f.audit.blocked()[0].Command)

	_, err := f.exec(chatBot, s.ID, "kill -9 1")
	require.Error(t, err)
	require.Len(t, f.audit.blocked(), 2, "another command is its own record, at once")
	other := f.open(chatBot, "chat_agent")
	_, err = f.exec(chatBot, other.ID, "kill 1")
	require.Error(t, err)
	require.Len(t, f.audit.blocked(), 3, "so is the same command in another session")

	f.clock.Advance(time.Minute)
	got := f.audit.blocked()
	require.Len(t, got, 4, "the window with repeats ends in one record; the others had none")
	merged := got[3]
	require.Equal(t, "kill 1", merged.Command)
	require.Equal(t, s.ID, merged.SessionID)
	require.Equal(t, "error", merged.Status)
	require.Equal(t, "4", merged.Detail["repeated"])
	require.Equal(t, t0.Add(time.Second).Format(time.RFC3339Nano), merged.Detail["first_repeat_at"])
	require.Equal(t, t0.Add(4*time.Second).Format(time.RFC3339Nano), merged.Detail["last_repeat_at"])
	require.Equal(t, last, merged.Detail["last_command_id"])
	require.Equal(t, got[0].Detail["reason"], merged.Detail["reason"])
	require.Empty(t, merged.Detail["command_id"], "it stands for many commands")

	// After the window the next one is written at once and opens another.
	_, err = f.exec(chatBot, s.ID, "kill 1")
	require.Error(t, err)
	require.Len(t, f.audit.blocked(), 5)
	_, err = f.exec(chatBot, s.ID, "kill 1")
	require.Error(t, err)
	require.Len(t, f.audit.blocked(), 5)

	// Closing the gate writes what a window has counted.
	require.NoError(t, f.app.Close(ctxT(t)))
	got = f.audit.blocked()
	require.Len(t, got, 6)
	require.Equal(t, "1", got[5].Detail["repeated"])
}

func TestWithoutARepeatWindowEveryRefusalIsWritten(t *testing.T) {
	f := newFixture(t, agents.Config{})
	s := f.open(chatBot, "chat_agent")
	for i := 0; i < 3; i++ {
		_, err := f.exec(chatBot, s.ID, "kill 1")
		require.Error(t, err)
	}
	require.Len(t, f.audit.blocked(), 3)
}
