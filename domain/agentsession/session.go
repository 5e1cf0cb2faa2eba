package agentsession

import (
	"maps"
	"slices"
	"time"
)

// Spec is what an agent session is opened with (seed 002, create session).
type Spec struct {
	// ID identifies the session; the caller mints it.
	ID string
	// AgentID names the agent that opened the session.
	AgentID string
	// AgentRole is the agent's role name; checking it against the known
	// roles is domain/policy's job, not this package's.
	AgentRole string
	// ConversationID ties the session to a chat; optional.
	ConversationID string
	// Host is where the agent's commands run; optional.
	Host string
	// Workspace is the directory every command of the session starts in.
	Workspace string
	// Metadata is the caller's free-form object; it is copied, not kept.
	Metadata map[string]any
	// CreatedAt is when the session opened.
	CreatedAt time.Time
}

// Session is one agent terminal session: who has control, what it has run,
// and the one command it may hold for approval. It is a value: its owner
// serialises every call. Copies share Metadata and the Pending approval,
// which no method ever changes in place (Hold and Decide replace Pending).
type Session struct {
	// ID identifies the session.
	ID string
	// AgentID names the agent that opened it.
	AgentID string
	// AgentRole is the agent's role name.
	AgentRole string
	// ConversationID ties the session to a chat; may be empty.
	ConversationID string
	// Host is where the agent's commands run; may be empty.
	Host string
	// Workspace is the directory every command of the session starts in.
	Workspace string
	// Metadata is the free-form object given at creation; read it, never
	// write to it.
	Metadata map[string]any
	// CreatedAt is when the session opened.
	CreatedAt time.Time
	// LastActivity is the latest instant anything happened to the session;
	// it never moves backwards.
	LastActivity time.Time
	// CommandCount is how many agent commands have started (see StartCommand).
	CommandCount int
	// State says who has control.
	State State
	// InterruptedBy is the person holding control since the last Interrupt;
	// empty while the agent has control.
	InterruptedBy string
	// InterruptedAt is when InterruptedBy took control.
	InterruptedAt time.Time
	// Pending is the command held for a person's decision, or nil.
	Pending *PendingApproval
}

// PendingApproval is an agent command held until a person approves or denies
// it. Approving it approves exactly this command text and nothing else.
type PendingApproval struct {
	// ID identifies the held command, so a person decides the command they
	// saw and not one submitted after it.
	ID string
	// Command is the exact shell line that would run.
	Command string
	// Risk is the classifier's level name ("moderate", "high", …).
	Risk string
	// Reasons say why the command has that risk.
	Reasons []string
	// Description is the agent's own account of the command; it is
	// untrusted text.
	Description string
	// RequestedAt is when the agent submitted the command.
	RequestedAt time.Time
	// Unconfined says the agent asked for the command to run outside the
	// sandbox ("sandbox": false), and so it runs if approved.
	Unconfined bool
}

// Transition is one hand-over of control, for the caller's response and audit
// record (seed 002 answers an interrupt with its previous and current state).
type Transition struct {
	// From is the state before the call.
	From State
	// Via is the state the hand-over passed through (UserInterrupt on the way
	// to UserControl, AgentResume on the way to AgentControl); zero when the
	// session was already in it and only finished the hand-over.
	Via State
	// To is the state after the call.
	To State
	// At is when it happened.
	At time.Time
}

// New opens a session in AgentControl. ID, AgentID, AgentRole and CreatedAt
// are required.
func New(spec Spec) (Session, error) {
	s := Session{
		ID:             spec.ID,
		AgentID:        spec.AgentID,
		AgentRole:      spec.AgentRole,
		ConversationID: spec.ConversationID,
		Host:           spec.Host,
		Workspace:      spec.Workspace,
		Metadata:       maps.Clone(spec.Metadata),
		CreatedAt:      spec.CreatedAt,
		LastActivity:   spec.CreatedAt,
		State:          AgentControl,
	}
	switch {
	case spec.ID == "":
		return Session{}, s.refuse(KindInvalid, "a session needs an id")
	case spec.AgentID == "":
		return Session{}, s.refuse(KindInvalid, "a session needs the agent_id of the agent opening it")
	case spec.AgentRole == "":
		return Session{}, s.refuse(KindInvalid, "a session needs an agent_role such as chat_agent")
	case spec.CreatedAt.IsZero():
		return Session{}, s.refuse(KindInvalid, "a session needs its creation time")
	}
	return s, nil
}

// CheckExecute says whether an agent command may be submitted now: nil while
// the agent has control, otherwise why not (ErrUserHasControl while a person
// has it). It changes nothing.
func (s *Session) CheckExecute() error {
	switch {
	case s.State.CanExecute():
		return nil
	case s.State.UserHasControl():
		return s.refuse(KindUserHasControl, "%s; agent commands are blocked until a person resumes the agent", s.holder())
	case s.State == AgentResume:
		return s.refuse(KindWrongState, "control is still being handed back to the agent; submit the command again")
	default:
		return s.refuse(KindWrongState, "the session is in no known state (%s), so it refuses agent commands; open a new session", s.State)
	}
}

// StartCommand records that an agent command is about to run, whether it was
// auto-approved or approved by a person: it refuses as CheckExecute does,
// otherwise counts the command and marks activity.
func (s *Session) StartCommand(now time.Time) error {
	if err := s.CheckExecute(); err != nil {
		return err
	}
	s.CommandCount++
	s.Touch(now)
	return nil
}

// Hold keeps p as the session's pending approval until a person decides. A
// session holds at most one: a second is refused with ErrApprovalPending
// rather than queued or replacing the first, so a person never approves a
// command other than the one they read. It is refused, too, unless the agent
// has control. p needs an ID, a Command and RequestedAt.
func (s *Session) Hold(p PendingApproval) error {
	switch {
	case p.ID == "":
		return s.refuse(KindInvalid, "a held command needs an approval id")
	case p.Command == "":
		return s.refuse(KindInvalid, "a held command needs the command text")
	case p.RequestedAt.IsZero():
		return s.refuse(KindInvalid, "a held command needs the time it was requested")
	}
	if err := s.CheckExecute(); err != nil {
		return err
	}
	if s.Pending != nil {
		return s.refuse(KindApprovalPending, "command %q (approval %s) is still waiting for approval; a person must approve or deny it before the agent submits another", s.Pending.Command, s.Pending.ID)
	}
	p.Reasons = slices.Clone(p.Reasons)
	s.Pending = &p
	s.Touch(p.RequestedAt)
	return nil
}

// Decide approves or denies the pending command on behalf of the person by,
// and returns it so the caller can run it (after StartCommand) or report the
// denial. Denying is always allowed; approving is refused while a person has
// control, and the command stays held until the agent is resumed or the
// command is denied. Prefer DecideHeld when the caller knows which command
// the person saw.
func (s *Session) Decide(approve bool, by string, now time.Time) (PendingApproval, error) {
	return s.decide("", approve, by, now)
}

// DecideHeld is Decide for the held command with this approval id only: if
// the command held is another one (the one the person saw was decided and
// the agent submitted a new one), it is refused with ErrNoPendingApproval.
func (s *Session) DecideHeld(id string, approve bool, by string, now time.Time) (PendingApproval, error) {
	if id == "" {
		return PendingApproval{}, s.refuse(KindInvalid, "name the approval id of the command to decide")
	}
	return s.decide(id, approve, by, now)
}

func (s *Session) decide(id string, approve bool, by string, now time.Time) (PendingApproval, error) {
	if by == "" {
		return PendingApproval{}, s.refuse(KindInvalid, "a decision needs the person who makes it")
	}
	if s.Pending == nil {
		if id != "" {
			return PendingApproval{}, s.refuse(KindNoPendingApproval, "approval %s is not waiting: no command is waiting for approval", id)
		}
		return PendingApproval{}, s.refuse(KindNoPendingApproval, "no command is waiting for approval, so there is nothing to approve or deny")
	}
	if id != "" && id != s.Pending.ID {
		return PendingApproval{}, s.refuse(KindNoPendingApproval, "approval %s is no longer waiting; approval %s (%q) is, and needs its own decision", id, s.Pending.ID, s.Pending.Command)
	}
	if approve {
		if err := s.CheckExecute(); err != nil {
			return PendingApproval{}, err
		}
	}
	p := *s.Pending
	s.Pending = nil
	s.Touch(now)
	return p, nil
}

// Interrupt hands control to the person by: from AgentControl or AgentResume
// through UserInterrupt to UserControl, or finishes an interrupt already under
// way. From then on agent commands are refused. A held command stays held,
// for the person to deny (or to approve once the agent is resumed).
// Interrupting a session a person already controls is refused with
// ErrWrongState naming who holds it.
func (s *Session) Interrupt(by string, now time.Time) (Transition, error) {
	if by == "" {
		return Transition{}, s.refuse(KindInvalid, "an interrupt needs the person taking control")
	}
	switch s.State {
	case AgentControl, AgentResume, UserInterrupt:
	case UserControl:
		return Transition{}, s.refuse(KindWrongState, "%s already; resume the agent first to hand control back", s.holder())
	default:
		return Transition{}, s.refuse(KindWrongState, "the session is in no known state (%s) and cannot be interrupted; delete it", s.State)
	}
	t := s.handOver(UserInterrupt, UserControl, now)
	s.InterruptedBy, s.InterruptedAt = by, now
	return t, nil
}

// Resume hands control back to the agent: from UserControl or UserInterrupt
// through AgentResume to AgentControl, or finishes a resume already under
// way. Resuming a session the agent already controls is refused with
// ErrWrongState.
func (s *Session) Resume(now time.Time) (Transition, error) {
	switch s.State {
	case UserControl, UserInterrupt, AgentResume:
	case AgentControl:
		return Transition{}, s.refuse(KindWrongState, "the agent already has control; there is nothing to resume")
	default:
		return Transition{}, s.refuse(KindWrongState, "the session is in no known state (%s) and cannot be resumed; delete it", s.State)
	}
	t := s.handOver(AgentResume, AgentControl, now)
	s.InterruptedBy, s.InterruptedAt = "", time.Time{}
	return t, nil
}

// handOver moves the session to target, noting approach as the state passed
// through unless the session was already in it.
func (s *Session) handOver(approach, target State, now time.Time) Transition {
	t := Transition{From: s.State, To: target, At: now}
	if s.State != approach {
		t.Via = approach
	}
	s.State = target
	s.Touch(now)
	return t
}

// Touch marks activity at now. LastActivity never moves backwards, so calls
// that arrive out of order cannot make a busy session look idle.
func (s *Session) Touch(now time.Time) {
	if now.After(s.LastActivity) {
		s.LastActivity = now
	}
}

// Expired reports whether the session has been idle for idle or longer at
// now. An idle of zero or less means sessions never expire. A pending
// approval does not keep a session alive: the caller drops it with the
// session (and audits the drop).
func (s *Session) Expired(now time.Time, idle time.Duration) bool {
	if idle <= 0 {
		return false
	}
	return !now.Before(s.LastActivity.Add(idle))
}

// holder says who has control, for messages.
func (s *Session) holder() string {
	who := s.InterruptedBy
	if who == "" {
		who = "a person"
	}
	if s.State == UserInterrupt {
		who += " is taking control"
	} else {
		who += " has control"
	}
	if !s.InterruptedAt.IsZero() {
		who += " since " + s.InterruptedAt.UTC().Format(time.RFC3339)
	}
	return who
}
