// Package gate decides, in one place and before anything happens, whether a
// caller may run a protocol command or dispatch an action: every command and
// every client-dispatchable action is classified to the operation it needs,
// and the answer comes from the caller's grants (domain/access) as the users
// file says now.
package gate

import (
	"errors"
	"fmt"

	"github.com/shellgate/shellgate/domain/access"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

// RootChannel is the channel every caller may read.
const RootChannel = "ahp-root://"

// ErrSignIn refuses a caller who is not signed in (or whose record has been
// removed since).
var ErrSignIn = errors.New("Sign in to use this host")

// ErrUnclassified refuses a method nothing classified: served to nobody.
var ErrUnclassified = errors.New("classified nowhere")

// Need is what a command or action requires.
type Need struct {
	// Ungated needs nothing at all (not even a sign-in).
	Ungated bool
	// SignIn needs a signed-in caller and no grant.
	SignIn bool
	// Op is the operation needed when neither of the above.
	Op access.Operation
}

// commands classifies every protocol method (reference b.4). subscribe is
// classified by its channel; dispatchAction per action.
var commands = map[string]Need{
	"initialize":      {Ungated: true},
	"reconnect":       {Ungated: true},
	"ping":            {Ungated: true},
	"authenticate":    {Ungated: true},
	"unsubscribe":     {Ungated: true},
	"dispatchAction":  {Ungated: true}, // judged per action
	"subscribe":       {Ungated: true}, // judged per channel
	"createTerminal":  {Op: access.TerminalCreate},
	"disposeTerminal": {Op: access.TerminalDispose},
	// shellgate's own: bytes fed to a terminal's input, and its end.
	"x-shellgate/input": {Op: access.TerminalInput},
}

// actions classifies every client-dispatchable action (reference b.5).
var actions = map[string]Need{
	terminal.TypeInput:        {Op: access.TerminalInput},
	terminal.TypeResized:      {Op: access.TerminalResize},
	terminal.TypeClaimed:      {Op: access.TerminalClaim},
	terminal.TypeTitleChanged: {Op: access.TerminalRename},
	terminal.TypeCleared:      {Op: access.TerminalClear},
	// Only the per-connection defaultShell is served: a sign-in, no grant.
	"root/configChanged": {SignIn: true},
}

// Classified reports whether method has a classification.
func Classified(method string) bool { _, ok := commands[method]; return ok }

// ClassifiedAction reports whether an action type has a classification.
func ClassifiedAction(typ string) bool { _, ok := actions[typ]; return ok }

// Caller is who is asking: a principal id, or nobody.
type Caller struct {
	// ID is the signed-in principal's id; empty for nobody.
	ID string
	// Root is the daemon's own in-process caller: every grant.
	Root bool
	// Credential is the signed-in token's name in the directory
	// (access.Principal.Credential): once the token is rotated or removed
	// the caller is nobody, even if its id is still listed.
	Credential string
}

// SignedIn reports whether the caller has a principal.
func (c Caller) SignedIn() bool { return c.Root || c.ID != "" }

// Gate answers for callers against the users directory.
type Gate struct {
	users    ports.UserStore
	allowAll bool
}

// New returns a gate over the users directory.
func New(users ports.UserStore) *Gate { return &Gate{users: users} }

// AllowAll returns the gate of an embedder that does no access control in
// the protocol at all: every connection is the daemon's own caller, with
// every grant, from its first frame. It is never a default: a server
// given no gate lets nobody in, so serving everyone is something the
// embedder writes, where a review sees it.
func AllowAll() *Gate { return &Gate{users: nobody{}, allowAll: true} }

// Nobody returns a gate that knows no one: nobody signs in.
func Nobody() *Gate { return New(nobody{}) }

// AllowsAll reports whether this is AllowAll's gate: every connection is
// the daemon's own caller.
func (g *Gate) AllowsAll() bool { return g.allowAll }

// nobody is a users directory with no one in it.
type nobody struct{}

func (nobody) Lookup(string) (access.Principal, bool)    { return access.Principal{}, false }
func (nobody) Principal(string) (access.Principal, bool) { return access.Principal{}, false }
func (nobody) Roles() *access.Roles                      { return access.NewRoles() }
func (nobody) Generation() uint64                        { return 0 }

// principal returns the caller's current record; false when nobody.
func (g *Gate) principal(c Caller) (access.Principal, bool) {
	if c.Root {
		return access.Principal{ID: "root", Root: true}, true
	}
	if c.ID == "" {
		return access.Principal{}, false
	}
	p, ok := g.users.Principal(c.ID)
	if !ok || !p.Holds(c.Credential) {
		return access.Principal{}, false
	}
	return p, true
}

// check decides one need.
func (g *Gate) check(c Caller, need Need) error {
	if need.Ungated {
		return nil
	}
	p, ok := g.principal(c)
	if !ok {
		if need.SignIn {
			return ErrSignIn
		}
		return &SignInError{Op: need.Op}
	}
	if need.SignIn {
		return nil
	}
	return g.users.Roles().Check(p, need.Op)
}

// SignInError refuses nobody an operation; it names what was needed.
type SignInError struct{ Op access.Operation }

func (e *SignInError) Error() string { return fmt.Sprintf("Sign in to use this host: needs %s", e.Op) }

// Unwrap makes every SignInError an ErrSignIn.
func (e *SignInError) Unwrap() error { return ErrSignIn }

// Command decides a protocol command. It returns nil, an error wrapping
// ErrSignIn, an *access.DeniedError, or ErrUnclassified.
func (g *Gate) Command(c Caller, method string) error {
	need, ok := commands[method]
	if !ok {
		return fmt.Errorf("This host has classified %s nowhere, so it serves it to nobody: %w", method, ErrUnclassified)
	}
	return g.check(c, need)
}

// Read decides whether the caller may read a channel: the root needs
// nothing; a terminal needs terminal:output.
func (g *Gate) Read(c Caller, channel string) error {
	if channel == RootChannel {
		return nil
	}
	return g.check(c, Need{Op: access.TerminalOutput})
}

// SeesNames reports whether the caller may see who holds terminals by
// their principal's name: those who may read terminals' output. A guest,
// who sees the root list only, sees client ids.
func (g *Gate) SeesNames(c Caller) bool {
	return g.check(c, Need{Op: access.TerminalOutput}) == nil
}

// Dispatch decides a dispatched action and words a refusal as the
// rejectionReason the dispatcher is sent (D7, D17 in docs/protocol.md): "" means allowed. An action
// type without a classification needs the channel's read grant here; the
// router refuses it afterwards for what it is.
func (g *Gate) Dispatch(c Caller, channel, typ string) string {
	need, ok := actions[typ]
	if !ok {
		need = Need{Op: access.TerminalOutput}
	}
	err := g.check(c, need)
	var denied *access.DeniedError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrSignIn) && need.SignIn:
		return fmt.Sprintf("Sign in to use this host: %s", channel)
	case errors.Is(err, ErrSignIn):
		return fmt.Sprintf("Sign in to use this host: %s needs %s", channel, need.Op)
	case errors.As(err, &denied):
		return denied.Error()
	}
	return err.Error()
}

// SignIn returns the caller a token signs in, or false for an unknown one.
func (g *Gate) SignIn(token string) (Caller, bool) {
	if token == "" {
		return Caller{}, false
	}
	p, ok := g.users.Lookup(token)
	if !ok {
		return Caller{}, false
	}
	return Caller{ID: p.ID, Root: p.Root, Credential: p.Credential}, true
}

// Known reports whether the caller is still in the directory, with the
// token it signed in with.
func (g *Gate) Known(c Caller) bool {
	_, ok := g.principal(c)
	return ok
}

// Generation is the users directory's: while it stays the same, every
// answer the gate gave stays true (ports.UserStore.Generation).
func (g *Gate) Generation() uint64 { return g.users.Generation() }

// Revoked reports whether a signed-in caller's sign-in no longer holds:
// its token was rotated or removed, or its principal was removed.
func (g *Gate) Revoked(c Caller) bool {
	return !c.Root && c.ID != "" && !g.Known(c)
}

// Reserved reports whether the caller may use what the host keeps back for
// its admins (the last connections, the last open files): the daemon's own
// caller, or a principal whose roles grant every operation, as the admin
// role's `*:*` does. A reserve is there so that whoever can repair the host
// can still get in when others have used up the rest.
func (g *Gate) Reserved(c Caller) bool {
	p, ok := g.principal(c)
	if !ok {
		return false
	}
	_, missing := g.users.Roles().Missing(p, access.Operations()...)
	return !missing
}

// Grants lists the operations of the host's catalogue the caller may do
// now, in catalogue order, so a client can leave out what it may not use
// instead of trying and reading the refusal. Nobody (and a revoked
// sign-in) may do none of them.
func (g *Gate) Grants(c Caller) []access.Operation {
	p, ok := g.principal(c)
	if !ok {
		return []access.Operation{}
	}
	roles := g.users.Roles()
	out := []access.Operation{}
	for _, op := range access.Operations() {
		if roles.Allows(p, op) {
			out = append(out, op)
		}
	}
	return out
}
