package terminals

import (
	"context"

	"github.com/shellgate/shellgate/domain/access"
)

// DisposeTerminal ends a terminal's whole process group at once and
// removes it; its channel is gone.
type DisposeTerminal struct{ c *appCore }

// DisposeRequest names the terminal.
type DisposeRequest struct {
	URI string
	// Invalid is as OpenRequest's.
	Invalid error
}

// Handle needs terminal:dispose; a terminal that is not there is
// ErrNotFound.
func (h DisposeTerminal) Handle(_ context.Context, who Caller, req DisposeRequest) error {
	if err := h.c.gate.Allow(who, access.TerminalDispose); err != nil {
		return err
	}
	if req.Invalid != nil {
		return req.Invalid
	}
	return h.c.host.Dispose(req.URI)
}
