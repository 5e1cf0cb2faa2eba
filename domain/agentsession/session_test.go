package agentsession_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/domain/agentsession"
)

var t0 = time.Date(2025, 10, 4, 12, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

func open(t *testing.T) agentsession.Session {
	t.Helper()
	s, err := agentsession.New(agentsession.Spec{
		ID: "s1", AgentID: "chat_agent_1", AgentRole: "chat_agent",
		ConversationID: "conv_abc123", Host: "main", CreatedAt: t0,
	})
	require.NoError(t, err)
	return s
}

// inState is a session restored in st, as if read back from elsewhere; a
// person state carries who holds it.
func inState(t *testing.T, st agentsession.State) agentsession.Session {
	t.Helper()
	s := open(t)
	s.State = st
	if st.UserHasControl() {
		s.InterruptedBy, s.InterruptedAt = "ana", at(1)
	}
	return s
}

func held(id, cmd string) agentsession.PendingApproval {
	return agentsession.PendingApproval{
		ID: id, Command: cmd, Risk: "moderate", Reasons: []string{"R5 mkdir"},
		Description: "make a dir", RequestedAt: at(5),
	}
}

// allStates is every state a session can be found in, the invalid zero included.
var allStates = append(agentsession.States(), 0)

func TestNewOpensSessionInAgentControl(t *testing.T) {
	meta := map[string]any{"k": "v"}
	s, err := agentsession.New(agentsession.Spec{
		ID: "s1", AgentID: "a", AgentRole: "chat_agent", Host: "main",
		ConversationID: "c", Metadata: meta, CreatedAt: t0,
	})
	require.NoError(t, err)
	require.Equal(t, agentsession.AgentControl, s.State)
	require.Equal(t, t0, s.CreatedAt)
	require.Equal(t, t0, s.LastActivity)
	require.Zero(t, s.CommandCount)
	require.Nil(t, s.Pending)
	require.Equal(t, "main", s.Host)
	require.Equal(t, "c", s.ConversationID)
	meta["k"] = "changed"
	require.Equal(t, "v", s.Metadata["k"], "metadata is copied, not shared with the caller")
}

func TestNewRefusesSessionWithoutRequiredFields(t *testing.T) {
	full := agentsession.Spec{ID: "s1", AgentID: "a", AgentRole: "chat_agent", CreatedAt: t0}
	tests := []struct {
		name   string
		change func(*agentsession.Spec)
		msg    string
	}{
		{"no id", func(s *agentsession.Spec) { s.ID = "" }, "needs an id"},
		{"no agent id", func(s *agentsession.Spec) { s.AgentID = "" }, "agent_id"},
		{"no role", func(s *agentsession.Spec) { s.AgentRole = "" }, "agent_role"},
		{"no creation time", func(s *agentsession.Spec) { s.CreatedAt = time.Time{} }, "creation time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := full
			tt.change(&spec)
			_, err := agentsession.New(spec)
			require.ErrorIs(t, err, agentsession.ErrInvalid)
			require.ErrorContains(t, err, tt.msg)
		})
	}
}

func TestInterruptFromEveryState(t *testing.T) {
	tests := []struct {
		from    agentsession.State
		want    agentsession.Transition
		errKind agentsession.ErrorKind
		errMsg  string
	}{
		{
			from: agentsession.AgentControl,
			want: agentsession.Transition{From: agentsession.AgentControl, Via: agentsession.UserInterrupt, To: agentsession.UserControl, At: at(10)},
		},
		{
			from: agentsession.AgentResume,
			want: agentsession.Transition{From: agentsession.AgentResume, Via: agentsession.UserInterrupt, To: agentsession.UserControl, At: at(10)},
		},
		{
			// An interrupt under way is finished, by whoever asks now.
			from: agentsession.UserInterrupt,
			want: agentsession.Transition{From: agentsession.UserInterrupt, To: agentsession.UserControl, At: at(10)},
		},
		{from: agentsession.UserControl, errKind: agentsession.KindWrongState, errMsg: "ana has control since 2025-10-04T12:00:01Z already; resume the agent first"},
		{from: 0, errKind: agentsession.KindWrongState, errMsg: "no known state"},
	}
	for _, tt := range tests {
		t.Run(tt.from.String(), func(t *testing.T) {
			s := inState(t, tt.from)
			before := s
			got, err := s.Interrupt("bob", at(10))
			if tt.errKind != 0 {
				require.Equal(t, tt.errKind, agentsession.KindOf(err))
				require.ErrorContains(t, err, tt.errMsg)
				require.Equal(t, before, s, "a refused interrupt changes nothing")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.Equal(t, agentsession.UserControl, s.State)
			require.Equal(t, "bob", s.InterruptedBy)
			require.Equal(t, at(10), s.InterruptedAt)
			require.Equal(t, at(10), s.LastActivity)
		})
	}
}

func TestInterruptNeedsThePersonTakingControl(t *testing.T) {
	s := open(t)
	_, err := s.Interrupt("", at(1))
	require.ErrorIs(t, err, agentsession.ErrInvalid)
	require.Equal(t, agentsession.AgentControl, s.State)
}

func TestResumeFromEveryState(t *testing.T) {
	tests := []struct {
		from    agentsession.State
		want    agentsession.Transition
		errKind agentsession.ErrorKind
		errMsg  string
	}{
		{
			from: agentsession.UserControl,
			want: agentsession.Transition{From: agentsession.UserControl, Via: agentsession.AgentResume, To: agentsession.AgentControl, At: at(10)},
		},
		{
			from: agentsession.UserInterrupt,
			want: agentsession.Transition{From: agentsession.UserInterrupt, Via: agentsession.AgentResume, To: agentsession.AgentControl, At: at(10)},
		},
		{
			// A resume under way is finished.
			from: agentsession.AgentResume,
			want: agentsession.Transition{From: agentsession.AgentResume, To: agentsession.AgentControl, At: at(10)},
		},
		{from: agentsession.AgentControl, errKind: agentsession.KindWrongState, errMsg: "the agent already has control"},
		{from: 0, errKind: agentsession.KindWrongState, errMsg: "no known state"},
	}
	for _, tt := range tests {
		t.Run(tt.from.String(), func(t *testing.T) {
			s := inState(t, tt.from)
			before := s
			got, err := s.Resume(at(10))
			if tt.errKind != 0 {
				require.Equal(t, tt.errKind, agentsession.KindOf(err))
				require.ErrorContains(t, err, tt.errMsg)
				require.Equal(t, before, s, "a refused resume changes nothing")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.Equal(t, agentsession.AgentControl, s.State)
			require.Empty(t, s.InterruptedBy)
			require.Zero(t, s.InterruptedAt)
			require.Equal(t, at(10), s.LastActivity)
		})
	}
}

func TestAgentCommandsAreRefusedUnlessTheAgentHasControl(t *testing.T) {
	tests := []struct {
		state   agentsession.State
		errKind agentsession.ErrorKind
		errMsg  string
	}{
		{state: agentsession.AgentControl},
		{state: agentsession.UserInterrupt, errKind: agentsession.KindUserHasControl, errMsg: "agent session s1: ana is taking control since 2025-10-04T12:00:01Z; agent commands are blocked"},
		{state: agentsession.UserControl, errKind: agentsession.KindUserHasControl, errMsg: "agent session s1: ana has control since 2025-10-04T12:00:01Z; agent commands are blocked"},
		{state: agentsession.AgentResume, errKind: agentsession.KindWrongState, errMsg: "submit the command again"},
		{state: 0, errKind: agentsession.KindWrongState, errMsg: "open a new session"},
	}
	for _, tt := range tests {
		t.Run(tt.state.String(), func(t *testing.T) {
			ops := map[string]func(*agentsession.Session) error{
				"CheckExecute": func(s *agentsession.Session) error { return s.CheckExecute() },
				"StartCommand": func(s *agentsession.Session) error { return s.StartCommand(at(10)) },
				"Hold":         func(s *agentsession.Session) error { return s.Hold(held("ap1", "mkdir /tmp/x")) },
			}
			for name, op := range ops {
				s := inState(t, tt.state)
				before := s
				err := op(&s)
				if tt.errKind == 0 {
					require.NoError(t, err, name)
					continue
				}
				require.Equal(t, tt.errKind, agentsession.KindOf(err), name)
				require.ErrorContains(t, err, tt.errMsg, name)
				require.Equal(t, before, s, "%s: a refused command changes nothing", name)
			}
		})
	}
}

func TestStartCommandCountsAndMarksActivity(t *testing.T) {
	s := open(t)
	require.NoError(t, s.StartCommand(at(3)))
	require.NoError(t, s.StartCommand(at(7)))
	require.Equal(t, 2, s.CommandCount)
	require.Equal(t, at(7), s.LastActivity)
}

func TestHoldKeepsAtMostOnePendingApproval(t *testing.T) {
	s := open(t)
	require.NoError(t, s.Hold(held("ap1", "mkdir /tmp/a")))
	err := s.Hold(held("ap2", "mkdir /tmp/b"))
	require.ErrorIs(t, err, agentsession.ErrApprovalPending)
	require.ErrorContains(t, err, `command "mkdir /tmp/a" (approval ap1) is still waiting`)
	require.Equal(t, "ap1", s.Pending.ID, "the first held command is kept, not replaced")
	require.Equal(t, at(5), s.LastActivity)
	require.Zero(t, s.CommandCount, "holding a command does not run it")
}

func TestHoldRefusesAnIncompleteApproval(t *testing.T) {
	tests := []struct {
		name   string
		change func(*agentsession.PendingApproval)
		msg    string
	}{
		{"no id", func(p *agentsession.PendingApproval) { p.ID = "" }, "approval id"},
		{"no command", func(p *agentsession.PendingApproval) { p.Command = "" }, "command text"},
		{"no time", func(p *agentsession.PendingApproval) { p.RequestedAt = time.Time{} }, "time it was requested"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			p := held("ap1", "mkdir /tmp/a")
			tt.change(&p)
			err := s.Hold(p)
			require.ErrorIs(t, err, agentsession.ErrInvalid)
			require.ErrorContains(t, err, tt.msg)
			require.Nil(t, s.Pending)
		})
	}
}

func TestHoldCopiesTheReasons(t *testing.T) {
	s := open(t)
	p := held("ap1", "mkdir /tmp/a")
	require.NoError(t, s.Hold(p))
	p.Reasons[0] = "changed"
	require.Equal(t, []string{"R5 mkdir"}, s.Pending.Reasons)
}

func TestDecideInEveryState(t *testing.T) {
	tests := []struct {
		state   agentsession.State
		approve bool
		errKind agentsession.ErrorKind
	}{
		{state: agentsession.AgentControl, approve: true},
		{state: agentsession.AgentControl, approve: false},
		{state: agentsession.UserInterrupt, approve: true, errKind: agentsession.KindUserHasControl},
		{state: agentsession.UserInterrupt, approve: false},
		{state: agentsession.UserControl, approve: true, errKind: agentsession.KindUserHasControl},
		{state: agentsession.UserControl, approve: false},
		{state: agentsession.AgentResume, approve: true, errKind: agentsession.KindWrongState},
		{state: agentsession.AgentResume, approve: false},
		{state: 0, approve: true, errKind: agentsession.KindWrongState},
		{state: 0, approve: false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s approve=%v", tt.state, tt.approve), func(t *testing.T) {
			s := open(t)
			require.NoError(t, s.Hold(held("ap1", "mkdir /tmp/a")))
			s.State = tt.state
			if tt.state.UserHasControl() {
				s.InterruptedBy = "ana"
			}
			before := s
			got, err := s.Decide(tt.approve, "bob", at(20))
			if tt.errKind != 0 {
				require.Equal(t, tt.errKind, agentsession.KindOf(err))
				require.Equal(t, before, s, "a refused approval stays held")
				return
			}
			require.NoError(t, err)
			require.Equal(t, held("ap1", "mkdir /tmp/a"), got)
			require.Nil(t, s.Pending)
			require.Equal(t, at(20), s.LastActivity)
			require.Equal(t, tt.state, s.State, "deciding does not hand over control")
			require.Zero(t, s.CommandCount, "the caller counts the command when it starts")
		})
	}
}

func TestDecideRefusals(t *testing.T) {
	tests := []struct {
		name    string
		hold    bool
		named   bool   // call DecideHeld with id instead of Decide
		id      string // the approval id DecideHeld names
		by      string
		errKind agentsession.ErrorKind
		errMsg  string
	}{
		{
			name: "nothing held", by: "bob",
			errKind: agentsession.KindNoPendingApproval, errMsg: "nothing to approve or deny",
		},
		{
			name: "nobody deciding", hold: true,
			errKind: agentsession.KindInvalid, errMsg: "the person who makes it",
		},
		{
			name: "another command held", hold: true, named: true, id: "ap0", by: "bob",
			errKind: agentsession.KindNoPendingApproval, errMsg: `approval ap0 is no longer waiting; approval ap1 ("mkdir /tmp/a") is`,
		},
		{
			name: "named command with nothing held", named: true, id: "ap1", by: "bob",
			errKind: agentsession.KindNoPendingApproval, errMsg: "approval ap1 is not waiting",
		},
		{
			name: "no approval named", hold: true, named: true, by: "bob",
			errKind: agentsession.KindInvalid, errMsg: "name the approval id",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			if tt.hold {
				require.NoError(t, s.Hold(held("ap1", "mkdir /tmp/a")))
			}
			before := s
			var err error
			if tt.named {
				_, err = s.DecideHeld(tt.id, true, tt.by, at(9))
			} else {
				_, err = s.Decide(true, tt.by, at(9))
			}
			require.Equal(t, tt.errKind, agentsession.KindOf(err))
			require.ErrorContains(t, err, tt.errMsg)
			require.Equal(t, before, s)
		})
	}
}

func TestDecideHeldDecidesTheNamedCommand(t *testing.T) {
	s := open(t)
	require.NoError(t, s.Hold(held("ap1", "mkdir /tmp/a")))
	got, err := s.DecideHeld("ap1", true, "bob", at(9))
	require.NoError(t, err)
	require.Equal(t, "ap1", got.ID)
	require.Nil(t, s.Pending)
}

func TestDecidingLeavesEarlierCopiesIntact(t *testing.T) {
	s := open(t)
	require.NoError(t, s.Hold(held("ap1", "mkdir /tmp/a")))
	snapshot := s
	_, err := s.Decide(false, "bob", at(9))
	require.NoError(t, err)
	require.NotNil(t, snapshot.Pending, "a copy taken before the decision still shows the held command")
	require.Equal(t, "ap1", snapshot.Pending.ID)
}

// TestSeedFlowInterruptDenyResume walks seed 002's workflow: a held command
// survives an interrupt, the person denies it, gives control back, and the
// agent runs again.
func TestSeedFlowInterruptDenyResume(t *testing.T) {
	s := open(t)
	require.NoError(t, s.StartCommand(at(1)))
	require.NoError(t, s.Hold(held("ap1", "mkdir /tmp/a")))

	tr, err := s.Interrupt("ana", at(6))
	require.NoError(t, err)
	require.Equal(t, agentsession.AgentControl, tr.From)
	require.Equal(t, agentsession.UserControl, tr.To)
	require.NotNil(t, s.Pending, "the interrupt response still shows the held command")
	require.ErrorIs(t, s.StartCommand(at(7)), agentsession.ErrUserHasControl)

	_, err = s.Decide(true, "ana", at(8))
	require.ErrorIs(t, err, agentsession.ErrUserHasControl)
	denied, err := s.Decide(false, "ana", at(8))
	require.NoError(t, err)
	require.Equal(t, "ap1", denied.ID)

	tr, err = s.Resume(at(9))
	require.NoError(t, err)
	require.Equal(t, agentsession.AgentControl, tr.To)
	require.NoError(t, s.StartCommand(at(10)))
	require.Equal(t, 2, s.CommandCount)
	require.Equal(t, at(10), s.LastActivity)
}

func TestTouchNeverMovesActivityBackwards(t *testing.T) {
	s := open(t)
	s.Touch(at(10))
	s.Touch(at(4))
	require.Equal(t, at(10), s.LastActivity)
	_, err := s.Interrupt("ana", at(2))
	require.NoError(t, err)
	require.Equal(t, at(10), s.LastActivity)
}

func TestExpiredAfterIdleTimeout(t *testing.T) {
	tests := []struct {
		name string
		now  time.Time
		idle time.Duration
		want bool
	}{
		{"fresh", at(10), time.Hour, false},
		{"one tick short", at(3600).Add(-time.Nanosecond), time.Hour, false},
		{"exactly the timeout", at(3600), time.Hour, true},
		{"long idle", at(7200), time.Hour, true},
		{"zero timeout never expires", at(1e6), 0, false},
		{"negative timeout never expires", at(1e6), -time.Second, false},
		{"clock before last activity", t0.Add(-time.Hour), time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			require.Equal(t, tt.want, s.Expired(tt.now, tt.idle))
		})
	}
}

func TestActivityPostponesExpiry(t *testing.T) {
	s := open(t)
	require.NoError(t, s.StartCommand(at(3000)))
	require.False(t, s.Expired(at(3600), time.Hour))
	require.True(t, s.Expired(at(6600), time.Hour))
}

func TestErrorsMatchTheirKindsSentinel(t *testing.T) {
	sentinels := map[agentsession.ErrorKind]error{
		agentsession.KindInvalid:           agentsession.ErrInvalid,
		agentsession.KindUserHasControl:    agentsession.ErrUserHasControl,
		agentsession.KindApprovalPending:   agentsession.ErrApprovalPending,
		agentsession.KindNoPendingApproval: agentsession.ErrNoPendingApproval,
		agentsession.KindWrongState:        agentsession.ErrWrongState,
	}
	s := inState(t, agentsession.UserControl)
	err := fmt.Errorf("execute: %w", s.CheckExecute())
	for kind, sentinel := range sentinels {
		require.Equal(t, kind, agentsession.KindOf(sentinel))
		require.Equal(t, kind == agentsession.KindUserHasControl, errors.Is(err, sentinel), kind.String())
	}
	require.Equal(t, agentsession.KindUserHasControl, agentsession.KindOf(err), "the kind is found through wrapping")
	var e *agentsession.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, "s1", e.SessionID)
	require.Equal(t, agentsession.UserControl, e.State)
	require.Zero(t, agentsession.KindOf(errors.New("other")))
	require.Zero(t, agentsession.KindOf(nil))
}

func TestErrorKindNamesForLogs(t *testing.T) {
	require.Equal(t, "user_has_control", agentsession.KindUserHasControl.String())
	require.Equal(t, "approval_pending", agentsession.KindApprovalPending.String())
	require.Equal(t, "no_pending_approval", agentsession.KindNoPendingApproval.String())
	require.Equal(t, "wrong_state", agentsession.KindWrongState.String())
	require.Equal(t, "invalid", agentsession.KindInvalid.String())
	require.Equal(t, "kind(0)", agentsession.ErrorKind(0).String())
}
