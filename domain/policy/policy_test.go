package policy

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/shellexpand"
	"github.com/shellgate/shellgate/domain/risk"
)

func TestDecideFollowsTheGateTableForEveryRoleAndRisk(t *testing.T) {
	tests := []struct {
		role  Role
		level risk.Level
		want  Decision
	}{
		{ChatAgent, risk.Safe, Auto},
		{ChatAgent, risk.Moderate, Approval},
		{ChatAgent, risk.High, Blocked},
		{ChatAgent, risk.Dangerous, Blocked},
		{ChatAgent, risk.Forbidden, Blocked},

		{AutomationAgent, risk.Safe, Auto},
		{AutomationAgent, risk.Moderate, Auto},
		{AutomationAgent, risk.High, Approval},
		{AutomationAgent, risk.Dangerous, Blocked},
		{AutomationAgent, risk.Forbidden, Blocked},

		{SystemAgent, risk.Safe, Auto},
		{SystemAgent, risk.Moderate, Auto},
		{SystemAgent, risk.High, Approval},
		{SystemAgent, risk.Dangerous, Blocked},
		{SystemAgent, risk.Forbidden, Blocked},

		{AdminAgent, risk.Safe, Auto},
		{AdminAgent, risk.Moderate, Auto},
		{AdminAgent, risk.High, Approval},
		{AdminAgent, risk.Dangerous, Approval},
		{AdminAgent, risk.Forbidden, Blocked},
	}
	require.Len(t, tests, len(Roles())*5, "every role × every level")
	for _, tt := range tests {
		t.Run(tt.role.String()+"/"+tt.level.String(), func(t *testing.T) {
			require.Equal(t, tt.want, Decide(tt.role, tt.level))
		})
	}
}

func TestBlockedExactlyWhenRiskExceedsMaxRisk(t *testing.T) {
	for _, role := range Roles() {
		for l := risk.Safe; l <= risk.Forbidden; l++ {
			blocked := Decide(role, l) == Blocked
			require.Equal(t, l > MaxRisk(role), blocked, "%s at %s", role, l)
		}
	}
}

func TestForbiddenIsBlockedForEveryRole(t *testing.T) {
	for _, role := range append(Roles(), "root", "") {
		require.Equal(t, Blocked, Decide(role, risk.Forbidden), "role %q", role)
	}
}

func TestUnknownRoleIsTreatedAsChatAgent(t *testing.T) {
	for l := risk.Safe; l <= risk.Forbidden; l++ {
		require.Equal(t, Decide(ChatAgent, l), Decide("superuser", l), "level %s", l)
	}
	require.Equal(t, risk.Moderate, MaxRisk("superuser"))
	require.Equal(t, "Command risk high exceeds agent max risk moderate", BlockMessage("superuser", risk.High))
}

func TestDecideBlocksRiskOutsideTheKnownLevels(t *testing.T) {
	require.Equal(t, Blocked, Decide(AdminAgent, risk.Level(-1)))
	require.Equal(t, Blocked, Decide(AdminAgent, risk.Forbidden+1))
}

func TestMaxRiskMatchesTheSeed(t *testing.T) {
	tests := map[Role]risk.Level{
		ChatAgent:       risk.Moderate,
		AutomationAgent: risk.High,
		SystemAgent:     risk.High,
		AdminAgent:      risk.Dangerous,
	}
	for role, want := range tests {
		require.Equal(t, want, MaxRisk(role), "role %s", role)
	}
}

func TestBlockMessageIsWordedLikeTheSeed(t *testing.T) {
	tests := []struct {
		role  Role
		level risk.Level
		want  string
	}{
		{ChatAgent, risk.High, "Command risk high exceeds agent max risk moderate"},
		{ChatAgent, risk.Forbidden, "Command risk forbidden exceeds agent max risk moderate"},
		{AutomationAgent, risk.Dangerous, "Command risk dangerous exceeds agent max risk high"},
		{SystemAgent, risk.Dangerous, "Command risk dangerous exceeds agent max risk high"},
		{AdminAgent, risk.Forbidden, "Command risk forbidden exceeds agent max risk dangerous"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			require.Equal(t, tt.want, BlockMessage(tt.role, tt.level))
		})
	}
}

func TestCheckReturnsBlockedErrorOnlyWhenBlocked(t *testing.T) {
	d, err := Check(ChatAgent, risk.High)
	require.Equal(t, Blocked, d)
	var be *BlockedError
	require.True(t, errors.As(err, &be))
	require.Equal(t, &BlockedError{Role: ChatAgent, Risk: risk.High, Max: risk.Moderate}, be)
	require.EqualError(t, err, "Command risk high exceeds agent max risk moderate")

	d, err = Check(ChatAgent, risk.Moderate)
	require.Equal(t, Approval, d)
	require.NoError(t, err)

	d, err = Check(AdminAgent, risk.Dangerous)
	require.Equal(t, Approval, d)
	require.NoError(t, err)
}

func TestParseRoleAcceptsEveryRoleAndIgnoresCase(t *testing.T) {
	for _, role := range Roles() {
		got, err := ParseRole(role.String())
		require.NoError(t, err)
		require.Equal(t, role, got)
	}
	got, err := ParseRole("  Admin_Agent ")
	require.NoError(t, err)
	require.Equal(t, AdminAgent, got)
}

func TestParseRoleRejectsUnknownRoles(t *testing.T) {
	for _, s := range []string{"", "root", "chat", "admin-agent", "chat_agent2"} {
		t.Run(s, func(t *testing.T) {
			_, err := ParseRole(s)
			require.ErrorIs(t, err, ErrUnknownRole)
			require.ErrorContains(t, err, "want one of chat_agent, automation_agent, system_agent, admin_agent")
		})
	}
}

func TestRoleRankOrdersChatAutomationSystemAdmin(t *testing.T) {
	require.Equal(t, 0, RoleRank(ChatAgent))
	require.Equal(t, 1, RoleRank(AutomationAgent))
	require.Equal(t, 2, RoleRank(SystemAgent))
	require.Equal(t, 3, RoleRank(AdminAgent))
	require.Equal(t, -1, RoleRank("root"))
	require.True(t, AdminAgent.Valid())
	require.False(t, Role("root").Valid())
}

func TestAtMostCapsTheRoleATokenMayClaim(t *testing.T) {
	all := Roles()
	for i, a := range all {
		for j, b := range all {
			require.Equal(t, i <= j, AtMost(a, b), "AtMost(%s, %s)", a, b)
		}
	}
	require.False(t, AtMost(AutomationAgent, ChatAgent))
	require.False(t, AtMost(SystemAgent, AutomationAgent), "a token capped at automation_agent cannot claim system_agent")
	require.False(t, AtMost("root", AdminAgent), "unknown requested role fails closed")
	require.False(t, AtMost(ChatAgent, "root"), "unknown cap fails closed")
}

func TestRolesReturnsACopy(t *testing.T) {
	r := Roles()
	r[0] = "mutated"
	require.Equal(t, ChatAgent, Roles()[0])
}

func TestDecisionNames(t *testing.T) {
	require.Equal(t, "auto", Auto.String())
	require.Equal(t, "approval", Approval.String())
	require.Equal(t, "blocked", Blocked.String())
	require.Equal(t, "decision(7)", Decision(7).String())

	b, err := json.Marshal(map[string]Decision{"d": Approval})
	require.NoError(t, err)
	require.JSONEq(t, `{"d":"approval"}`, string(b))
	_, err = json.Marshal(Decision(7))
	require.Error(t, err)
}

func TestClassifiedCommandsGateEndToEnd(t *testing.T) {
	tests := []struct {
		cmd  string
		role Role
		want Decision
	}{
		{"echo \"Hello World\"", ChatAgent, Auto},
		{"mkdir /tmp/test_dir", ChatAgent, Approval},
		{"mkdir /tmp/test_dir", AutomationAgent, Auto},
		{"sudo systemctl restart nginx", ChatAgent, Blocked},
		{"sudo systemctl restart nginx", SystemAgent, Approval},
		{"rm -rf build", SystemAgent, Blocked},
		{"rm -rf build", AdminAgent, Approval},
		{"kill 1", AdminAgent, Blocked},
	}
	for _, tt := range tests {
		t.Run(tt.cmd+"/"+tt.role.String(), func(t *testing.T) {
			require.Equal(t, tt.want, Decide(tt.role, risk.New(shellexpand.New()).Classify(tt.cmd).Level))
		})
	}
}

func TestContainedTierRunsModerateForEveryRoleAndLeavesHighAlone(t *testing.T) {
	type want struct{ unconfined, contained Decision }
	cases := []struct {
		role Role
		a    risk.Assessment
		want want
	}{
		{ChatAgent, risk.Assessment{Level: risk.Moderate, Contained: risk.Moderate}, want{Approval, Auto}},
		{ChatAgent, risk.Assessment{Level: risk.Safe, Contained: risk.Safe}, want{Auto, Auto}},
		{ChatAgent, risk.Assessment{Level: risk.Dangerous, Contained: risk.Moderate}, want{Blocked, Auto}},
		{ChatAgent, risk.Assessment{Level: risk.High, Contained: risk.Moderate}, want{Blocked, Auto}},
		{ChatAgent, risk.Assessment{Level: risk.High, Contained: risk.High}, want{Blocked, Blocked}},
		{ChatAgent, risk.Assessment{Level: risk.Forbidden, Contained: risk.Forbidden}, want{Blocked, Blocked}},
		{AutomationAgent, risk.Assessment{Level: risk.High, Contained: risk.High}, want{Approval, Approval}},
		{AutomationAgent, risk.Assessment{Level: risk.Dangerous, Contained: risk.High}, want{Blocked, Approval}},
		{AdminAgent, risk.Assessment{Level: risk.Dangerous, Contained: risk.Dangerous}, want{Approval, Approval}},
		{AdminAgent, risk.Assessment{Level: risk.Forbidden, Contained: risk.Forbidden}, want{Blocked, Blocked}},
		// A Contained above Level (never produced) cannot raise or lower past Level.
		{ChatAgent, risk.Assessment{Level: risk.Moderate, Contained: risk.Forbidden}, want{Approval, Auto}},
	}
	for _, c := range cases {
		d, level, _ := CheckIn(c.role, c.a, Unconfined)
		require.Equal(t, c.want.unconfined, d, "%s %+v unconfined", c.role, c.a)
		require.Equal(t, c.a.Level, level)
		d, level, err := CheckIn(c.role, c.a, Contained)
		require.Equal(t, c.want.contained, d, "%s %+v contained", c.role, c.a)
		require.LessOrEqual(t, level, c.a.Level)
		require.Equal(t, d == Blocked, err != nil)
	}
}
