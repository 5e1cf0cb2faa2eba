package terminals

import (
	"errors"
	"fmt"
	"sort"

	"github.com/shellgate/shellgate/app/gate"
	"github.com/shellgate/shellgate/domain/access"
	"github.com/shellgate/shellgate/domain/terminal"
)

// Which use case needs which operation:
//
//	OpenTerminal     terminal:create
//	DisposeTerminal  terminal:dispose
//	Subscribe        terminal:output for a terminal; nothing for the root list
//	Resume           as Subscribe, per channel
//	Unsubscribe      nothing: a viewer may always stop
//	FeedInput        terminal:input
//	ListTerminals    a sign-in, no grant (the root list)
//	ReadTerminal     terminal:output
//	DispatchAction   by the action's type, as dispatchable says

// RootConfigChanged is the one action a client may dispatch on the root
// channel: a setting of its own connection (its defaultShell), which the
// host numbers and announces.
const RootConfigChanged = "root/configChanged"

// need is what dispatching one action type requires.
type need struct {
	// signIn needs a signed-in caller and no grant.
	signIn bool
	op     access.Operation
}

// dispatchable is every action type a client may dispatch, with what it
// needs: the one list of them. An inbound adapter decodes each of these
// and no other (its own table is checked against Dispatchable).
var dispatchable = map[string]need{
	terminal.TypeInput:        {op: access.TerminalInput},
	terminal.TypeResized:      {op: access.TerminalResize},
	terminal.TypeClaimed:      {op: access.TerminalClaim},
	terminal.TypeTitleChanged: {op: access.TerminalRename},
	terminal.TypeCleared:      {op: access.TerminalClear},
	// Only the per-connection defaultShell is served: a sign-in, no grant.
	RootConfigChanged: {signIn: true},
}

// hostOnlyRoot are the root channel's action types only the host says.
var hostOnlyRoot = map[string]bool{
	"root/terminalsChanged": true, "root/agentsChanged": true, "root/activeSessionsChanged": true,
}

// Dispatchable lists every action type a client may dispatch, sorted.
func Dispatchable() []string {
	out := make([]string, 0, len(dispatchable))
	for typ := range dispatchable {
		out = append(out, typ)
	}
	sort.Strings(out)
	return out
}

// DispatchOperation is the operation dispatching typ needs; false for a
// type that needs a sign-in only, or is not dispatchable at all.
func DispatchOperation(typ string) (access.Operation, bool) {
	n, ok := dispatchable[typ]
	return n.op, ok && !n.signIn
}

// refusal decides a dispatch of typ on channel and words a refusal as the
// rejectionReason the dispatcher is sent (D7, D17 in docs/protocol.md): ""
// means allowed. A type that is not dispatchable needs the channel's read
// grant here; it is refused afterwards for what it is.
func (c *appCore) refusal(who Caller, channel, typ string) string {
	n, ok := dispatchable[typ]
	if !ok {
		n = need{op: access.TerminalOutput}
	}
	var err error
	if n.signIn {
		err = c.gate.Present(who)
	} else {
		err = c.gate.Allow(who, n.op)
	}
	var denied *access.DeniedError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, gate.ErrSignIn) && n.signIn:
		return fmt.Sprintf("Sign in to use this host: %s", channel)
	case errors.Is(err, gate.ErrSignIn):
		return fmt.Sprintf("Sign in to use this host: %s needs %s", channel, n.op)
	case errors.As(err, &denied):
		return denied.Error()
	}
	return err.Error()
}
