package access

import (
	"fmt"
	"strings"
)

// Grant is permission for one operation, a group of a subject's operations,
// or everything under a wildcard: `terminal:input`, `terminal:write`,
// `terminal:*`, `*:read`, `*:*`.
type Grant struct {
	// Subject is a subject name or "*".
	Subject string
	// Op is an operation name, "read", "write" or "*".
	Op string
}

// String is the grant as written in a roles file; ParseGrant reads it back.
func (g Grant) String() string { return g.Subject + ":" + g.Op }

// GrantError says why a string is not a grant.
type GrantError struct {
	// Grant is the text that was refused, shortened for messages (see quoted).
	Grant string
	// Reason says what is wrong and, where it can, what to write instead.
	Reason string
}

// Error says which grant is refused and why.
func (e *GrantError) Error() string { return e.Grant + " " + e.Reason }

// ParseGrant reads `<subject>:<operation>`. It refuses a missing part, more
// than one colon, a subject that is not a lower-case scheme name, the group
// names used as a subject (`read:computer`, generation 1), and an operation
// the subject does not have. An unknown subject is kept with the file
// subject's operations under its own name (`computer:get` parses,
// `computer:create` does not). With a `*` subject the operation must be a
// group, `*`, or an operation some subject has.
//
// The input is taken exactly: no trimming and no case folding, so a parsed
// grant's String() is the input itself.
func ParseGrant(s string) (Grant, error) {
	subj, op, ok := strings.Cut(s, ":")
	if !ok || subj == "" || op == "" || strings.Contains(op, ":") {
		return Grant{}, grantError(s, "is not <subject>:<operation>, e.g. terminal:read")
	}
	if subj == GroupRead || subj == GroupWrite {
		return Grant{}, grantError(s, fmt.Sprintf("names a group as its subject; write <subject>:%s, e.g. *:%s", subj, subj))
	}
	g := Grant{Subject: subj, Op: op}
	if subj == Wildcard {
		if isGroupOrWildcard(op) || knownOperationName(op) {
			return g, nil
		}
		return Grant{}, grantError(s, "names an operation no subject has")
	}
	if !validSubjectName(subj) {
		return Grant{}, grantError(s, "has a subject that is not a lower-case name such as terminal")
	}
	if isGroupOrWildcard(op) {
		return g, nil
	}
	if !subjectNamed(subj).Has(op) {
		return Grant{}, grantError(s, fmt.Sprintf("names an operation %s does not have", subj))
	}
	return g, nil
}

// MustParseGrant is ParseGrant for grants written in code; it panics on a
// bad one, which is a programming error.
func MustParseGrant(s string) Grant {
	g, err := ParseGrant(s)
	if err != nil {
		panic(err)
	}
	return g
}

// Covers reports whether holding the grant permits op. An operation that is
// not Valid is covered by nothing.
//
// A session grant on a group or `*` also covers the same group of chat
// operations, because in ahpd a chat lives inside a session (D1).
func (g Grant) Covers(op Operation) bool {
	if !op.Valid() {
		return false
	}
	subj, name := op.Subject(), op.Name()
	switch {
	case g.Subject == Wildcard || g.Subject == subj:
	case g.Subject == "session" && subj == "chat" && isGroupOrWildcard(g.Op):
	default:
		return false
	}
	switch g.Op {
	case Wildcard:
		return true
	case GroupRead:
		return contains(subjectNamed(subj).Read, name)
	case GroupWrite:
		return contains(subjectNamed(subj).Write, name)
	default:
		return g.Op == name
	}
}

// grantError builds the refusal. The text is echoed only when it looks like
// a grant: a roles file is hand-edited next to token hashes, and a pasted
// secret must not end up in a log line. Tokens carry an underscore (sg_) and
// hashes are longer than the limit, so neither is ever echoed.
func grantError(s, reason string) *GrantError {
	return &GrantError{Grant: quoted(s), Reason: reason}
}

func quoted(s string) string {
	const maxEcho = 40
	if len(s) > maxEcho {
		return "a grant"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(":*+-.", c) >= 0) {
			return "a grant"
		}
	}
	return `"` + s + `"`
}
