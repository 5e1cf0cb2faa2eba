// Package gatetest is a users store for tests: a fixed table of tokens and
// the roles they may name, changed by the test itself.
package gatetest

import "github.com/shellgate/shellgate/domain/access"

// Directory is a ports.UserStore over ByToken and RoleSet.
type Directory struct {
	// ByToken maps each token to the principal it signs in.
	ByToken map[string]access.Principal
	// RoleSet is what the principals' roles hold.
	RoleSet *access.Roles
}

// Lookup returns the principal a token signs in.
func (d *Directory) Lookup(tok string) (access.Principal, bool) {
	p, ok := d.ByToken[tok]
	return p, ok
}

// Principal returns the principal with this id.
func (d *Directory) Principal(id string) (access.Principal, bool) {
	for _, p := range d.ByToken {
		if p.ID == id {
			return p, true
		}
	}
	return access.Principal{}, false
}

// Roles returns RoleSet.
func (d *Directory) Roles() *access.Roles { return d.RoleSet }

// Generation is always 0: the tests change the table between checks.
func (d *Directory) Generation() uint64 { return 0 }
