// Package agentsession is an agent terminal session's control state (seed
// 002): who holds the session, the agent or a person, and the one command it
// may hold for a person's approval. It is pure: no I/O, no goroutines, no
// clock; every instant is passed in by the caller.
package agentsession

import (
	"fmt"
	"strings"
)

// State says who has control of a session. The zero value is not a state:
// a Session that was never built by New refuses everything.
type State uint8

// The control states of seed 002. A session rests in AgentControl or
// UserControl; UserInterrupt and AgentResume are the states a hand-over
// passes through (see Transition), kept as values so a session restored from
// elsewhere in one of them still behaves.
const (
	// AgentControl: the agent is executing commands.
	AgentControl State = iota + 1
	// UserInterrupt: a person has asked for control; agent commands are
	// already refused.
	UserInterrupt
	// UserControl: a person has control; agent commands are refused.
	UserControl
	// AgentResume: control is being handed back to the agent; agent commands
	// wait until it arrives in AgentControl.
	AgentResume
)

var stateNames = [...]string{
	AgentControl:  "agent_control",
	UserInterrupt: "user_interrupt",
	UserControl:   "user_control",
	AgentResume:   "agent_resume",
}

// States lists every valid state in seed order.
func States() []State { return []State{AgentControl, UserInterrupt, UserControl, AgentResume} }

// String is the seed's wire name ("agent_control", …).
func (s State) String() string {
	if !s.Valid() {
		return fmt.Sprintf("state(%d)", uint8(s))
	}
	return stateNames[s]
}

// Valid reports whether s is one of the four control states.
func (s State) Valid() bool { return s >= AgentControl && s <= AgentResume }

// CanExecute reports whether an agent command may run (or be held for
// approval) in this state: only while the agent has control.
func (s State) CanExecute() bool { return s == AgentControl }

// UserHasControl reports whether a person holds the session or is taking it.
func (s State) UserHasControl() bool { return s == UserInterrupt || s == UserControl }

// ParseState reads a wire name back into a State. Case and surrounding space
// are forgiven because the seed prints the names upper-case in prose.
func ParseState(name string) (State, error) {
	want := strings.ToLower(strings.TrimSpace(name))
	for _, s := range States() {
		if stateNames[s] == want {
			return s, nil
		}
	}
	return 0, fmt.Errorf("unknown agent session state %q: want one of agent_control, user_interrupt, user_control, agent_resume", name)
}

// MarshalText encodes the state by name so JSON carries "agent_control".
func (s State) MarshalText() ([]byte, error) {
	if !s.Valid() {
		return nil, fmt.Errorf("cannot encode invalid agent session state %d", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText decodes a state from its name.
func (s *State) UnmarshalText(b []byte) error {
	v, err := ParseState(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}
