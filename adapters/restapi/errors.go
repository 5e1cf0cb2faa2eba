package restapi

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/shellgate/shellgate/app/agents"
	"github.com/shellgate/shellgate/domain/access"
	"github.com/shellgate/shellgate/domain/agentsession"
	"github.com/shellgate/shellgate/domain/policy"
)

// The adapter's own refusals: what goes wrong before a use case is asked.
var (
	errMalformed       = errors.New("malformed request")
	errUnauthenticated = errors.New("not signed in")
	errTooLarge        = errors.New("request body too large")
	errNoRoute         = errors.New("no such endpoint")
)

// requestError is one of the adapter's refusals with its message.
type requestError struct {
	kind error
	msg  string
}

func (e *requestError) Error() string { return e.msg }
func (e *requestError) Unwrap() error { return e.kind }

func malformed(format string, args ...any) error {
	return &requestError{kind: errMalformed, msg: fmt.Sprintf(format, args...)}
}

// wireError is how one kind of error is answered.
type wireError struct {
	match  func(error) bool
	status int
	code   string
	// public replaces the error's own text when that may name things the
	// client has no business seeing (files, internals); the full error goes
	// to the daemon's log instead.
	public string
}

// errorTable is the one place errors become HTTP: the first row whose match
// holds answers. Seed 002's codes come first; the rest are shellgate's.
var errorTable = []wireError{
	{match: is(policy.ErrUnknownRole), status: http.StatusBadRequest, code: "invalid_agent_role"},
	{match: is(agents.ErrSessionNotFound), status: http.StatusNotFound, code: "session_not_found"},
	{match: kind(agentsession.KindUserHasControl), status: http.StatusForbidden, code: "user_has_control"},
	{match: as[*policy.BlockedError], status: http.StatusForbidden, code: "insufficient_permissions"},
	{match: as[*access.DeniedError], status: http.StatusForbidden, code: "insufficient_permissions"},
	{match: is(agents.ErrRoleCeiling), status: http.StatusForbidden, code: "insufficient_permissions"},
	{match: is(agents.ErrOwnApproval), status: http.StatusForbidden, code: "insufficient_permissions"},
	{match: is(agents.ErrAudit), status: http.StatusInternalServerError, code: "audit_error",
		public: "the audit log could not record this request, so it was refused (or, for a command that already ran, its result is withheld); the daemon's log says why"},
	{match: is(agents.ErrAtCapacity), status: http.StatusServiceUnavailable, code: "at_capacity"},
	{match: is(agents.ErrExecution), status: http.StatusInternalServerError, code: "execution_error"},

	{match: is(errUnauthenticated), status: http.StatusUnauthorized, code: "unauthorized"},
	{match: is(errMalformed), status: http.StatusBadRequest, code: "invalid_request"},
	{match: is(errTooLarge), status: http.StatusRequestEntityTooLarge, code: "request_too_large"},
	{match: is(errNoRoute), status: http.StatusNotFound, code: "not_found"},
	{match: is(agents.ErrInvalid), status: http.StatusBadRequest, code: "invalid_request"},
	{match: kind(agentsession.KindInvalid), status: http.StatusBadRequest, code: "invalid_request"},
	{match: is(agents.ErrUnknownHost), status: http.StatusBadRequest, code: "invalid_host"},
	{match: is(agents.ErrInvalidWorkspace), status: http.StatusBadRequest, code: "invalid_workspace"},
	{match: is(agents.ErrCommandNotFound), status: http.StatusNotFound, code: "command_not_found"},
	{match: kind(agentsession.KindApprovalPending), status: http.StatusConflict, code: "approval_pending"},
	{match: kind(agentsession.KindNoPendingApproval), status: http.StatusConflict, code: "no_pending_approval"},
	{match: kind(agentsession.KindWrongState), status: http.StatusConflict, code: "invalid_state"},
	{match: is(agents.ErrTooManySessions), status: http.StatusTooManyRequests, code: "too_many_sessions"},
	{match: is(agents.ErrTooManyAgentSessions), status: http.StatusTooManyRequests, code: "too_many_agent_sessions"},
	{match: is(agents.ErrTooManyCommands), status: http.StatusTooManyRequests, code: "too_many_commands"},
	{match: is(agents.ErrClosing), status: http.StatusServiceUnavailable, code: "unavailable"},
}

// internalError answers anything the table does not know.
var internalError = wireError{
	status: http.StatusInternalServerError, code: "internal_error",
	public: "the request failed inside shellgate; the daemon's log says why",
}

// lookup finds how err is answered.
func lookup(err error) wireError {
	for _, w := range errorTable {
		if w.match(err) {
			return w
		}
	}
	return internalError
}

func is(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

func kind(k agentsession.ErrorKind) func(error) bool {
	return func(err error) bool { return agentsession.KindOf(err) == k }
}

func as[T error](err error) bool {
	var t T
	return errors.As(err, &t)
}
