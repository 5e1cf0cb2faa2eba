package agentsession_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/domain/agentsession"
)

func TestStateStringIsTheSeedWireName(t *testing.T) {
	tests := []struct {
		state agentsession.State
		want  string
	}{
		{agentsession.AgentControl, "agent_control"},
		{agentsession.UserInterrupt, "user_interrupt"},
		{agentsession.UserControl, "user_control"},
		{agentsession.AgentResume, "agent_resume"},
		{0, "state(0)"},
		{9, "state(9)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			require.Equal(t, tt.want, tt.state.String())
		})
	}
}

func TestStatesListsEveryValidStateOnce(t *testing.T) {
	seen := map[agentsession.State]bool{}
	for _, s := range agentsession.States() {
		require.True(t, s.Valid(), s.String())
		require.False(t, seen[s], "%s listed twice", s)
		seen[s] = true
	}
	require.Len(t, seen, 4)
	require.False(t, agentsession.State(0).Valid())
}

func TestStateSaysWhoMayAct(t *testing.T) {
	tests := []struct {
		state          agentsession.State
		canExecute     bool
		userHasControl bool
	}{
		{agentsession.AgentControl, true, false},
		{agentsession.UserInterrupt, false, true},
		{agentsession.UserControl, false, true},
		{agentsession.AgentResume, false, false},
		{0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.state.String(), func(t *testing.T) {
			require.Equal(t, tt.canExecute, tt.state.CanExecute())
			require.Equal(t, tt.userHasControl, tt.state.UserHasControl())
		})
	}
}

func TestParseStateReadsWireAndSeedProseNames(t *testing.T) {
	tests := []struct {
		in      string
		want    agentsession.State
		wantErr bool
	}{
		{in: "agent_control", want: agentsession.AgentControl},
		{in: "USER_INTERRUPT", want: agentsession.UserInterrupt},
		{in: " user_control ", want: agentsession.UserControl},
		{in: "agent_resume", want: agentsession.AgentResume},
		{in: "", wantErr: true},
		{in: "paused", wantErr: true},
		{in: "state(0)", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := agentsession.ParseState(tt.in)
			if tt.wantErr {
				require.ErrorContains(t, err, "want one of agent_control")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestStateTravelsAsItsNameInJSON(t *testing.T) {
	for _, s := range agentsession.States() {
		b, err := json.Marshal(s)
		require.NoError(t, err)
		require.Equal(t, `"`+s.String()+`"`, string(b))
		var back agentsession.State
		require.NoError(t, json.Unmarshal(b, &back))
		require.Equal(t, s, back)
	}
	_, err := json.Marshal(agentsession.State(0))
	require.Error(t, err)
	var s agentsession.State
	require.Error(t, json.Unmarshal([]byte(`"nobody"`), &s))
}
