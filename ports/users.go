package ports

import "github.com/shellgate/shellgate/domain/access"

// UserStore is the directory of who may sign in (the users file, D6). Every
// call answers from the directory as it is now, so a person removed or a
// role changed takes effect on the very next call; a directory that cannot
// be read answers nobody and no roles (it fails closed).
type UserStore interface {
	// Lookup returns the principal whose token this is. The token is
	// compared by hash against every record, in constant time.
	Lookup(token string) (access.Principal, bool)
	// Principal returns the current record for a signed-in principal's id;
	// false means the person has been removed since signing in.
	Principal(id string) (access.Principal, bool)
	// Roles returns the current roles table (built-ins plus the directory's
	// own) to ask Allows of.
	Roles() *access.Roles
	// Generation changes whenever an answer above may have changed: the
	// directory was edited, became unreadable, or a sign-in link in it
	// expired. A caller that decided something from the directory keeps
	// the decision while the generation stays the same, and re-decides the
	// moment it moves; asking it is as cheap as one check of the file.
	Generation() uint64
}

// UserReading is what a UserStore may offer besides: a principal's record
// and the roles table from one reading of the directory. A check that
// needs both then judges the record by the roles of the same version of
// the file, and pays for one look at it instead of two (the gate makes
// several checks for each keystroke).
type UserReading interface {
	// PrincipalRoles is Principal and Roles together. The roles come even
	// when the principal does not (false).
	PrincipalRoles(id string) (access.Principal, *access.Roles, bool)
}

// ReadPrincipal is a principal's current record and the roles table to
// judge it by: from one reading of the directory where users offers it
// (UserReading), else from Principal and then Roles.
func ReadPrincipal(users UserStore, id string) (access.Principal, *access.Roles, bool) {
	if r, ok := users.(UserReading); ok {
		return r.PrincipalRoles(id)
	}
	p, ok := users.Principal(id)
	if !ok {
		return access.Principal{}, nil, false
	}
	return p, users.Roles(), true
}
