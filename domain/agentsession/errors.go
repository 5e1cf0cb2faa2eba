package agentsession

import (
	"errors"
	"fmt"
)

// ErrorKind says why the session refused, so each inbound adapter maps a kind
// to its wire answer (HTTP status and seed-002 error code, JSON-RPC code) in
// one table. The suggested REST mapping is given with each kind.
type ErrorKind uint8

// Error kinds. The zero value means "not an agentsession error".
const (
	// KindInvalid: the caller passed something unusable (no id, no person).
	// REST: 400 invalid_request.
	KindInvalid ErrorKind = iota + 1
	// KindUserHasControl: an agent command (or approving one) while a person
	// has control. REST: 403 user_has_control (seed 002).
	KindUserHasControl
	// KindApprovalPending: the session already holds a command for approval.
	// REST: 409 approval_pending.
	KindApprovalPending
	// KindNoPendingApproval: nothing (or not that command) is held for
	// approval. REST: 409 no_pending_approval.
	KindNoPendingApproval
	// KindWrongState: the hand-over asked for cannot happen from the current
	// state (interrupting a session a person already holds, resuming one the
	// agent already has). REST: 409 invalid_state.
	KindWrongState
)

var kindNames = [...]string{
	KindInvalid:           "invalid",
	KindUserHasControl:    "user_has_control",
	KindApprovalPending:   "approval_pending",
	KindNoPendingApproval: "no_pending_approval",
	KindWrongState:        "wrong_state",
}

// String names the kind for logs.
func (k ErrorKind) String() string {
	if k < KindInvalid || k > KindWrongState {
		return fmt.Sprintf("kind(%d)", uint8(k))
	}
	return kindNames[k]
}

// Error is every refusal this package returns. It matches the sentinel of
// its kind with errors.Is, and KindOf reads its kind through any wrapping.
type Error struct {
	// Kind classifies the refusal.
	Kind ErrorKind
	// SessionID is the session that refused; empty for a sentinel.
	SessionID string
	// State is the state the session was in when it refused.
	State State
	// msg says what was wrong and what to do instead.
	msg string
}

// Error says what was wrong and what to do instead.
func (e *Error) Error() string {
	if e.SessionID == "" {
		return e.msg
	}
	return "agent session " + e.SessionID + ": " + e.msg
}

// Is makes every Error match the sentinel of its kind, so callers can write
// errors.Is(err, ErrUserHasControl) without caring about the details.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind == e.Kind
}

// Sentinels, one per kind, for errors.Is.
var (
	// ErrInvalid matches refusals of unusable input.
	ErrInvalid = &Error{Kind: KindInvalid, msg: "invalid request"}
	// ErrUserHasControl matches agent commands refused because a person has control.
	ErrUserHasControl = &Error{Kind: KindUserHasControl, msg: "a person has control; agent commands are blocked"}
	// ErrApprovalPending matches a second command held while one is pending.
	ErrApprovalPending = &Error{Kind: KindApprovalPending, msg: "a command is already waiting for approval"}
	// ErrNoPendingApproval matches a decision with nothing (or not that command) held.
	ErrNoPendingApproval = &Error{Kind: KindNoPendingApproval, msg: "no command is waiting for approval"}
	// ErrWrongState matches a hand-over the current state does not allow.
	ErrWrongState = &Error{Kind: KindWrongState, msg: "not allowed in the session's current state"}
)

// KindOf returns the kind of the first Error in err's chain, or 0 when err
// is nil or did not come from this package.
func KindOf(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

func (s *Session) refuse(kind ErrorKind, format string, args ...any) *Error {
	return &Error{Kind: kind, SessionID: s.ID, State: s.State, msg: fmt.Sprintf(format, args...)}
}
