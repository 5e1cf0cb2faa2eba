package terminals

import (
	"context"

	"github.com/shellgate/shellgate/domain/access"
	"github.com/shellgate/shellgate/domain/terminal"
)

// ListTerminals lists every terminal, oldest first: the root list.
type ListTerminals struct{ c *appCore }

// Handle needs a sign-in and no grant, as the root list does.
func (h ListTerminals) Handle(_ context.Context, who Caller) ([]Info, error) {
	if err := h.c.gate.Present(who); err != nil {
		return nil, err
	}
	return h.c.host.List(), nil
}

// ReadTerminal returns one terminal's state now: its scrollback,
// lifecycle and claim.
type ReadTerminal struct{ c *appCore }

// Handle needs terminal:output; a terminal that is not there is
// ErrNotFound.
func (h ReadTerminal) Handle(_ context.Context, who Caller, uri string) (terminal.Snapshot, error) {
	if err := h.c.gate.Allow(who, access.TerminalOutput); err != nil {
		return terminal.Snapshot{}, err
	}
	return h.c.host.Snapshot(uri)
}
