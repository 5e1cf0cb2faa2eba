package terminals

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/domain/terminal"
)

// DispatchAction applies a client's action, or echoes it back to its
// sender alone with the reason it was refused (D7, D17 in
// docs/protocol.md): every dispatch is answered one way or the other.
type DispatchAction struct{ c *appCore }

// DispatchRequest is one dispatched action, as the adapter read it.
type DispatchRequest struct {
	// Viewer is the sender's: refusals and echoes go to it alone.
	Viewer *Viewer
	// Channel is the channel dispatched to, the root's spellings folded
	// into RootChannel.
	Channel string
	// Type is the action's type as sent.
	Type string
	// Action is the action decoded; nil when it could not be, and Invalid
	// says why.
	Action  terminal.Action
	Invalid string
	// Echo is the action as it was sent, echoed back with a refusal.
	Echo terminal.Action
	// Fields lists the action's fields besides its type, for the refusal
	// of a type that names nothing on the channel.
	Fields string
	Origin *Origin
	// Repeat says this client had this very dispatch applied already
	// (D18): it is answered as applied, and applied no second time.
	Repeat bool
}

// Handle needs what dispatchable says for the action's type, and reports
// whether the action was applied (a refusal, or a repeat, is not).
// Accepted typed input is echoed to its sender alone, every other accepted
// action to every subscriber of the channel; on the root, the action (a
// connection's own setting, which the adapter keeps) is only numbered and
// announced.
func (h DispatchAction) Handle(_ context.Context, who Caller, req DispatchRequest) bool {
	if reason := h.c.refusal(who, req.Channel, req.Type); reason != "" {
		h.Refuse(req.Viewer, req.Channel, req.Echo, req.Origin, reason)
		return false
	}
	if req.Channel == RootChannel {
		return h.root(req)
	}
	if terminal.HostOnly(req.Type) {
		h.Refuse(req.Viewer, req.Channel, req.Echo, req.Origin, fmt.Sprintf("%s is this host's to say, not a client's", req.Type))
		return false
	}
	if _, err := h.c.host.Get(req.Channel); err != nil {
		h.Refuse(req.Viewer, req.Channel, req.Echo, req.Origin, fmt.Sprintf("%s names nothing here (%s)", req.Type, req.Fields))
		return false
	}
	if _, ok := dispatchable[req.Type]; !ok || !strings.HasPrefix(req.Type, "terminal/") {
		h.Refuse(req.Viewer, req.Channel, req.Echo, req.Origin, fmt.Sprintf("%s is not served on a terminal", req.Type))
		return false
	}
	if req.Action == nil {
		h.Refuse(req.Viewer, req.Channel, req.Echo, req.Origin, req.Invalid)
		return false
	}
	if req.Repeat {
		h.echo(req.Viewer, req.Channel, req.Action, req.Origin)
		return false
	}
	if err := h.c.host.Apply(Dispatch{URI: req.Channel, Action: req.Action, Origin: req.Origin}); err != nil {
		h.Refuse(req.Viewer, req.Channel, req.Echo, req.Origin, dispatchReason(req.Type, err))
		return false
	}
	return true
}

// root serves the root channel's one client action.
func (h DispatchAction) root(req DispatchRequest) bool {
	switch {
	case req.Type != RootConfigChanged && hostOnlyRoot[req.Type]:
		h.Refuse(req.Viewer, RootChannel, req.Echo, req.Origin, fmt.Sprintf("%s is this host's to say, not a client's", req.Type))
		return false
	case req.Type != RootConfigChanged:
		h.Refuse(req.Viewer, RootChannel, req.Echo, req.Origin, fmt.Sprintf("%s is not one this host serves", req.Type))
		return false
	case req.Action == nil:
		h.Refuse(req.Viewer, RootChannel, req.Echo, req.Origin, req.Invalid)
		return false
	case req.Repeat:
		h.echo(req.Viewer, RootChannel, req.Echo, req.Origin)
		return false
	}
	h.c.host.hub.Update(func(tx hub.Tx) { tx.Publish(RootChannel, req.Action, req.Origin, "") })
	return true
}

// Refuse echoes a dispatch back to its sender alone with the reason it was
// refused: for what the adapter could not read at all, before any use
// case could judge it. The echo is numbered like every envelope and kept
// for the sender's replay (D17).
func (h DispatchAction) Refuse(v *Viewer, channel string, a terminal.Action, origin *Origin, reason string) {
	h.c.host.hub.Update(func(tx hub.Tx) { tx.Reject(v, channel, a, origin, reason) })
}

// echo answers a repeat as applied, to its sender alone.
func (h DispatchAction) echo(v *Viewer, channel string, a terminal.Action, origin *Origin) {
	h.c.host.hub.Update(func(tx hub.Tx) { tx.Echo(v, channel, a, origin, "") })
}

func dispatchReason(typ string, err error) string {
	if errors.Is(err, ErrNotFound) {
		return fmt.Sprintf("%s names nothing here", typ)
	}
	if errors.Is(err, terminal.ErrNotAClaim) {
		return "That is not a terminal claim"
	}
	return fmt.Sprintf("%s could not be applied: %v", typ, err)
}
