package ahp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

// SpawnMetaKey is the _meta key of createTerminal that says what to run:
// {"command"?: string, "args"?: [string], "env"?: {NAME: value}, "pty"?: bool}.
const SpawnMetaKey = "shellgate/spawn"

// methods are the requests and notifications this host serves.
var methods = map[string]func(c *conn, ctx context.Context, m message) (any, *Error){
	"initialize":      (*conn).initialize,
	"reconnect":       (*conn).reconnect,
	"ping":            func(*conn, context.Context, message) (any, *Error) { return nil, nil },
	"subscribe":       (*conn).subscribe,
	"unsubscribe":     (*conn).unsubscribe,
	"createTerminal":  (*conn).createTerminal,
	"disposeTerminal": (*conn).disposeTerminal,
	"dispatchAction":  (*conn).dispatchAction,
	"authenticate":    (*conn).authenticate,
	FeedMethod:        (*conn).feed,
}

// Methods lists every method the router serves (the gate's classification
// is checked against it).
func Methods() []string {
	out := make([]string, 0, len(methods))
	for m := range methods {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// DispatchableActions lists every action type the router applies for a
// client.
func DispatchableActions() []string {
	return []string{
		terminal.TypeInput, terminal.TypeResized, terminal.TypeClaimed,
		terminal.TypeTitleChanged, terminal.TypeCleared, "root/configChanged",
	}
}

// beforeInitialize are served on a connection that has not yet introduced
// itself.
var beforeInitialize = map[string]bool{"initialize": true, "reconnect": true, "ping": true}

// handle answers one frame: every request exactly once, never a notification.
func (c *conn) handle(ctx context.Context, frame []byte) {
	m, perr := decode(frame)
	if perr != nil {
		// An unreadable frame gets an answer only if it looks like a request
		// (or could not be read at all); a notification is never answered.
		if m.ID != nil || perr.Code == CodeParseError || m.Method == "" {
			c.reply(m.ID, nil, perr)
		}
		return
	}
	handler, known := methods[m.Method]
	switch {
	case !c.initialized && !beforeInitialize[m.Method]:
		if m.isRequest() {
			if known {
				c.reply(m.ID, nil, errorf(CodeMethodNotFound, "This host does not serve %s before initialize", m.Method))
			} else {
				c.reply(m.ID, nil, errorf(CodeMethodNotFound, "This host does not serve %s yet", m.Method))
			}
		}
		return
	case !known:
		if m.isRequest() {
			c.reply(m.ID, nil, errorf(CodeMethodNotFound, "This host does not serve %s yet", m.Method))
		}
		return
	}
	if m.isRequest() {
		if gerr := c.srv.gate.Command(c.who(), m.Method); gerr != nil {
			c.reply(m.ID, nil, c.gateError(gerr))
			return
		}
	}
	result, err := handler(c, ctx, m)
	if !m.isRequest() {
		return
	}
	if err != nil {
		c.reply(m.ID, nil, err)
		return
	}
	if result == answered {
		return
	}
	c.reply(m.ID, result, nil)
}

// answered marks a request whose handler queued its own answer (to keep it
// in order with a snapshot).
var answered = new(struct{})

type initializeResult struct {
	ProtocolVersion  string         `json:"protocolVersion"`
	ServerSeq        uint64         `json:"serverSeq"`
	Snapshots        []wireSnapshot `json:"snapshots"`
	ServerInfo       serverInfo     `json:"serverInfo"`
	DefaultDirectory string         `json:"defaultDirectory,omitempty"`
	// Meta carries the caller's grants (GrantsMetaKey).
	Meta map[string]any `json:"_meta,omitempty"`
}

type serverInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

func (c *conn) initialize(_ context.Context, m message) (any, *Error) {
	p, err := parseParams(m.Params)
	if err != nil {
		return nil, err
	}
	if c.initialized {
		return nil, errorf(CodeMethodNotFound, "%s has already initialized", c.clientID)
	}
	offered, err := p.strings("protocolVersions")
	if err != nil {
		return nil, err
	}
	clientID, err := p.str("clientId")
	if err != nil {
		return nil, err
	}
	initial, err := p.optStrings("initialSubscriptions")
	if err != nil {
		return nil, err
	}
	version, ok, verr := negotiate(offered)
	if verr != nil {
		return nil, invalidParams("%v", verr)
	}
	if !ok {
		c.sub.Reply(response{ID: m.ID, Err: &Error{
			Code:    CodeUnsupportedVersion,
			Message: fmt.Sprintf("None of the offered protocol versions (%s) is served here; offer one of %s", strings.Join(offered, ", "), strings.Join(SupportedVersions(), ", ")),
			Data:    map[string]any{"supportedVersions": SupportedVersions()},
		}, closeAfter: "none of the offered protocol versions is supported"})
		return answered, nil
	}
	if err := c.bindClientID(clientID); err != nil {
		return nil, err
	}
	c.introduce(clientID, version, false)
	c.srv.host.SubscribeAll(c.sub, c.readable(uniq(initial)), func(snaps []terminals.ChannelSnapshot, seq uint64) {
		res := initializeResult{
			ProtocolVersion: version, ServerSeq: seq, Snapshots: c.wireSnapshots(snaps, seq),
			ServerInfo:       serverInfo{Name: "shellgate", Version: c.srv.opts.ServerVersion},
			DefaultDirectory: c.srv.host.DefaultDirectory(),
			Meta:             c.grantsMeta(),
		}
		c.sub.Reply(response{ID: m.ID, Result: res})
	})
	return answered, nil
}

// introduce makes this connection the client id's one live connection. A
// client id is one client's: its dispatches are applied once by clientSeq
// and its typed input is echoed to it alone, so two live connections under
// one id would swallow each other's keys. A connection still live under the
// id is closed with the reason: its client has come back on this one (a
// reloaded page, a socket it has given up on). initialize starts the id's
// clientSeq afresh; reconnect keeps it, so retried dispatches apply once.
func (c *conn) introduce(clientID, version string, resume bool) {
	c.srv.mu.Lock()
	rec := c.srv.clients[clientID]
	if rec == nil {
		rec = &clientRecord{}
		c.srv.clients[clientID] = rec
	}
	var replaced *conn
	if rec.live && rec.conn != nil && rec.conn != c {
		replaced = rec.conn
	}
	if !resume {
		rec.applied.reset()
	}
	if rec.expiry != nil {
		rec.expiry.Stop()
		rec.expiry = nil
	}
	rec.version, rec.live, rec.conn = version, true, c
	c.srv.mu.Unlock()

	// The writer reads the shape with wmu held; from here on everything
	// sent to this connection is in its version's shape.
	c.wmu.Lock()
	c.shape = shapeOf(version)
	c.wmu.Unlock()

	c.initialized, c.clientID = true, clientID
	c.srv.hub.SetClientID(c.sub, clientID)
	if replaced != nil {
		replaced.close(ports.ClosePolicy, clientID+" connected again on another connection")
	}
}

// snapshotsSize is about how many bytes snapshots take on the wire: their
// text, and a row per listed terminal.
func snapshotsSize(snaps []terminals.ChannelSnapshot) int {
	const row = 200
	n := 0
	for _, s := range snaps {
		n += row*len(s.Root) + len(s.Screen)
		if s.Terminal != nil {
			for _, p := range s.Terminal.Content {
				n += len(p.Text)
				if p.Command != nil {
					n += row + len(p.Command.Line)
				}
			}
		}
	}
	return n
}

func (c *conn) wireSnapshots(snaps []terminals.ChannelSnapshot, seq uint64) []wireSnapshot {
	out := make([]wireSnapshot, 0, len(snaps))
	for _, s := range snaps {
		c.setSubscribed(s.URI, true)
		out = append(out, c.toWireSnapshot(s, seq))
	}
	return out
}

type reconnectResult struct {
	Type      string            `json:"type"`
	Actions   []json.RawMessage `json:"actions,omitempty"`
	Missing   []string          `json:"missing,omitempty"`
	Snapshots []wireSnapshot    `json:"snapshots,omitempty"`
}

func (c *conn) reconnect(_ context.Context, m message) (any, *Error) {
	p, err := parseParams(m.Params)
	if err != nil {
		return nil, err
	}
	if c.initialized {
		return nil, errorf(CodeMethodNotFound, "%s has already initialized; reconnect on a new connection", c.clientID)
	}
	clientID, err := p.str("clientId")
	if err != nil {
		return nil, err
	}
	lastSeen, ok := p.optInt("lastSeenServerSeq")
	if !ok || lastSeen < 0 {
		return nil, invalidParams("lastSeenServerSeq must be a non-negative integer")
	}
	subs, err := p.strings("subscriptions")
	if err != nil {
		return nil, err
	}
	c.srv.mu.Lock()
	rec := c.srv.clients[clientID]
	var version string
	if rec != nil {
		version = rec.version
	}
	c.srv.mu.Unlock()
	if rec == nil {
		return nil, errorf(CodeNotFound, "%s is not a client this host has seen; initialize instead", clientID)
	}
	if err := c.bindClientID(clientID); err != nil {
		return nil, err
	}
	c.introduce(clientID, version, true)
	wanted := uniq(subs)
	readable := c.readable(wanted)
	unreadable := []string{}
	for _, ch := range wanted {
		if !contains(readable, ch) {
			unreadable = append(unreadable, ch)
		}
	}
	c.srv.host.Resume(c.sub, uint64(lastSeen), readable, func(r terminals.ResumeResult) {
		r.Missing = append(r.Missing, unreadable...)
		if !r.Replay {
			c.sub.Reply(response{ID: m.ID, Result: reconnectResult{Type: "snapshot", Snapshots: c.wireSnapshots(r.Snapshots, r.Seq)}})
			return
		}
		actions := make([]json.RawMessage, 0, len(r.Events))
		for _, ev := range r.Events {
			env, err := c.shape.appendEnvelope(nil, ev, c.outgoing(ev.Action))
			if err != nil {
				continue
			}
			// The envelope is the params of an action notification.
			actions = append(actions, envelopeParams(env))
		}
		for _, uri := range subs {
			if !contains(r.Missing, uri) {
				c.setSubscribed(uri, true)
			}
		}
		res := reconnectResult{Type: "replay", Actions: actions, Missing: r.Missing}
		if res.Actions == nil {
			res.Actions = []json.RawMessage{}
		}
		c.sub.Reply(response{ID: m.ID, Result: replayResult(res)})
	})
	return answered, nil
}

// replayResult keeps the required arrays present even when empty.
func replayResult(r reconnectResult) any {
	return struct {
		Type    string            `json:"type"`
		Actions []json.RawMessage `json:"actions"`
		Missing []string          `json:"missing"`
	}{r.Type, r.Actions, r.Missing}
}

// envelopeParams cuts the params object out of an encoded action
// notification.
func envelopeParams(notification []byte) json.RawMessage {
	const prefix = `{"jsonrpc":"2.0","method":"action","params":`
	return json.RawMessage(notification[len(prefix) : len(notification)-1])
}

type subscribeResult struct {
	Snapshot wireSnapshot `json:"snapshot"`
}

func (c *conn) subscribe(_ context.Context, m message) (any, *Error) {
	p, err := parseParams(m.Params)
	if err != nil {
		return nil, err
	}
	channel, err := p.str("channel")
	if err != nil {
		return nil, err
	}
	if gerr := c.srv.gate.Read(c.who(), canonicalChannel(channel)); gerr != nil {
		return nil, c.gateError(gerr)
	}
	found := false
	c.srv.host.SubscribeAll(c.sub, []string{canonicalChannel(channel)}, func(snaps []terminals.ChannelSnapshot, seq uint64) {
		if len(snaps) == 0 {
			return
		}
		found = true
		snap := c.wireSnapshots(snaps, seq)[0]
		snap.Resource = channel
		// subscribe may be asked again and again on one connection: its
		// snapshots count against the bound, so a client that asks for them
		// and does not read them is dropped like one that does not read
		// output (initialize and reconnect come once per connection).
		c.sub.ReplySized(response{ID: m.ID, Result: subscribeResult{Snapshot: snap}}, snapshotsSize(snaps))
	})
	if !found {
		return nil, errorf(CodeNotFound, "No terminal at %s", channel)
	}
	return answered, nil
}

// canonicalChannel folds the root's spellings into one.
func canonicalChannel(ch string) string {
	if ch == "ahp-root:" || ch == "ahp-root:/" {
		return terminals.RootChannel
	}
	return ch
}

func (c *conn) unsubscribe(_ context.Context, m message) (any, *Error) {
	p, err := parseParams(m.Params)
	if err != nil {
		return nil, err
	}
	channel, err := p.str("channel")
	if err != nil {
		return nil, err
	}
	channel = canonicalChannel(channel)
	c.srv.hub.Unsubscribe(c.sub, channel)
	c.setSubscribed(channel, false)
	return nil, nil
}

// spawnMeta is the _meta["shellgate/spawn"] object of createTerminal.
type spawnMeta struct {
	Command *string           `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	PTY     *bool             `json:"pty"`
	Host    *string           `json:"host"`
}

func (c *conn) createTerminal(ctx context.Context, m message) (any, *Error) {
	p, err := parseParams(m.Params)
	if err != nil {
		return nil, err
	}
	channel, err := p.str("channel")
	if err != nil {
		return nil, err
	}
	who := c.who()
	holds := terminal.ClientHolds(c.clientID)
	holds.Person = c.srv.personOf(c.clientID)
	spec := terminals.Spec{URI: channel, Shell: c.defaultShell, Claim: holds,
		Owner: who.ID, Reserve: c.srv.gate.Reserved(who)}
	if p.has("claim") {
		claim, ok := fromWireClaim(p["claim"])
		switch {
		case !ok:
			spec.Claim = terminal.Claim{Kind: "invalid"} // reported in the host's order of checks
		case claim.Kind == terminal.ClaimClient && claim.ClientID != c.clientID:
			return nil, invalidParams("A client claim must name your own client id (%s)", c.clientID)
		case claim.Kind == terminal.ClaimSession && (c.srv.opts.MayClaimSession == nil || !c.srv.opts.MayClaimSession(c.who(), claim.Session)):
			return nil, invalidParams("The claim names the agent session %s, which you may not drive", claim.Session)
		case claim.Kind == terminal.ClaimClient:
			spec.Claim = holds
		default:
			spec.Claim = claim
		}
	} else if _, present := p["claim"]; present {
		spec.Claim = terminal.Claim{Kind: "invalid"}
	}
	spec.Name, _ = p.optStr("name")
	if cwd, ok := p.optStr("cwd"); ok {
		spec.CWD = cwd
	}
	if n, ok := p.optInt("cols"); ok && n > 0 && n < 1<<15 {
		spec.Cols = int(n)
	}
	if n, ok := p.optInt("rows"); ok && n > 0 && n < 1<<15 {
		spec.Rows = int(n)
	}
	if p.has("_meta") {
		var meta map[string]json.RawMessage
		if json.Unmarshal(p["_meta"], &meta) != nil {
			return nil, invalidParams("_meta must be an object")
		}
		if raw, ok := meta[SpawnMetaKey]; ok {
			var sm spawnMeta
			if err := json.Unmarshal(raw, &sm); err != nil {
				return nil, invalidParams(`_meta["%s"] must be {command?: string, args?: [string], env?: {NAME: string}, pty?: bool, host?: string}: %v`, SpawnMetaKey, err)
			}
			if sm.Command != nil {
				spec.Command = *sm.Command
			}
			if sm.Args != nil && sm.Command == nil {
				return nil, invalidParams(`_meta["%s"].args needs a command`, SpawnMetaKey)
			}
			spec.Args = sm.Args
			for k, v := range sm.Env {
				if k == "" || strings.ContainsAny(k, "=\x00") {
					return nil, invalidParams(`_meta["%s"].env has a bad variable name %q`, SpawnMetaKey, k)
				}
				spec.Env = append(spec.Env, k+"="+v)
			}
			sort.Strings(spec.Env)
			if sm.PTY != nil {
				spec.PTY = *sm.PTY
			}
			if sm.Host != nil {
				spec.Host = *sm.Host
			}
		}
	}
	if _, cerr := c.srv.host.Create(ctx, spec); cerr != nil {
		return nil, createError(channel, cerr)
	}
	return nil, nil
}

// createError maps the host's refusals to the wire, in one place.
func createError(channel string, err error) *Error {
	switch {
	case errors.Is(err, terminals.ErrBadURI):
		return invalidParams("%s is not a terminal URI", channel)
	case errors.Is(err, terminals.ErrExists):
		return errorf(CodeAlreadyExists, "%s already exists", channel)
	case errors.Is(err, terminals.ErrReservedURI):
		return errorf(CodeAlreadyExists, "%s is a name this host keeps for its own channels", channel)
	case errors.Is(err, terminal.ErrNotAClaim):
		return invalidParams("That is not a terminal claim")
	case errors.Is(err, terminal.ErrNotAFileURI):
		return invalidParams("cwd must be a file: URI or an absolute path")
	case errors.Is(err, terminals.ErrTooManyTerminals):
		return &Error{Code: CodeLimitReached, Message: err.Error(), Data: map[string]any{"limit": "max_terminals_per_person"}}
	case errors.Is(err, terminals.ErrLowOnFiles):
		return &Error{Code: CodeLimitReached, Message: err.Error(), Data: map[string]any{"limit": "open_file_reserve"}}
	case errors.Is(err, terminals.ErrClosing):
		return errorf(CodeInternalError, "%s", terminals.ErrClosing.Error())
	case errors.Is(err, terminals.ErrUnknownHost):
		return invalidParams(`_meta["%s"].host: %v`, SpawnMetaKey, err)
	}
	return errorf(CodeInternalError, "Could not open %s: %v", channel, err)
}

func (c *conn) disposeTerminal(_ context.Context, m message) (any, *Error) {
	p, err := parseParams(m.Params)
	if err != nil {
		return nil, err
	}
	channel, err := p.str("channel")
	if err != nil {
		return nil, err
	}
	if derr := c.srv.host.Dispose(channel); derr != nil {
		return nil, errorf(CodeNotFound, "No terminal at %s", channel)
	}
	return nil, nil
}

// dispatchAction applies a client's action or echoes it back to the sender
// alone with the reason it was refused. It is a notification: nothing is
// answered.
func (c *conn) dispatchAction(_ context.Context, m message) (any, *Error) {
	p, err := parseParams(m.Params)
	if err != nil {
		return nil, nil
	}
	channel, err := p.str("channel")
	if err != nil {
		return nil, nil
	}
	seq, _ := p.optInt("clientSeq")
	origin := &hub.Origin{ClientID: c.clientID, ClientSeq: seq}
	if origin.ClientID == "" {
		origin.ClientID = "anonymous"
	}
	raw := p["action"]
	var head struct {
		Type string `json:"type"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &head) != nil || head.Type == "" {
		c.reject(channel, rawAction{typ: "", raw: orEmptyObject(raw)}, origin, "An action must be an object with a type")
		return nil, nil
	}
	echo := rawAction{typ: head.Type, raw: raw}
	channel = canonicalChannel(channel)

	if channel == terminals.RootChannel {
		if !strings.HasPrefix(head.Type, "root/") {
			c.reject(channel, echo, origin, fmt.Sprintf("%s is not %s", channel, kindOfFamily(head.Type)))
			return nil, nil
		}
		if reason := c.srv.gate.Dispatch(c.who(), channel, head.Type); reason != "" {
			c.reject(channel, echo, origin, reason)
			return nil, nil
		}
		c.dispatchRoot(head.Type, raw, echo, origin)
		return nil, nil
	}
	if !strings.HasPrefix(head.Type, "terminal/") {
		c.reject(channel, echo, origin, fmt.Sprintf("%s is not %s", channel, kindOfFamily(head.Type)))
		return nil, nil
	}
	if reason := c.srv.gate.Dispatch(c.who(), channel, head.Type); reason != "" {
		c.reject(channel, echo, origin, reason)
		return nil, nil
	}
	if terminal.HostOnly(head.Type) {
		c.reject(channel, echo, origin, fmt.Sprintf("%s is this host's to say, not a client's", head.Type))
		return nil, nil
	}
	if _, err := c.srv.host.Get(channel); err != nil {
		c.reject(channel, echo, origin, fmt.Sprintf("%s names nothing here (%s)", head.Type, otherKeys(raw)))
		return nil, nil
	}
	if !terminal.ClientDispatchable(head.Type) {
		c.reject(channel, echo, origin, fmt.Sprintf("%s is not served on a terminal", head.Type))
		return nil, nil
	}
	action, reason := parseTerminalAction(head.Type, raw)
	if action == nil {
		c.reject(channel, echo, origin, reason)
		return nil, nil
	}
	if cl, ok := action.(terminal.Claimed); ok && cl.Claim.Kind == terminal.ClaimClient {
		cl.Claim.Person = c.srv.personOf(cl.Claim.ClientID)
		action = cl
	}
	sum := fingerprintOf(channel, raw)
	if c.repeats(seq, sum) {
		// Already applied: never run the same dispatch twice, but answer
		// it, so the client settles it as applied.
		c.echoRepeat(channel, action, origin)
		return nil, nil
	}
	if err := c.srv.host.Apply(terminals.Dispatch{URI: channel, Action: action, Origin: origin}); err != nil {
		c.reject(channel, echo, origin, dispatchReason(head.Type, err))
		return nil, nil
	}
	c.applied(seq, sum)
	if _, typed := action.(terminal.Input); typed && c.isSubscribed(channel) {
		// Its output follows in a moment, to this connection too: the
		// echo waits to leave with it (D8 in docs/protocol.md; readLoop).
		c.deferEcho = true
	}
	return nil, nil
}

// repeats reports whether this client id already had this dispatch
// applied (D18). A dispatch without a clientSeq is never a repeat.
func (c *conn) repeats(seq int64, sum fingerprint) bool {
	if seq <= 0 {
		return false
	}
	c.srv.mu.Lock()
	defer c.srv.mu.Unlock()
	rec := c.srv.clients[c.clientID]
	return rec != nil && rec.applied.repeats(seq, sum)
}

// applied records an applied dispatch in the client id's window.
func (c *conn) applied(seq int64, sum fingerprint) {
	if seq <= 0 {
		return
	}
	c.srv.mu.Lock()
	defer c.srv.mu.Unlock()
	if rec := c.srv.clients[c.clientID]; rec != nil {
		rec.applied.applied(seq, sum)
	}
}

// echoRepeat answers a suppressed repeat as applied, to its sender alone.
func (c *conn) echoRepeat(channel string, a terminal.Action, origin *hub.Origin) {
	c.srv.hub.Update(func(tx hub.Tx) { tx.Echo(c.sub, channel, a, origin, "") })
}

func dispatchReason(typ string, err error) string {
	if errors.Is(err, terminals.ErrNotFound) {
		return fmt.Sprintf("%s names nothing here", typ)
	}
	if errors.Is(err, terminal.ErrNotAClaim) {
		return "That is not a terminal claim"
	}
	return fmt.Sprintf("%s could not be applied: %v", typ, err)
}

// parseTerminalAction reads a client-dispatchable terminal action; a nil
// action comes with the reason it is refused.
func parseTerminalAction(typ string, raw json.RawMessage) (terminal.Action, string) {
	var f map[string]json.RawMessage
	_ = json.Unmarshal(raw, &f)
	switch typ {
	case terminal.TypeInput:
		var data string
		if json.Unmarshal(f["data"], &data) != nil {
			return nil, "terminal/input needs data as a string"
		}
		return terminal.Input{Data: data}, ""
	case terminal.TypeResized:
		var cols, rows int
		if v, ok := f["cols"]; ok && json.Unmarshal(v, &cols) != nil {
			return nil, "terminal/resized needs cols as an integer"
		}
		if v, ok := f["rows"]; ok && json.Unmarshal(v, &rows) != nil {
			return nil, "terminal/resized needs rows as an integer"
		}
		if cols < 0 || rows < 0 || cols >= 1<<15 || rows >= 1<<15 {
			return nil, "terminal/resized needs cols and rows between 1 and 32767"
		}
		return terminal.Resized{Cols: cols, Rows: rows}, ""
	case terminal.TypeClaimed:
		claim, ok := fromWireClaim(f["claim"])
		if !ok {
			return nil, `terminal/claimed needs a claim: {"kind": "client", "clientId": …} or {"kind": "session", "session": …, "chat": …}`
		}
		return terminal.Claimed{Claim: claim}, ""
	case terminal.TypeTitleChanged:
		var title string
		if v, ok := f["title"]; ok && json.Unmarshal(v, &title) != nil {
			return nil, "terminal/titleChanged needs title as a string"
		}
		return terminal.TitleChanged{Title: title}, ""
	case terminal.TypeCleared:
		return terminal.Cleared{}, ""
	}
	return nil, fmt.Sprintf("%s is not served on a terminal", typ)
}

// dispatchRoot handles actions on the root channel: only root/configChanged
// carrying defaultShell, which is kept on this connection alone.
func (c *conn) dispatchRoot(typ string, raw json.RawMessage, echo rawAction, origin *hub.Origin) {
	if typ != "root/configChanged" {
		if typ == "root/terminalsChanged" || typ == "root/agentsChanged" || typ == "root/activeSessionsChanged" {
			c.reject(terminals.RootChannel, echo, origin, fmt.Sprintf("%s is this host's to say, not a client's", typ))
		} else {
			c.reject(terminals.RootChannel, echo, origin, fmt.Sprintf("%s is not one this host serves", typ))
		}
		return
	}
	var body struct {
		Config  map[string]json.RawMessage `json:"config"`
		Replace bool                       `json:"replace"`
	}
	if json.Unmarshal(raw, &body) != nil || body.Config == nil {
		c.reject(terminals.RootChannel, echo, origin, "root/configChanged needs config as an object")
		return
	}
	for k := range body.Config {
		if k != "defaultShell" {
			c.reject(terminals.RootChannel, echo, origin, fmt.Sprintf("%s is not a setting a client may change here", k))
			return
		}
	}
	shellRaw, has := body.Config["defaultShell"]
	if !has && !body.Replace {
		c.reject(terminals.RootChannel, echo, origin, "root/configChanged changes nothing here")
		return
	}
	var shell *string
	if has && string(shellRaw) != "null" {
		var s string
		if json.Unmarshal(shellRaw, &s) != nil || !path.IsAbs(s) {
			c.reject(terminals.RootChannel, echo, origin, "defaultShell must be an absolute path")
			return
		}
		shell = &s
	}
	sum := fingerprintOf(terminals.RootChannel, raw)
	if c.repeats(origin.ClientSeq, sum) {
		c.echoRepeat(terminals.RootChannel, echo, origin)
		return
	}
	c.applied(origin.ClientSeq, sum)
	cfg := map[string]any{"defaultShell": nil}
	c.defaultShell = ""
	if shell != nil {
		c.defaultShell = *shell
		cfg["defaultShell"] = *shell
	}
	c.srv.hub.Update(func(tx hub.Tx) {
		tx.Publish(terminals.RootChannel, configChanged{config: cfg, replace: body.Replace, owner: c}, origin, "")
	})
}

func (c *conn) reject(channel string, a terminal.Action, origin *hub.Origin, reason string) {
	c.srv.hub.Update(func(tx hub.Tx) { tx.Reject(c.sub, channel, a, origin, reason) })
}

// kindOfFamily words what an action's family needs the channel to be.
func kindOfFamily(typ string) string {
	family, _, _ := strings.Cut(typ, "/")
	switch family {
	case "terminal":
		return "a terminal here"
	case "root":
		return "the root here"
	case "session":
		return "a session here"
	case "chat":
		return "a chat here"
	}
	return "a channel for " + family + " actions here"
}

// otherKeys lists an action's keys besides its type, for refusal texts.
func otherKeys(raw json.RawMessage) string {
	var f map[string]json.RawMessage
	_ = json.Unmarshal(raw, &f)
	keys := make([]string, 0, len(f))
	for k := range f {
		if k != "type" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

func orEmptyObject(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}

func uniq(in []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(in))
	for _, s := range in {
		s = canonicalChannel(s)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
