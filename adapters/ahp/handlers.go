package ahp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/shellgate/shellgate/app/gate"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/access"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

// SpawnMetaKey is the _meta key of createTerminal that says what to run:
// {"command"?: string, "args"?: [string], "env"?: {NAME: value}, "pty"?: bool}.
const SpawnMetaKey = "shellgate/spawn"

// method is one entry of the protocol's table: how a method is served,
// and what it asks of the caller. The use case a handler calls checks the
// caller's grants itself; Op says which grant that is, for a reader of the
// table (TestTheMethodTableSaysWhatEachUseCaseNeeds holds the two to each
// other).
type method struct {
	serve func(c *conn, ctx context.Context, m message) (any, *Error)
	// useCase names the terminals.App use case the method calls, if any.
	useCase string
	// op is the operation that use case needs; "" when it needs none of
	// its own (a sign-in, or the read grant per channel).
	op access.Operation
	// early: served before the connection has introduced itself.
	early bool
}

// methods are the requests and notifications this host serves: the one
// table from AHP method to use case.
var methods = map[string]method{
	"initialize":      {serve: (*conn).initialize, useCase: "Subscribe", early: true},
	"reconnect":       {serve: (*conn).reconnect, useCase: "Resume", early: true},
	"ping":            {serve: func(*conn, context.Context, message) (any, *Error) { return nil, nil }, early: true},
	"subscribe":       {serve: (*conn).subscribe, useCase: "Subscribe"},
	"unsubscribe":     {serve: (*conn).unsubscribe, useCase: "Unsubscribe"},
	"createTerminal":  {serve: (*conn).createTerminal, useCase: "OpenTerminal", op: access.TerminalCreate},
	"disposeTerminal": {serve: (*conn).disposeTerminal, useCase: "DisposeTerminal", op: access.TerminalDispose},
	"dispatchAction":  {serve: (*conn).dispatchAction, useCase: "DispatchAction"},
	"authenticate":    {serve: (*conn).authenticate},
	FeedMethod:        {serve: (*conn).feed, useCase: "FeedInput", op: access.TerminalInput},
}

// Methods lists every method the router serves, sorted.
func Methods() []string {
	out := make([]string, 0, len(methods))
	for m := range methods {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// MethodOperation is the operation the use case behind method needs of
// its caller, and that use case's name in terminals.App; an empty
// operation for a method that needs none of its own.
func MethodOperation(name string) (useCase string, op access.Operation) {
	m := methods[name]
	return m.useCase, m.op
}

// actionDecoder reads one action type's fields; a nil action comes with
// the reason it is refused.
type actionDecoder func(f map[string]json.RawMessage) (terminal.Action, string)

// actions decodes every action type a client may dispatch
// (terminals.Dispatchable, the one list; TestEveryDispatchableActionIsDecoded
// holds this table to it): the table from AHP action type to the
// DispatchAction use case, which decides each by the operation that list
// gives it. root/configChanged is read by dispatchRoot, which also keeps
// the connection's setting.
var actions = map[string]actionDecoder{
	terminal.TypeInput: func(f map[string]json.RawMessage) (terminal.Action, string) {
		data, ok := jsonString(f["data"])
		if !ok {
			return nil, "terminal/input needs data as a string"
		}
		return terminal.Input{Data: data}, ""
	},
	terminal.TypeResized: func(f map[string]json.RawMessage) (terminal.Action, string) {
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
	},
	terminal.TypeClaimed: func(f map[string]json.RawMessage) (terminal.Action, string) {
		claim, ok := fromWireClaim(f["claim"])
		if !ok {
			return nil, `terminal/claimed needs a claim: {"kind": "client", "clientId": …} or {"kind": "session", "session": …, "chat": …}`
		}
		return terminal.Claimed{Claim: claim}, ""
	},
	terminal.TypeTitleChanged: func(f map[string]json.RawMessage) (terminal.Action, string) {
		var title string
		if v, ok := f["title"]; ok && json.Unmarshal(v, &title) != nil {
			return nil, "terminal/titleChanged needs title as a string"
		}
		return terminal.TitleChanged{Title: title}, ""
	},
	terminal.TypeCleared:        func(map[string]json.RawMessage) (terminal.Action, string) { return terminal.Cleared{}, "" },
	terminals.RootConfigChanged: nil,
}

// DispatchableActions lists every action type the router decodes for a
// client, sorted.
func DispatchableActions() []string {
	out := make([]string, 0, len(actions))
	for a := range actions {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// handle answers one frame, as decode left it: every request exactly
// once, never a notification.
func (c *conn) handle(ctx context.Context, m message, perr *Error) {
	if perr != nil {
		// An unreadable frame gets an answer only if it looks like a request
		// (or could not be read at all); a notification is never answered.
		if m.ID != nil || perr.Code == CodeParseError || m.Method == "" {
			c.reply(m.ID, nil, perr)
		}
		return
	}
	entry, known := methods[m.Method]
	switch {
	case !c.initialized && !entry.early:
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
	result, err := entry.serve(c, ctx, m)
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

// initializeParams are initialize's params.
type initializeParams struct {
	ProtocolVersions     []string
	ClientID             string
	InitialSubscriptions []string
}

// decodeInitialize reads initialize's params, naming the field that is
// wrong.
func decodeInitialize(p params) (out initializeParams, err *Error) {
	if out.ProtocolVersions, err = p.strings("protocolVersions"); err != nil {
		return out, err
	}
	if out.ClientID, err = p.str("clientId"); err != nil {
		return out, err
	}
	out.InitialSubscriptions, err = p.optStrings("initialSubscriptions")
	return out, err
}

func (c *conn) initialize(ctx context.Context, m message) (any, *Error) {
	p, err := parseParams(m.Params)
	if err != nil {
		return nil, err
	}
	if c.initialized {
		return nil, errorf(CodeMethodNotFound, "%s has already initialized", c.clientID)
	}
	ip, err := decodeInitialize(p)
	if err != nil {
		return nil, err
	}
	offered, clientID, initial := ip.ProtocolVersions, ip.ClientID, ip.InitialSubscriptions
	version, ok, verr := negotiate(offered)
	if verr != nil {
		return nil, invalidParams("%v", verr)
	}
	if !ok {
		c.queue(response{ID: m.ID, Err: &Error{
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
	_ = c.srv.app.Subscribe.Handle(ctx, c.who(), terminals.SubscribeRequest{
		Viewer: c.sub, Channels: uniq(initial), OnlyReadable: true,
		Then: func(snaps []terminals.ChannelSnapshot, seq uint64) {
			res := initializeResult{
				ProtocolVersion: version, ServerSeq: seq, Snapshots: c.wireSnapshots(snaps, seq),
				ServerInfo:       serverInfo{Name: "shellgate", Version: c.srv.opts.ServerVersion},
				DefaultDirectory: c.srv.app.DefaultDirectory(),
				Meta:             c.grantsMeta(),
			}
			c.queue(response{ID: m.ID, Result: res})
		},
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
	c.srv.app.Introduce(c.sub, clientID)
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

// reconnectParams are reconnect's params.
type reconnectParams struct {
	ClientID          string
	LastSeenServerSeq int64
	Subscriptions     []string
}

// decodeReconnect reads reconnect's params, naming the field that is
// wrong.
func decodeReconnect(p params) (out reconnectParams, err *Error) {
	if out.ClientID, err = p.str("clientId"); err != nil {
		return out, err
	}
	lastSeen, ok := p.optInt("lastSeenServerSeq")
	if !ok || lastSeen < 0 {
		return out, invalidParams("lastSeenServerSeq must be a non-negative integer")
	}
	out.LastSeenServerSeq = lastSeen
	out.Subscriptions, err = p.strings("subscriptions")
	return out, err
}

func (c *conn) reconnect(ctx context.Context, m message) (any, *Error) {
	p, err := parseParams(m.Params)
	if err != nil {
		return nil, err
	}
	if c.initialized {
		return nil, errorf(CodeMethodNotFound, "%s has already initialized; reconnect on a new connection", c.clientID)
	}
	rp, err := decodeReconnect(p)
	if err != nil {
		return nil, err
	}
	clientID, lastSeen, subs := rp.ClientID, rp.LastSeenServerSeq, rp.Subscriptions
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
	resume := func(r terminals.ResumeResult) {
		if !r.Replay {
			c.queue(response{ID: m.ID, Result: reconnectResult{Type: "snapshot", Snapshots: c.wireSnapshots(r.Snapshots, r.Seq)}})
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
		c.queue(response{ID: m.ID, Result: replayResult(res)})
	}
	_ = c.srv.app.Resume.Handle(ctx, c.who(), terminals.ResumeRequest{Viewer: c.sub, LastSeen: uint64(lastSeen), Channels: uniq(subs), Then: resume})
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

// channelParams are the params of subscribe, unsubscribe and
// disposeTerminal.
type channelParams struct{ Channel string }

func decodeChannel(raw json.RawMessage) (channelParams, *Error) {
	p, err := parseParams(raw)
	if err != nil {
		return channelParams{}, err
	}
	channel, err := p.str("channel")
	return channelParams{Channel: channel}, err
}

func (c *conn) subscribe(ctx context.Context, m message) (any, *Error) {
	p, perr := decodeChannel(m.Params)
	if perr != nil {
		return nil, perr
	}
	channel := p.Channel
	err := c.srv.app.Subscribe.Handle(ctx, c.who(), terminals.SubscribeRequest{Viewer: c.sub, Channels: []string{canonicalChannel(channel)}, Then: func(snaps []terminals.ChannelSnapshot, seq uint64) {
		snap := c.wireSnapshots(snaps, seq)[0]
		snap.Resource = channel
		// subscribe may be asked again and again on one connection: its
		// snapshots count against the bound, so a client that asks for them
		// and does not read them is dropped like one that does not read
		// output (initialize and reconnect come once per connection).
		c.queueSized(response{ID: m.ID, Result: subscribeResult{Snapshot: snap}}, snapshotsSize(snaps))
	}})
	if err != nil {
		return nil, c.wireError(err, channel, "subscribe to")
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

func (c *conn) unsubscribe(ctx context.Context, m message) (any, *Error) {
	p, err := decodeChannel(m.Params)
	if err != nil {
		return nil, err
	}
	channel := canonicalChannel(p.Channel)
	_ = c.srv.app.Unsubscribe.Handle(ctx, c.who(), terminals.UnsubscribeRequest{Viewer: c.sub, Channel: channel})
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
	// AwaitViewer: terminals.Spec.AwaitViewer.
	AwaitViewer bool `json:"awaitViewer"`
}

// createParams are createTerminal's params, read into the terminal they
// ask for.
type createParams struct {
	Channel string
	Spec    terminals.Spec
}

// decodeCreate reads createTerminal's params. A claim the caller may not
// make is refused here, with the field it is in.
func (c *conn) decodeCreate(raw json.RawMessage) (createParams, *Error) {
	p, err := parseParams(raw)
	if err != nil {
		return createParams{}, err
	}
	channel, err := p.str("channel")
	if err != nil {
		return createParams{}, err
	}
	holds := terminal.ClientHolds(c.clientID)
	holds.Person = c.srv.personOf(c.clientID)
	spec := terminals.Spec{URI: channel, Shell: c.defaultShell, Claim: holds}
	out := createParams{Channel: channel}
	if p.has("claim") {
		claim, ok := fromWireClaim(p["claim"])
		switch {
		case !ok:
			spec.Claim = terminal.Claim{Kind: "invalid"} // reported in the host's order of checks
		case claim.Kind == terminal.ClaimClient && claim.ClientID != c.clientID:
			return out, invalidParams("A client claim must name your own client id (%s)", c.clientID)
		case claim.Kind == terminal.ClaimSession && (c.srv.opts.MayClaimSession == nil || !c.srv.opts.MayClaimSession(c.who(), claim.Session)):
			return out, invalidParams("The claim names the agent session %s, which you may not drive", claim.Session)
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
			return out, invalidParams("_meta must be an object")
		}
		if raw, ok := meta[SpawnMetaKey]; ok {
			var sm spawnMeta
			if err := json.Unmarshal(raw, &sm); err != nil {
				return out, invalidParams(`_meta["%s"] must be {command?: string, args?: [string], env?: {NAME: string}, pty?: bool, host?: string, awaitViewer?: bool}: %v`, SpawnMetaKey, err)
			}
			if sm.Command != nil {
				spec.Command = *sm.Command
			}
			if sm.Args != nil && sm.Command == nil {
				return out, invalidParams(`_meta["%s"].args needs a command`, SpawnMetaKey)
			}
			spec.Args = sm.Args
			for k, v := range sm.Env {
				if k == "" || strings.ContainsAny(k, "=\x00") {
					return out, invalidParams(`_meta["%s"].env has a bad variable name %q`, SpawnMetaKey, k)
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
			spec.AwaitViewer = sm.AwaitViewer
		}
	}
	out.Spec = spec
	return out, nil
}

func (c *conn) createTerminal(ctx context.Context, m message) (any, *Error) {
	p, perr := c.decodeCreate(m.Params)
	req := terminals.OpenRequest{Spec: p.Spec}
	if perr != nil {
		req.Invalid = perr
	}
	if err := c.srv.app.OpenTerminal.Handle(ctx, c.who(), req); err != nil {
		return nil, c.wireError(err, p.Channel, "open")
	}
	return nil, nil
}

// wireError maps what a use case refused to the wire: the one table from
// error kind to JSON-RPC code, with a message that says what to do.
// channel is the one the request named, as it named it; verb words an
// error of no known kind ("Could not open …").
func (c *conn) wireError(err error, channel, verb string) *Error {
	var wire *Error
	var denied *access.DeniedError
	var gap *terminals.GapError
	switch {
	case errors.As(err, &wire):
		return wire // the adapter's own refusal of what it read
	case errors.Is(err, gate.ErrSignIn):
		return &Error{Code: CodeAuthRequired, Message: "Sign in to use this host",
			Data: map[string]any{"resources": []resourceRecord{c.record()}}}
	case errors.As(err, &denied):
		return &Error{Code: CodePermissionDenied, Message: denied.Error(), Data: map[string]any{}}
	case errors.Is(err, terminals.ErrNotFound):
		return errorf(CodeNotFound, "No terminal at %s", channel)
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
	case errors.As(err, &gap):
		return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("offset: %v; send again from there", gap), Data: map[string]any{"offset": gap.Want}}
	case errors.Is(err, terminals.ErrExited):
		return &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf("The process of %s has exited, so the input reaches nothing", channel), Data: map[string]any{"exited": true}}
	case errors.Is(err, terminals.ErrInputEnded):
		return errorf(CodeInvalidRequest, "The input of %s has ended; nothing more can be fed to it", channel)
	case errors.Is(err, terminals.ErrInputBacklog):
		return errorf(CodeInvalidRequest, "%v; keep fewer bytes unanswered", err)
	}
	return errorf(CodeInternalError, "Could not %s %s: %v", verb, channel, err)
}

func (c *conn) disposeTerminal(ctx context.Context, m message) (any, *Error) {
	p, perr := decodeChannel(m.Params)
	req := terminals.DisposeRequest{URI: p.Channel}
	if perr != nil {
		req.Invalid = perr
	}
	if err := c.srv.app.DisposeTerminal.Handle(ctx, c.who(), req); err != nil {
		return nil, c.wireError(err, p.Channel, "dispose of")
	}
	return nil, nil
}

// dispatchParams are dispatchAction's params; the action is read by its
// type's decoder.
type dispatchParams struct {
	Channel   string
	ClientSeq int64
	Action    json.RawMessage
}

// decodeDispatch reads dispatchAction's params; false when there is no
// channel to answer on (a notification gets no error answer).
func decodeDispatch(raw json.RawMessage) (dispatchParams, bool) {
	p, err := parseParams(raw)
	if err != nil {
		return dispatchParams{}, false
	}
	channel, err := p.str("channel")
	if err != nil {
		return dispatchParams{}, false
	}
	seq, _ := p.optInt("clientSeq")
	return dispatchParams{Channel: channel, ClientSeq: seq, Action: p["action"]}, true
}

// dispatchAction reads a client's action and hands it to the
// DispatchAction use case, which applies it or echoes it back to the
// sender alone with the reason it was refused; what cannot be read as an
// action at all is refused here. It is a notification: nothing is
// answered.
func (c *conn) dispatchAction(ctx context.Context, m message) (any, *Error) {
	dp, ok := decodeDispatch(m.Params)
	if !ok {
		return nil, nil
	}
	channel, seq, raw := dp.Channel, dp.ClientSeq, dp.Action
	origin := &terminals.Origin{ClientID: c.clientID, ClientSeq: seq}
	if origin.ClientID == "" {
		origin.ClientID = "anonymous"
	}
	fields, ok := objectMembers(raw)
	var typ string
	if ok {
		typ, ok = jsonString(fields["type"])
	}
	if !ok || typ == "" {
		c.reject(channel, rawAction{typ: "", raw: orEmptyObject(raw)}, origin, "An action must be an object with a type")
		return nil, nil
	}
	echo := rawAction{typ: typ, raw: raw}
	channel = canonicalChannel(channel)
	family := "terminal/"
	if channel == terminals.RootChannel {
		family = "root/"
	}
	if !strings.HasPrefix(typ, family) {
		c.reject(channel, echo, origin, fmt.Sprintf("%s is not %s", channel, kindOfFamily(typ)))
		return nil, nil
	}
	req := terminals.DispatchRequest{Viewer: c.sub, Channel: channel, Type: typ, Echo: echo, Origin: origin}
	var shell *string
	if channel == terminals.RootChannel {
		if typ == terminals.RootConfigChanged {
			req.Action, shell, req.Invalid = c.decodeConfig(raw)
		}
	} else {
		req.Fields = otherKeys(fields)
		if decode := actions[typ]; decode != nil {
			req.Action, req.Invalid = decode(fields)
		}
		if cl, ok := req.Action.(terminal.Claimed); ok && cl.Claim.Kind == terminal.ClaimClient {
			cl.Claim.Person = c.srv.personOf(cl.Claim.ClientID)
			req.Action = cl
		}
	}
	var sum fingerprint
	if req.Action != nil {
		sum = fingerprintOf(channel, raw)
		req.Repeat = c.repeats(seq, sum)
	}
	if !c.srv.app.DispatchAction.Handle(ctx, c.who(), req) {
		return nil, nil
	}
	c.applied(seq, sum)
	if channel == terminals.RootChannel {
		c.defaultShell = ""
		if shell != nil {
			c.defaultShell = *shell
		}
		return nil, nil
	}
	if _, typed := req.Action.(terminal.Input); typed && c.isSubscribed(channel) {
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

// decodeConfig reads root/configChanged: only defaultShell, which is kept
// on this connection alone. It returns the action to announce and the
// shell it sets (nil for none), or the reason it is refused.
func (c *conn) decodeConfig(raw json.RawMessage) (terminal.Action, *string, string) {
	var body struct {
		Config  map[string]json.RawMessage `json:"config"`
		Replace bool                       `json:"replace"`
	}
	if json.Unmarshal(raw, &body) != nil || body.Config == nil {
		return nil, nil, "root/configChanged needs config as an object"
	}
	for k := range body.Config {
		if k != "defaultShell" {
			return nil, nil, fmt.Sprintf("%s is not a setting a client may change here", k)
		}
	}
	shellRaw, has := body.Config["defaultShell"]
	if !has && !body.Replace {
		return nil, nil, "root/configChanged changes nothing here"
	}
	var shell *string
	if has && string(shellRaw) != "null" {
		var s string
		if json.Unmarshal(shellRaw, &s) != nil || !path.IsAbs(s) {
			return nil, nil, "defaultShell must be an absolute path"
		}
		shell = &s
	}
	cfg := map[string]any{"defaultShell": nil}
	if shell != nil {
		cfg["defaultShell"] = *shell
	}
	return configChanged{config: cfg, replace: body.Replace, owner: c}, shell, ""
}

// reject refuses, to its sender alone, what could not be read as an action
// for the channel at all.
func (c *conn) reject(channel string, a terminal.Action, origin *terminals.Origin, reason string) {
	c.srv.app.DispatchAction.Refuse(c.sub, channel, a, origin, reason)
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
func otherKeys(f map[string]json.RawMessage) string {
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
