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
