package ahp

import (
	"context"
	"time"

	"github.com/shellgate/shellgate/app/gate"
	"github.com/shellgate/shellgate/app/terminals"
)

// resourceRecord is the host's sign-in record (RFC 9728 names).
type resourceRecord struct {
	Resource      string `json:"resource"`
	ResourceName  string `json:"resource_name"`
	Documentation string `json:"resource_documentation,omitempty"`
	Required      bool   `json:"required"`
}

func (c *conn) record() resourceRecord {
	return resourceRecord{
		Resource:     c.srv.resource(),
		ResourceName: "shellgate users",
		Required:     !c.srv.gate.Known(c.who()),
	}
}

func (s *Server) resource() string {
	if s.opts.Resource != nil {
		return s.opts.Resource()
	}
	return "shellgate://users"
}

// bindClientID binds a client id to the principal that first uses it
// (anonymous included) and refuses it to every other principal, so nobody
// can take over, close or reset the clientSeq of another's client by
// naming its id, which the root list shows. It runs before introduce, so a
// refusal leaves the owner's connection and clientSeq as they were. Two
// anonymous clients are one principal: nothing tells them apart.
func (c *conn) bindClientID(clientID string) *Error {
	c.srv.mu.Lock()
	defer c.srv.mu.Unlock()
	me := c.who()
	rec := c.srv.clients[clientID]
	if rec == nil {
		c.srv.clients[clientID] = &clientRecord{person: me.ID}
		return nil
	}
	if me.Root || rec.person == me.ID {
		return nil
	}
	return clientIDTaken(clientID, me.ID)
}

// personOf is the principal clientID is bound to ("" for nobody, or an id
// this host does not know), for the claims it makes.
func (s *Server) personOf(clientID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec := s.clients[clientID]; rec != nil {
		return rec.person
	}
	return ""
}

// clientIDTaken is the refusal of a client id bound to another principal.
func clientIDTaken(clientID, me string) *Error {
	if me == "" {
		return errorf(CodeAlreadyExists, "%s belongs to a signed-in principal; sign in as its owner, or connect under a client id of your own", clientID)
	}
	return errorf(CodeAlreadyExists, "%s belongs to another principal here; connect under a client id of your own", clientID)
}

// authenticate signs the connection in, or out with an empty token (D5 in docs/protocol.md).
func (c *conn) authenticate(_ context.Context, m message) (any, *Error) {
	p, err := parseParams(m.Params)
	if err != nil {
		return nil, err
	}
	if p.has("channel") {
		ch, cerr := p.str("channel")
		if cerr != nil {
			return nil, cerr
		}
		if canonicalChannel(ch) != terminals.RootChannel {
			return nil, invalidParams("authenticate is answered on ahp-root://, not on %s", ch)
		}
	}
	resource, _ := p.optStr("resource")
	if resource != c.srv.resource() {
		if resource == "" {
			return nil, invalidParams("That is not a resource this host advertises; use %s", c.srv.resource())
		}
		return nil, invalidParams("%s is not a resource this host advertises; use %s", resource, c.srv.resource())
	}
	token, terr := p.str("token")
	if terr != nil {
		return nil, terr
	}
	var expiresIn int64
	if p.has("expiresIn") {
		n, ok := p.optInt("expiresIn")
		if !ok || n <= 0 {
			return nil, invalidParams("expiresIn must be a positive integer of seconds")
		}
		expiresIn = n
	}
	if c.who().Root {
		return map[string]any{}, nil
	}
	if token == "" {
		c.setCaller(gate.Caller{}, 0)
		return map[string]any{"_meta": c.grantsMeta()}, nil
	}
	caller, ok := c.srv.gate.SignIn(token)
	if !ok {
		return nil, &Error{Code: CodeAuthRequired, Message: "That credential is not one this host knows",
			Data: map[string]any{"resources": []resourceRecord{c.record()}}}
	}
	if c.initialized {
		// The connection holding an id bound to nobody in particular
		// (anonymous) signs it in: the id is now the signed-in principal's.
		// An id bound to someone else stays theirs.
		c.srv.mu.Lock()
		rec := c.srv.clients[c.clientID]
		other := rec != nil && rec.person != "" && rec.person != caller.ID
		if rec != nil && rec.person == "" && rec.conn == c {
			rec.person = caller.ID
		}
		c.srv.mu.Unlock()
		if other {
			return nil, clientIDTaken(c.clientID, caller.ID)
		}
	}
	c.setCaller(caller, time.Duration(expiresIn)*time.Second)
	return map[string]any{"_meta": c.grantsMeta()}, nil
}

// GrantsMetaKey names, in the _meta of initialize's and authenticate's
// results, who the connection is signed in as and the operations they may
// do: {"principal": "sam", "operations": ["terminal:output", …]}. A client
// leaves out what it may not use (the web page's buttons) instead of trying
// it; the host still decides every request.
const GrantsMetaKey = "shellgate/grants"

// grantsMeta is the _meta that tells the client its current grants.
func (c *conn) grantsMeta() map[string]any {
	who := c.who()
	ops := []string{}
	for _, op := range c.srv.gate.Grants(who) {
		ops = append(ops, string(op))
	}
	principal := who.ID
	if who.Root {
		principal = "root"
	}
	return map[string]any{GrantsMetaKey: map[string]any{"principal": principal, "operations": ops}}
}

// setCaller changes who the connection is; with a lifetime, the sign-in
// ends on its own and the client is told with auth/required.
func (c *conn) setCaller(caller gate.Caller, lifetime time.Duration) {
	c.authMu.Lock()
	defer c.authMu.Unlock()
	c.callerGen++
	if c.expiry != nil {
		c.expiry.Stop()
		c.expiry = nil
	}
	c.caller = caller
	if lifetime <= 0 {
		return
	}
	gen := c.callerGen
	c.expiry = c.srv.clock.AfterFunc(lifetime, func() {
		c.srv.expire(c, gen)
	})
}

// expire ends a timed sign-in and tells the client with auth/required.
func (s *Server) expire(c *conn, gen uint64) {
	c.authMu.Lock()
	if c.callerGen != gen {
		c.authMu.Unlock()
		return
	}
	c.caller, c.expiry = gate.Caller{}, nil
	c.authMu.Unlock()
	c.queue(notification{Method: "auth/required", Params: map[string]any{
		"channel": terminals.RootChannel, "resource": c.record(), "reason": "expired",
	}})
}

// who is the connection's caller now.
func (c *conn) who() gate.Caller {
	c.authMu.Lock()
	defer c.authMu.Unlock()
	return c.caller
}
