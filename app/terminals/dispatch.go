package terminals

import (
	"errors"

	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/domain/terminal"
)

// Dispatch is a client action on a terminal, already allowed by the gate.
type Dispatch struct {
	URI    string
	Action terminal.Action
	Origin *hub.Origin
}

// ErrNotDispatchable: the action is the host's to say, not a client's.
var ErrNotDispatchable = errors.New("is this host's to say, not a client's")

// ErrExited: input to a terminal whose process has ended reaches nothing,
// and the sender is told so rather than left waiting for an echo.
var ErrExited = errors.New("the process has exited, so the input reaches nothing")

// Apply performs a client's action: the side effect first, then the state
// change and its echo. Accepted input is echoed to its sender alone; every
// other accepted action to every subscriber. A title or claim change also
// updates the root list.
func (h *Host) Apply(d Dispatch) error {
	t, err := h.Get(d.URI)
	if err != nil {
		return err
	}
	audience := ""
	switch a := d.Action.(type) {
	case terminal.Input:
		// Whether the input reaches nothing is decided before it is
		// written: a process may read it and exit at once, and input it
		// read was taken, not refused.
		if t.exited() {
			return ErrExited
		}
		if err := t.Write(a.Data); err != nil {
			return err
		}
		if d.Origin != nil {
			audience = d.Origin.ClientID
		}
	case terminal.Resized:
		if a.Cols <= 0 {
			a.Cols = terminal.DefaultCols
		}
		if a.Rows <= 0 {
			a.Rows = terminal.DefaultRows
		}
		d.Action = a
		if p := t.process(); p != nil {
			_ = p.Resize(uint16(a.Cols), uint16(a.Rows))
		}
	case terminal.Claimed:
		if err := a.Claim.Validate(); err != nil {
			return err
		}
	case terminal.TitleChanged, terminal.Cleared:
	default:
		return ErrNotDispatchable
	}
	h.update(func(tx hub.Tx) {
		if t.removed {
			return
		}
		changed := t.state.Apply(d.Action)
		if r, ok := d.Action.(terminal.Resized); ok && t.screen != nil {
			t.screen.Resize(r.Cols, r.Rows)
		}
		switch d.Action.(type) {
		case terminal.TitleChanged:
			// The same title again changes nothing, but its sender still
			// gets its echo: every dispatch is answered.
			tx.Publish(d.URI, d.Action, d.Origin, "")
			if changed {
				h.publishList(tx)
			}
		case terminal.Claimed:
			tx.Publish(d.URI, d.Action, d.Origin, "")
			if changed {
				h.publishList(tx)
			}
		case terminal.Input:
			// Typed input is echoed to its sender alone (D8); input from the
			// host itself has nobody to confirm to.
			if audience == "" {
				return
			}
			tx.Publish(d.URI, d.Action, d.Origin, audience)
		default:
			tx.Publish(d.URI, d.Action, d.Origin, "")
		}
	})
	return nil
}
