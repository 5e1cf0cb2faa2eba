package userstore

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"time"
)

// TokenPrefix starts every token the store mints, so a leaked one is easy
// to recognise (and to scan for) as a shellgate credential.
const TokenPrefix = "sg_"

// tokenBytes is the token's entropy: 256 bits, so a fast hash is enough to
// store it (there is nothing to brute-force the way there is for a password).
const tokenBytes = 32

// NewToken mints a secret: "sg_" and 32 random bytes in unpadded base64url.
func NewToken() (string, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// HashToken is the form a token is stored in: "sha256:<hex>".
func HashToken(token string) string {
	return formatDigest(sha256.Sum256([]byte(token)))
}

// match returns the index of the record whose token (its own, or a link
// not expired at now) the token is, or -1, and the digest that matched.
// Every digest is compared and the answer is selected without branching
// on it, so the time taken says nothing about which record, if any,
// matched.
func match(users []record, token string, now time.Time) (int, [sha256.Size]byte) {
	want := sha256.Sum256([]byte(token))
	found := -1
	var which [sha256.Size]byte
	for i := range users {
		eq := subtle.ConstantTimeCompare(users[i].digest[:], want[:])
		found = subtle.ConstantTimeSelect(eq, i, found)
		for _, l := range users[i].links {
			live := 0
			if now.Before(l.expires) {
				live = 1
			}
			eq := subtle.ConstantTimeCompare(l.digest[:], want[:]) & live
			found = subtle.ConstantTimeSelect(eq, i, found)
		}
	}
	if found >= 0 {
		which = want
	}
	return found, which
}
