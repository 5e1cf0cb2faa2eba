package terminals

import (
	"context"

	"github.com/shellgate/shellgate/domain/access"
)

// OpenTerminal starts a terminal.
type OpenTerminal struct{ c *appCore }

// OpenRequest says what to open.
type OpenRequest struct {
	// Spec is the terminal; its Owner and Reserve are the use case's to
	// set, from the caller.
	Spec Spec
	// Invalid, when set, is why the adapter could not read the request. It
	// is returned once the caller is found allowed, so nobody learns what
	// the host would take before they may ask.
	Invalid error
}

// Handle needs terminal:create. The terminal counts against the caller's
// max_terminals_per_person, unless the caller may use the admins' reserve
// (gate.Reserved), who may also use the last open files.
func (h OpenTerminal) Handle(ctx context.Context, who Caller, req OpenRequest) error {
	if err := h.c.gate.Allow(who, access.TerminalCreate); err != nil {
		return err
	}
	if req.Invalid != nil {
		return req.Invalid
	}
	spec := req.Spec
	spec.Owner, spec.Reserve = who.ID, h.c.gate.Reserved(who)
	_, err := h.c.host.Create(ctx, spec)
	return err
}
