package terminal

import "errors"

// ClaimKind says who holds a terminal.
type ClaimKind string

// The two kinds of claim the protocol knows.
const (
	// ClaimClient is a connection driving the terminal directly.
	ClaimClient ClaimKind = "client"
	// ClaimSession is an agent session (and the chat inside it) using it.
	ClaimSession ClaimKind = "session"
)

// ErrNotAClaim is returned for a claim that is neither kind or misses a field.
var ErrNotAClaim = errors.New("That is not a terminal claim")

// Claim is who holds a terminal. Every terminal always has one.
type Claim struct {
	Kind ClaimKind
	// ClientID is set for a client claim.
	ClientID string
	// Session and Chat are set for a session claim; TurnID and ToolCallID
	// while a tool call is using the terminal.
	Session, Chat, TurnID, ToolCallID string
	// Person is, for a client claim, the principal its client id was
	// bound to when it claimed ("" for an anonymous client): whom a list
	// names as the holder, since a client id means nothing to a person.
	// It is the host's own note, not part of the protocol's claim.
	Person string
}

// ClientHolds is a claim held by the connection introduced as clientID.
func ClientHolds(clientID string) Claim { return Claim{Kind: ClaimClient, ClientID: clientID} }

// Validate reports whether the claim is one of the two kinds, complete.
func (c Claim) Validate() error {
	switch c.Kind {
	case ClaimClient:
		if c.ClientID == "" {
			return ErrNotAClaim
		}
		if c.Session != "" || c.Chat != "" || c.TurnID != "" || c.ToolCallID != "" {
			return ErrNotAClaim
		}
	case ClaimSession:
		if c.Session == "" || c.Chat == "" || c.ClientID != "" {
			return ErrNotAClaim
		}
	default:
		return ErrNotAClaim
	}
	return nil
}
