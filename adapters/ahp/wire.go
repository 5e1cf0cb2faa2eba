package ahp

import (
	"encoding/json"
	"strconv"

	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/terminal"
)

// The wire shapes. Each negotiated version gets its own (D11 in
// docs/protocol.md): a shape is worked out once from the version, when a
// connection introduces itself, and every encoder below takes it. This is
// the one place that knows how versions differ; no handler asks which
// version a connection speaks.

// shape is how one protocol version spells terminal state, root entries and
// claims.
type shape struct {
	// lifecycle: 0.9.0 and later carry an explicit lifecycle object and no
	// flat exitCode; earlier versions carry only the flat exitCode, present
	// once the process exited with a code.
	lifecycle bool
	// isPty: 0.7.0 and later carry isPty; earlier versions have no such key.
	isPty bool
	// claimChat: a session claim names its chat from 0.9.0 on; earlier
	// session claims have no chat key.
	claimChat bool
}

// shapeOf is the shape of a version this host accepts (negotiate chose it).
func shapeOf(version string) shape {
	v, err := parseVersion(version)
	if err != nil {
		return newestShape
	}
	atLeast := func(minor int) bool { return v.major >= 1 || v.minor >= minor }
	return shape{lifecycle: atLeast(9), isPty: atLeast(7), claimChat: atLeast(9)}
}

// newestShape is the newest version's, for a connection that has not
// negotiated one (it is sent no state before it does).
var newestShape = shape{lifecycle: true, isPty: true, claimChat: true}

type wireClaim struct {
	Kind       string `json:"kind"`
	ClientID   string `json:"clientId,omitempty"`
	Session    string `json:"session,omitempty"`
	Chat       string `json:"chat,omitempty"`
	TurnID     string `json:"turnId,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
}

func (sh shape) claim(c terminal.Claim) wireClaim {
	w := wireClaim{Kind: string(c.Kind), ClientID: c.ClientID, Session: c.Session, Chat: c.Chat, TurnID: c.TurnID, ToolCallID: c.ToolCallID}
	if !sh.claimChat {
		w.Chat = ""
	}
	return w
}

// fromWireClaim parses a claim strictly: one of the two kinds, every field a
// string, the required ones present. Unknown extra keys are dropped.
func fromWireClaim(raw json.RawMessage) (terminal.Claim, bool) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return terminal.Claim{}, false
	}
	str := func(k string) (string, bool) {
		v, ok := fields[k]
		if !ok {
			return "", true
		}
		var s string
		return s, json.Unmarshal(v, &s) == nil
	}
	var c terminal.Claim
	var ok [6]bool
	var kind string
	kind, ok[0] = str("kind")
	c.Kind = terminal.ClaimKind(kind)
	switch c.Kind {
	case terminal.ClaimClient:
		c.ClientID, ok[1] = str("clientId")
		ok[2], ok[3], ok[4], ok[5] = true, true, true, true
	case terminal.ClaimSession:
		c.Session, ok[1] = str("session")
		c.Chat, ok[2] = str("chat")
		c.TurnID, ok[3] = str("turnId")
		c.ToolCallID, ok[4] = str("toolCallId")
		ok[5] = true
	}
	for _, good := range ok {
		if !good {
			return terminal.Claim{}, false
		}
	}
	return c, c.Validate() == nil
}

type wireLifecycle struct {
	Status   string `json:"status"`
	ExitCode *int   `json:"exitCode,omitempty"`
}

type wireUnclassified struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

type wireCommandPart struct {
	Type        string `json:"type"`
	CommandID   string `json:"commandId"`
	CommandLine string `json:"commandLine"`
	Output      string `json:"output"`
	Timestamp   int64  `json:"timestamp"`
	IsComplete  bool   `json:"isComplete"`
	ExitCode    *int   `json:"exitCode,omitempty"`
	DurationMs  *int64 `json:"durationMs,omitempty"`
}

type wireTerminalState struct {
	Title                    string         `json:"title"`
	CWD                      string         `json:"cwd,omitempty"`
	Cols                     int            `json:"cols,omitempty"`
	Rows                     int            `json:"rows,omitempty"`
	Content                  []any          `json:"content"`
	Claim                    wireClaim      `json:"claim"`
	SupportsCommandDetection bool           `json:"supportsCommandDetection"`
	IsPty                    *bool          `json:"isPty,omitempty"`
	Lifecycle                *wireLifecycle `json:"lifecycle,omitempty"`
	ExitCode                 *int           `json:"exitCode,omitempty"`
	// Meta carries shellgate/screen (screenMetaKey) for a pty terminal.
	Meta map[string]any `json:"_meta,omitempty"`
}

// screenMetaKey names, in a terminal snapshot's state _meta, the VT byte
// stream that draws the terminal's current screen on a blank terminal of its
// size (what tmux sends a client on attach).
const screenMetaKey = "shellgate/screen"

func (sh shape) state(s *terminal.Snapshot) wireTerminalState {
	content := make([]any, 0, len(s.Content))
	for _, p := range s.Content {
		if p.Command == nil {
			content = append(content, wireUnclassified{Type: "unclassified", Value: p.Text})
			continue
		}
		c := p.Command
		content = append(content, wireCommandPart{
			Type: "command", CommandID: c.ID, CommandLine: c.Line, Output: p.Text,
			Timestamp: c.Timestamp, IsComplete: c.Complete, ExitCode: c.ExitCode, DurationMs: c.DurationMs,
		})
	}
	w := wireTerminalState{
		Title: s.Title, CWD: s.CWD, Cols: s.Cols, Rows: s.Rows, Content: content,
		Claim: sh.claim(s.Claim), SupportsCommandDetection: s.SupportsCommandDetection,
	}
	if sh.isPty {
		isPty := s.IsPty
		w.IsPty = &isPty
	}
	w.Lifecycle, w.ExitCode = sh.exit(s.Lifecycle)
	return w
}

// exit spells a terminal's lifecycle: a lifecycle object, or before 0.9.0
// the flat exitCode alone (absent while running, and for an exit without a
// code, which those versions cannot tell apart).
func (sh shape) exit(l terminal.Lifecycle) (*wireLifecycle, *int) {
	if sh.lifecycle {
		return &wireLifecycle{Status: string(l.Status), ExitCode: l.ExitCode}, nil
	}
	if l.IsExited() {
		return nil, l.ExitCode
	}
	return nil, nil
}

type wireTerminalInfo struct {
	Resource  string         `json:"resource"`
	Title     string         `json:"title"`
	Claim     wireClaim      `json:"claim"`
	Lifecycle *wireLifecycle `json:"lifecycle,omitempty"`
	ExitCode  *int           `json:"exitCode,omitempty"`
	// Meta carries shellgate/host (HostMetaKey) for a terminal on another
	// machine.
	Meta map[string]any `json:"_meta,omitempty"`
}

// HostMetaKey names, in a root list entry's _meta, the host a terminal on
// another machine runs on. An entry without it runs on the daemon's own
// machine, so every version's entry keeps its exact shape there.
const HostMetaKey = "shellgate/host"

func (sh shape) list(list []terminals.Info) []wireTerminalInfo {
	out := make([]wireTerminalInfo, 0, len(list))
	for _, t := range list {
		info := wireTerminalInfo{Resource: t.URI, Title: t.Title, Claim: sh.claim(t.Claim)}
		info.Lifecycle, info.ExitCode = sh.exit(t.Lifecycle)
		if t.Host != "" && t.Host != terminals.MainHost {
			info.Meta = map[string]any{HostMetaKey: t.Host}
		}
		out = append(out, info)
	}
	return out
}

type wireRootState struct {
	Agents    []any              `json:"agents"`
	Terminals []wireTerminalInfo `json:"terminals"`
	Config    *wireRootConfig    `json:"config,omitempty"`
	// Meta carries shellgate/holders (HoldersMetaKey) when a listed
	// terminal is held by a signed-in principal's client.
	Meta map[string]any `json:"_meta,omitempty"`
}

// HoldersMetaKey names, in the root state's _meta, the principal each
// client id holding a listed terminal is signed in as: {"c-3f1a": "sam"}.
// The protocol's root state has a _meta of its own while a root list entry
// has none, so every version's entries keep their exact shape. A client id
// bound to nobody (anonymous) is left out: its entries show the bare id.
// Only a caller who may read terminals is told names (gate.SeesNames).
const HoldersMetaKey = "shellgate/holders"

// holderNames maps each client id holding one of list's terminals to the
// principal it claimed as (terminal.Claim.Person); nil when there is none.
func holderNames(list []terminals.Info) map[string]string {
	var names map[string]string
	for _, t := range list {
		if t.Claim.Kind != terminal.ClaimClient || t.Claim.Person == "" {
			continue
		}
		if names == nil {
			names = map[string]string{}
		}
		names[t.Claim.ClientID] = t.Claim.Person
	}
	return names
}

type wireRootConfig struct {
	Values map[string]any `json:"values"`
}

type wireSnapshot struct {
	Resource string `json:"resource"`
	State    any    `json:"state"`
	FromSeq  uint64 `json:"fromSeq"`
}

func (c *conn) toWireSnapshot(s terminals.ChannelSnapshot, seq uint64) wireSnapshot {
	if s.IsRoot() {
		root := wireRootState{Agents: []any{}, Terminals: c.shape.list(s.Root)}
		if names := holderNames(s.Root); len(names) > 0 && c.srv.gate.SeesNames(c.who()) {
			root.Meta = map[string]any{HoldersMetaKey: names}
		}
		if c.defaultShell != "" {
			root.Config = &wireRootConfig{Values: map[string]any{"defaultShell": c.defaultShell}}
		}
		return wireSnapshot{Resource: s.URI, State: root, FromSeq: seq}
	}
	state := c.shape.state(s.Terminal)
	if s.Screen != "" {
		state.Meta = map[string]any{screenMetaKey: s.Screen}
	}
	return wireSnapshot{Resource: s.URI, State: state, FromSeq: seq}
}

// rawAction is a client's action echoed back as it was sent (rejections).
type rawAction struct {
	typ string
	raw json.RawMessage
}

func (r rawAction) Type() string { return r.typ }

// EncodedSizeHint counts the echo's text against queues and the replay
// ring, which keep it for its sender.
func (r rawAction) EncodedSizeHint() int { return len(r.raw) }

// configChanged is the root/configChanged action as this connection sees it.
type configChanged struct {
	config  map[string]any
	replace bool
	owner   *conn // the connection whose per-connection keys these are
}

func (configChanged) Type() string { return "root/configChanged" }

// action maps an action to its JSON object in this shape.
func (sh shape) action(a terminal.Action) any {
	type typed struct {
		Type string `json:"type"`
	}
	switch a := a.(type) {
	case terminal.Data:
		return struct {
			Type string `json:"type"`
			Data string `json:"data"`
		}{a.Type(), a.Data}
	case terminal.Input:
		return struct {
			Type string `json:"type"`
			Data string `json:"data"`
		}{a.Type(), a.Data}
	case terminal.Resized:
		return struct {
			Type string `json:"type"`
			Cols int    `json:"cols"`
			Rows int    `json:"rows"`
		}{a.Type(), a.Cols, a.Rows}
	case terminal.Claimed:
		return struct {
			Type  string    `json:"type"`
			Claim wireClaim `json:"claim"`
		}{a.Type(), sh.claim(a.Claim)}
	case terminal.TitleChanged:
		return struct {
			Type  string `json:"type"`
			Title string `json:"title"`
		}{a.Type(), a.Title}
	case terminal.CwdChanged:
		return struct {
			Type string `json:"type"`
			CWD  string `json:"cwd"`
		}{a.Type(), a.CWD}
	case terminal.Exited:
		return struct {
			Type     string `json:"type"`
			ExitCode *int   `json:"exitCode,omitempty"`
		}{a.Type(), a.ExitCode}
	case terminal.CommandExecuted:
		return struct {
			Type        string `json:"type"`
			CommandID   string `json:"commandId"`
			CommandLine string `json:"commandLine"`
			Timestamp   int64  `json:"timestamp"`
		}{a.Type(), a.CommandID, a.CommandLine, a.Timestamp}
	case terminal.CommandFinished:
		return struct {
			Type       string `json:"type"`
			CommandID  string `json:"commandId"`
			ExitCode   *int   `json:"exitCode,omitempty"`
			DurationMs *int64 `json:"durationMs,omitempty"`
		}{a.Type(), a.CommandID, a.ExitCode, a.DurationMs}
	case terminals.TerminalsChanged:
		return struct {
			Type      string             `json:"type"`
			Terminals []wireTerminalInfo `json:"terminals"`
		}{a.Type(), sh.list(a.Terminals)}
	case configChanged:
		return struct {
			Type    string         `json:"type"`
			Config  map[string]any `json:"config"`
			Replace bool           `json:"replace,omitempty"`
		}{a.Type(), a.config, a.replace}
	case rawAction:
		return a.raw
	}
	return typed{a.Type()}
}

type wireOrigin struct {
	ClientID  string `json:"clientId"`
	ClientSeq int64  `json:"clientSeq"`
}

// appendEnvelope encodes an action notification in this shape.
// terminal/data, the hot path, is written by hand; everything else goes
// through encoding/json.
func (sh shape) appendEnvelope(buf []byte, ev terminals.Event, action terminal.Action) ([]byte, error) {
	if d, ok := action.(terminal.Data); ok && ev.Origin == nil && ev.Rejection == "" {
		return appendDataSuffix(appendEscaped(appendDataPrefix(buf, ev.Channel), d.Data), ev.Seq), nil
	}
	buf = append(buf, `{"jsonrpc":"2.0","method":"action","params":{"channel":`...)
	buf = appendString(buf, ev.Channel)
	buf = append(buf, `,"action":`...)
	if d, ok := action.(terminal.Data); ok {
		buf = append(buf, `{"type":"terminal/data","data":`...)
		buf = appendString(buf, d.Data)
		buf = append(buf, '}')
	} else {
		enc, err := json.Marshal(sh.action(action))
		if err != nil {
			return nil, err
		}
		buf = append(buf, enc...)
	}
	buf = append(buf, `,"serverSeq":`...)
	buf = strconv.AppendUint(buf, ev.Seq, 10)
	if ev.Origin != nil {
		buf = append(buf, `,"origin":{"clientId":`...)
		buf = appendString(buf, ev.Origin.ClientID)
		buf = append(buf, `,"clientSeq":`...)
		buf = strconv.AppendInt(buf, ev.Origin.ClientSeq, 10)
		buf = append(buf, '}')
	}
	if ev.Rejection != "" {
		buf = append(buf, `,"rejectionReason":`...)
		buf = appendString(buf, ev.Rejection)
	}
	return append(buf, "}}"...), nil
}

// A terminal/data envelope with no origin is laid out as prefix, escaped
// text, suffix, so a run of them merges by copying the escaped texts out of
// their shared encodings (dataBody) between one prefix and one suffix.
const (
	dataHead = `{"jsonrpc":"2.0","method":"action","params":{"channel":`
	dataMid  = `,"action":{"type":"terminal/data","data":"`
	dataTail = `"},"serverSeq":`
)

func appendDataPrefix(buf []byte, channel string) []byte {
	buf = append(buf, dataHead...)
	buf = appendString(buf, channel)
	return append(buf, dataMid...)
}

func appendDataSuffix(buf []byte, seq uint64) []byte {
	buf = append(buf, dataTail...)
	buf = strconv.AppendUint(buf, seq, 10)
	return append(buf, "}}"...)
}

// dataEnvelope appends a plain terminal/data event's whole envelope.
func dataEnvelope(buf []byte, ev terminals.Event) []byte {
	return appendDataSuffix(appendEscaped(appendDataPrefix(buf, ev.Channel), ev.Action.(terminal.Data).Data), ev.Seq)
}

// dataEnvelopeSize is dataEnvelope's exact length.
func dataEnvelopeSize(ev terminals.Event) int {
	return len(dataHead) + escapedLen(ev.Channel) + 2 + len(dataMid) +
		escapedLen(ev.Action.(terminal.Data).Data) + len(dataTail) + uintLen(ev.Seq) + 2
}

// dataBody is the escaped text inside ev's envelope enc (dataEnvelope's).
func dataBody(enc []byte, ev terminals.Event) []byte {
	from := len(dataHead) + escapedLen(ev.Channel) + 2 + len(dataMid)
	to := len(enc) - len(dataTail) - uintLen(ev.Seq) - 2
	return enc[from:to]
}

func uintLen(v uint64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

const hexDigits = "0123456789abcdef"

// needsEscape marks the bytes a JSON string must escape.
var needsEscape = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// appendString appends s as a JSON string. s is valid UTF-8 (the pump
// guarantees it), so only quotes, backslashes and control bytes need work;
// everything between them is copied in runs.
func appendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	return append(appendEscaped(buf, s), '"')
}

// escapedLen is how many bytes appendEscaped appends for s.
func escapedLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !needsEscape[c] {
			continue
		}
		switch c {
		case '"', '\\', '\n', '\r', '\t':
			n++
		default:
			n += 5
		}
	}
	return n
}

// appendEscaped appends s's JSON string escaping, without the quotes.
func appendEscaped(buf []byte, s string) []byte {
	start := 0

	for i := 0; i < len(s); i++ {
		c := s[i]
		if !needsEscape[c] {
			continue
		}
		buf = append(buf, s[start:i]...)
		switch c {
		case '"':
			buf = append(buf, '\\', '"')
		case '\\':
			buf = append(buf, '\\', '\\')
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			buf = append(buf, '\\', 't')
		default:
			buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	return append(buf, s[start:]...)
}
