// Package gate decides whether a caller may do an operation
// (domain/access), from the caller's grants as the users file says now.
// It knows no protocol: each terminal use case (app/terminals) asks it by
// operation, inside, before it does anything, and says beside itself which
// operation it needs.
package gate

import (
	"errors"
	"fmt"

	"github.com/shellgate/shellgate/domain/access"
	"github.com/shellgate/shellgate/ports"
)

// RootChannel is the channel every caller may read.
const RootChannel = "ahp-root://"

// ErrSignIn refuses a caller who is not signed in (or whose record has been
// removed since).
var ErrSignIn = errors.New("Sign in to use this host")

// need is what a use case requires.
type need struct {
	// signIn needs a signed-in caller and no grant.
	signIn bool
	// op is the operation needed unless signIn.
	op access.Operation
}

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

// builtinRoles is nobody's table, made once: a table is never changed.
var builtinRoles = access.NewRoles()

// nobody is a users directory with no one in it.
type nobody struct{}

func (nobody) Lookup(string) (access.Principal, bool)    { return access.Principal{}, false }
func (nobody) Principal(string) (access.Principal, bool) { return access.Principal{}, false }
func (nobody) Roles() *access.Roles                      { return builtinRoles }
func (nobody) Generation() uint64                        { return 0 }

// principal returns the caller's current record; false when nobody.
func (g *Gate) principal(c Caller) (access.Principal, bool) {
	p, _, ok := g.lookup(c)
	return p, ok
}

// lookup returns the caller's current record and the roles table to judge
// it by, from one reading of the directory where the store offers it
// (ports.ReadPrincipal); false when nobody.
func (g *Gate) lookup(c Caller) (access.Principal, *access.Roles, bool) {
	if c.Root {
		return access.Principal{ID: "root", Root: true}, g.users.Roles(), true
	}
	if c.ID == "" {
		return access.Principal{}, nil, false
	}
	p, roles, ok := ports.ReadPrincipal(g.users, c.ID)
	if !ok || !p.Holds(c.Credential) {
		return access.Principal{}, nil, false
	}
	return p, roles, true
}

// check decides one need.
func (g *Gate) check(c Caller, n need) error {
	p, roles, ok := g.lookup(c)
	if !ok {
		if n.signIn {
			return ErrSignIn
		}
		return &SignInError{Op: n.op}
	}
	if n.signIn {
		return nil
	}
	return roles.Check(p, n.op)
}

// Allow decides whether the caller may do op now. It returns nil, a
// *SignInError (wrapping ErrSignIn) naming op for nobody, or an
// *access.DeniedError naming the missing grant.
func (g *Gate) Allow(c Caller, op access.Operation) error { return g.check(c, need{op: op}) }

// Present decides what needs a sign-in and no grant: nil for a caller
// signed in now, ErrSignIn otherwise.
func (g *Gate) Present(c Caller) error { return g.check(c, need{signIn: true}) }

// SignInError refuses nobody an operation; it names what was needed.
type SignInError struct{ Op access.Operation }

func (e *SignInError) Error() string { return fmt.Sprintf("Sign in to use this host: needs %s", e.Op) }

// Unwrap makes every SignInError an ErrSignIn.
func (e *SignInError) Unwrap() error { return ErrSignIn }

// Read decides whether the caller may read a channel: the root needs
// nothing; a terminal needs terminal:output.
func (g *Gate) Read(c Caller, channel string) error {
	if channel == RootChannel {
		return nil
	}
	return g.Allow(c, access.TerminalOutput)
}

// SeesNames reports whether the caller may see who holds terminals by
// their principal's name: those who may read terminals' output. A guest,
// who sees the root list only, sees client ids.
func (g *Gate) SeesNames(c Caller) bool {
	return g.Allow(c, access.TerminalOutput) == nil
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
	p, roles, ok := g.lookup(c)
	if !ok {
		return false
	}
	_, missing := roles.Missing(p, access.Operations()...)
	return !missing
}

// Grants lists the operations of the host's catalogue the caller may do
// now, in catalogue order, so a client can leave out what it may not use
// instead of trying and reading the refusal. Nobody (and a revoked
// sign-in) may do none of them.
func (g *Gate) Grants(c Caller) []access.Operation {
	p, roles, ok := g.lookup(c)
	if !ok {
		return []access.Operation{}
	}
	out := []access.Operation{}
	for _, op := range access.Operations() {
		if roles.Allows(p, op) {
			out = append(out, op)
		}
	}
	return out
}
