// Package policy is the agent permission matrix of seed 002: which agent
// role may run a command of which risk automatically, with a person's
// approval, or not at all (docs/risk-policy.md, "The gate"; R21 for sandboxed commands). It is pure: the risk
// comes from domain/risk, the decision is a table lookup.
package policy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shellgate/shellgate/domain/risk"
)

// Role is an agent role as it appears on the wire ("chat_agent", …).
type Role string

// The agent roles of seed 002, from least to most privileged.
const (
	ChatAgent       Role = "chat_agent"
	AutomationAgent Role = "automation_agent"
	SystemAgent     Role = "system_agent"
	AdminAgent      Role = "admin_agent"
)

// ErrUnknownRole is wrapped by ParseRole for a role not in the seed, so the
// REST adapter can map it to the seed's `invalid_agent_role` error code.
var ErrUnknownRole = errors.New("unknown agent role")

var roles = []Role{ChatAgent, AutomationAgent, SystemAgent, AdminAgent}

// Roles lists every role, least privileged first.
func Roles() []Role { return append([]Role(nil), roles...) }

// String returns the wire name of the role.
func (r Role) String() string { return string(r) }

// Valid reports whether r is one of the seed's roles.
func (r Role) Valid() bool { return RoleRank(r) >= 0 }

// ParseRole reads a role name, ignoring case and surrounding spaces.
func ParseRole(s string) (Role, error) {
	want := Role(strings.ToLower(strings.TrimSpace(s)))
	if want.Valid() {
		return want, nil
	}
	names := make([]string, len(roles))
	for i, r := range roles {
		names[i] = string(r)
	}
	return "", fmt.Errorf("%w %q: want one of %s", ErrUnknownRole, s, strings.Join(names, ", "))
}

// RoleRank orders roles by privilege: chat_agent 0 < automation_agent 1 <
// system_agent 2 < admin_agent 3, and -1 for an unknown role.
//
// automation_agent and system_agent have the same permissions in the seed;
// they are still ranked (automation below system) so that the ranking is a
// total order and a token capped at automation_agent cannot claim
// system_agent, whose audit trail and purpose differ.
func RoleRank(r Role) int {
	for i, x := range roles {
		if x == r {
			return i
		}
	}
	return -1
}

// AtMost reports whether role a is no more privileged than role b, e.g.
// whether the agent_role a session asks for is within what its token
// allows. An unknown role on either side fails closed.
func AtMost(a, b Role) bool {
	ra, rb := RoleRank(a), RoleRank(b)
	return ra >= 0 && rb >= 0 && ra <= rb
}

// Decision is what the gate does with a command.
type Decision int

// The gate decisions.
const (
	// Auto runs the command without asking anyone.
	Auto Decision = iota
	// Approval holds the command until a person approves that exact text.
	Approval
	// Blocked refuses the command.
	Blocked
)

var decisionNames = [...]string{"auto", "approval", "blocked"}

// String returns the wire name: "auto", "approval" or "blocked".
func (d Decision) String() string {
	if d < Auto || d > Blocked {
		return fmt.Sprintf("decision(%d)", int(d))
	}
	return decisionNames[d]
}

// MarshalText encodes the decision by name.
func (d Decision) MarshalText() ([]byte, error) {
	if d < Auto || d > Blocked {
		return nil, fmt.Errorf("cannot encode invalid decision %d", int(d))
	}
	return []byte(d.String()), nil
}

// gate is the table of risk-policy.md, indexed by risk level. The seed's
// workflow text ("DANGEROUS always requires approval") and AutoBot's
// supervised mode contradict its permission matrix; the matrix wins.
var gate = map[Role][risk.Forbidden + 1]Decision{
	ChatAgent:       {risk.Safe: Auto, risk.Moderate: Approval, risk.High: Blocked, risk.Dangerous: Blocked, risk.Forbidden: Blocked},
	AutomationAgent: {risk.Safe: Auto, risk.Moderate: Auto, risk.High: Approval, risk.Dangerous: Blocked, risk.Forbidden: Blocked},
	SystemAgent:     {risk.Safe: Auto, risk.Moderate: Auto, risk.High: Approval, risk.Dangerous: Blocked, risk.Forbidden: Blocked},
	AdminAgent:      {risk.Safe: Auto, risk.Moderate: Auto, risk.High: Approval, risk.Dangerous: Approval, risk.Forbidden: Blocked},
}

// effective treats an unknown role as chat_agent, the least privileged.
func effective(r Role) Role {
	if r.Valid() {
		return r
	}
	return ChatAgent
}

// Decide applies the gate to a command of the given risk run by role.
// Forbidden is blocked for every role; an unknown role is a chat_agent; a
// risk outside the known levels is blocked.
func Decide(role Role, level risk.Level) Decision {
	if level < risk.Safe || level > risk.Forbidden {
		return Blocked
	}
	return gate[effective(role)][level]
}

// MaxRisk is the seed's "Max Risk Level" of a role: the highest risk it may
// run at all (with approval where the gate says so).
func MaxRisk(role Role) risk.Level {
	switch effective(role) {
	case AutomationAgent, SystemAgent:
		return risk.High
	case AdminAgent:
		return risk.Dangerous
	default:
		return risk.Moderate
	}
}

// BlockedError is the domain error for a blocked command; its message is
// worded exactly as the seed's error response.
type BlockedError struct {
	Role Role
	Risk risk.Level
	Max  risk.Level
}

// Error returns e.g. "Command risk high exceeds agent max risk moderate".
func (e *BlockedError) Error() string {
	return fmt.Sprintf("Command risk %s exceeds agent max risk %s", e.Risk, e.Max)
}

// BlockMessage words the refusal of a command of the given risk for role
// exactly like seed 002: "Command risk high exceeds agent max risk moderate".
func BlockMessage(role Role, level risk.Level) string {
	return (&BlockedError{Role: effective(role), Risk: level, Max: MaxRisk(role)}).Error()
}

// Check decides and, when the command is blocked, also returns the
// *BlockedError to send back.
func Check(role Role, level risk.Level) (Decision, error) {
	d := Decide(role, level)
	if d == Blocked {
		return d, &BlockedError{Role: effective(role), Risk: level, Max: MaxRisk(role)}
	}
	return d, nil
}

// Tier is what a command will run under, as far as the gate trusts it
// (docs/risk-policy.md R21).
type Tier int

// The tiers.
const (
	// Unconfined: the command runs with the daemon's own rights; the table
	// above decides.
	Unconfined Tier = iota
	// Contained: the command runs sandboxed, writing nowhere but its
	// workspace (or nowhere, read-only) and its private /tmp, with no
	// network. The sandbox contains what moderate commands do, so they run
	// without a person for every role, and a deletion inside the workspace
	// counts as moderate (risk.Assessment.Contained). High and above are
	// decided exactly as unconfined: the sandbox is defence in depth under
	// the classifier, not instead of it.
	Contained
)

// String names the tier.
func (t Tier) String() string {
	if t == Contained {
		return "contained"
	}
	return "unconfined"
}

// CheckIn decides a command of assessment a for role under tier, and
// returns the level it decided by (a.Level unconfined, a.Contained
// contained) with the *BlockedError of a blocked command.
func CheckIn(role Role, a risk.Assessment, tier Tier) (Decision, risk.Level, error) {
	level := a.Level
	if tier == Contained {
		level = min(a.Contained, a.Level)
		if level >= risk.Safe && level <= risk.Moderate {
			return Auto, level, nil
		}
	}
	d, err := Check(role, level)
	return d, level, err
}
