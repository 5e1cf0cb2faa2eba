package ahpclient

import (
	"encoding/json"
	"errors"
	"fmt"
)

// RootChannel is the channel URI of the root channel and of connection-level commands.
const RootChannel = "ahp-root://"

// DefaultProtocolVersions is offered by Initialize when the caller passes nil versions.
var DefaultProtocolVersions = []string{"1.0.0", "0.9.0"}

// The views below decode loosely: a field whose JSON type is unexpected is
// left at its zero value instead of failing the whole message, and every view
// keeps the exact bytes it was decoded from in Raw, so tests can still assert
// on shapes the typed fields cannot express (an omitted key, an empty array).

// looseUnmarshal decodes b into v, tolerating values of the wrong JSON type.
func looseUnmarshal(b []byte, v any) error {
	err := json.Unmarshal(b, v)
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return nil
	}
	return err
}

// cloneRaw copies b so a view never aliases a buffer that may be reused.
func cloneRaw(b []byte) json.RawMessage {
	if b == nil {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}

// Fields splits a raw JSON object into its members; it returns nil when raw is not an object.
func Fields(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil
	}
	return m
}

// HasField reports whether raw is a JSON object with the key present (even if its value is null).
func HasField(raw json.RawMessage, key string) bool {
	_, ok := Fields(raw)[key]
	return ok
}

// RPCError is a JSON-RPC error object as the server sent it.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error makes an RPCError usable as a Go error.
func (e *RPCError) Error() string {
	if len(e.Data) > 0 {
		return fmt.Sprintf("rpc error %d: %s (data %s)", e.Code, e.Message, e.Data)
	}
	return fmt.Sprintf("rpc error %d: %s", e.Code, e.Message)
}

// Origin identifies the client dispatch an envelope echoes.
type Origin struct {
	ClientID  string `json:"clientId"`
	ClientSeq int64  `json:"clientSeq"`
}

// Envelope is the params object of an `action` notification.
type Envelope struct {
	Channel         string          `json:"channel"`
	Action          json.RawMessage `json:"action"`
	Type            string          `json:"-"` // action.type, decoded for convenience
	ServerSeq       uint64          `json:"serverSeq"`
	Origin          *Origin         `json:"origin,omitempty"`
	RejectionReason *string         `json:"rejectionReason,omitempty"`
	Raw             json.RawMessage `json:"-"` // the envelope exactly as received
}

// UnmarshalJSON decodes an envelope loosely and keeps its raw bytes.
func (e *Envelope) UnmarshalJSON(b []byte) error {
	type plain Envelope
	var p plain
	if err := looseUnmarshal(b, &p); err != nil {
		return err
	}
	*e = Envelope(p)
	e.Raw = cloneRaw(b)
	var head struct {
		Type string `json:"type"`
	}
	_ = looseUnmarshal(e.Action, &head)
	e.Type = head.Type
	return nil
}

// Rejected reports whether the server refused the dispatched action this envelope echoes.
func (e Envelope) Rejected() bool { return e.RejectionReason != nil }

// View decodes the action's payload fields.
func (e Envelope) View() ActionView {
	var v ActionView
	_ = looseUnmarshal(e.Action, &v)
	return v
}

// ActionView is a loose union of the fields terminal and root actions carry;
// absent fields stay nil.
type ActionView struct {
	Type        string         `json:"type"`
	Data        *string        `json:"data,omitempty"`
	Cols        *int           `json:"cols,omitempty"`
	Rows        *int           `json:"rows,omitempty"`
	Title       *string        `json:"title,omitempty"`
	Cwd         *string        `json:"cwd,omitempty"`
	Claim       *Claim         `json:"claim,omitempty"`
	ExitCode    *int           `json:"exitCode,omitempty"`
	CommandID   *string        `json:"commandId,omitempty"`
	CommandLine *string        `json:"commandLine,omitempty"`
	Timestamp   *int64         `json:"timestamp,omitempty"`
	DurationMs  *int64         `json:"durationMs,omitempty"`
	Terminals   []TerminalInfo `json:"terminals,omitempty"`
}

// Notification is a server-to-client message other than `action`
// (e.g. `auth/required`); ID is set only if the server sent a request.
type Notification struct {
	Method  string
	Channel string
	ID      json.RawMessage
	Params  json.RawMessage
	Raw     json.RawMessage // the whole frame
}

// Message is one frame received from the server, decoded just enough to route it.
type Message struct {
	Raw    json.RawMessage // the frame exactly as received
	Binary bool            // the frame was a binary WebSocket frame
	ID     json.RawMessage // nil when absent; `null` for e.g. a parse-error response
	Method string
	Params json.RawMessage
	Result json.RawMessage // nil when absent; `null` when the result is null
	Error  *RPCError
}

// IsResponse reports whether the message is a JSON-RPC response (it has an id and no method).
func (m Message) IsResponse() bool { return m.ID != nil && m.Method == "" }

// Response is the server's answer to one request.
type Response struct {
	ID     uint64
	Result json.RawMessage // `null` for a null result
	Error  *RPCError
	Raw    json.RawMessage // the whole frame
}

// Snapshot is a channel's full state at serverSeq FromSeq.
type Snapshot struct {
	Resource string          `json:"resource"`
	State    json.RawMessage `json:"state"`
	FromSeq  uint64          `json:"fromSeq"`
	Raw      json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes a snapshot loosely and keeps its raw bytes.
func (s *Snapshot) UnmarshalJSON(b []byte) error {
	type plain Snapshot
	var p plain
	if err := looseUnmarshal(b, &p); err != nil {
		return err
	}
	*s = Snapshot(p)
	s.Raw = cloneRaw(b)
	return nil
}

// Terminal decodes the state as a terminal channel's state.
func (s Snapshot) Terminal() (TerminalState, error) {
	var t TerminalState
	if len(s.State) == 0 {
		return t, fmt.Errorf("snapshot of %s has no state", s.Resource)
	}
	err := json.Unmarshal(s.State, &t)
	return t, err
}

// Root decodes the state as the root channel's state.
func (s Snapshot) Root() (RootState, error) {
	var r RootState
	if len(s.State) == 0 {
		return r, fmt.Errorf("snapshot of %s has no state", s.Resource)
	}
	err := json.Unmarshal(s.State, &r)
	return r, err
}

// Claim is a terminal's owner; Kind is "client" or "session".
type Claim struct {
	Kind       string `json:"kind"`
	ClientID   string `json:"clientId,omitempty"`
	Session    string `json:"session,omitempty"`
	Chat       string `json:"chat,omitempty"`
	TurnID     string `json:"turnId,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
}

// ClientClaim returns a client claim naming clientID.
func ClientClaim(clientID string) *Claim { return &Claim{Kind: "client", ClientID: clientID} }

// Lifecycle is a terminal's `running`/`exited` status.
type Lifecycle struct {
	Status   string `json:"status"`
	ExitCode *int   `json:"exitCode,omitempty"`
}

// ContentPart is one `unclassified` or `command` part of a terminal's content.
type ContentPart struct {
	Type        string          `json:"type"`
	Value       string          `json:"value,omitempty"`
	CommandID   string          `json:"commandId,omitempty"`
	CommandLine string          `json:"commandLine,omitempty"`
	Output      string          `json:"output,omitempty"`
	Timestamp   int64           `json:"timestamp,omitempty"`
	IsComplete  bool            `json:"isComplete,omitempty"`
	ExitCode    *int            `json:"exitCode,omitempty"`
	DurationMs  *int64          `json:"durationMs,omitempty"`
	Raw         json.RawMessage `json:"-"` // as received; nil once Terminal.Apply changed the part
}

// UnmarshalJSON decodes a content part loosely and keeps its raw bytes.
func (p *ContentPart) UnmarshalJSON(b []byte) error {
	type plain ContentPart
	var q plain
	if err := looseUnmarshal(b, &q); err != nil {
		return err
	}
	*p = ContentPart(q)
	p.Raw = cloneRaw(b)
	return nil
}

// Text is the part's output: Value for unclassified parts, Output for command parts.
func (p ContentPart) Text() string {
	if p.Type == "command" {
		return p.Output
	}
	return p.Value
}

// ContentText concatenates the output of parts in order (the raw stream reconstruction rule).
func ContentText(parts []ContentPart) string {
	n := 0
	for _, p := range parts {
		n += len(p.Text())
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = append(b, p.Text()...)
	}
	return string(b)
}

// TerminalState is the state of a terminal channel.
type TerminalState struct {
	Title                    string          `json:"title"`
	Cwd                      *string         `json:"cwd,omitempty"`
	Cols                     *int            `json:"cols,omitempty"`
	Rows                     *int            `json:"rows,omitempty"`
	Content                  []ContentPart   `json:"content"`
	Claim                    *Claim          `json:"claim,omitempty"`
	Lifecycle                *Lifecycle      `json:"lifecycle,omitempty"`
	ExitCode                 *int            `json:"exitCode,omitempty"`
	IsPty                    *bool           `json:"isPty,omitempty"`
	SupportsCommandDetection *bool           `json:"supportsCommandDetection,omitempty"`
	Raw                      json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes a terminal state loosely and keeps its raw bytes.
func (t *TerminalState) UnmarshalJSON(b []byte) error {
	type plain TerminalState
	var p plain
	if err := looseUnmarshal(b, &p); err != nil {
		return err
	}
	*t = TerminalState(p)
	t.Raw = cloneRaw(b)
	return nil
}

// Text is the terminal's content as one string.
func (t TerminalState) Text() string { return ContentText(t.Content) }

// TerminalInfo is one entry of the root channel's terminal catalogue.
type TerminalInfo struct {
	Resource  string          `json:"resource"`
	Title     string          `json:"title"`
	Claim     *Claim          `json:"claim,omitempty"`
	Lifecycle *Lifecycle      `json:"lifecycle,omitempty"`
	ExitCode  *int            `json:"exitCode,omitempty"`
	Raw       json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes a catalogue entry loosely and keeps its raw bytes.
func (t *TerminalInfo) UnmarshalJSON(b []byte) error {
	type plain TerminalInfo
	var p plain
	if err := looseUnmarshal(b, &p); err != nil {
		return err
	}
	*t = TerminalInfo(p)
	t.Raw = cloneRaw(b)
	return nil
}

// RootState is the state of the root channel.
type RootState struct {
	Agents    []json.RawMessage `json:"agents"`
	Terminals []TerminalInfo    `json:"terminals"`
	Raw       json.RawMessage   `json:"-"`
}

// UnmarshalJSON decodes a root state loosely and keeps its raw bytes.
func (r *RootState) UnmarshalJSON(b []byte) error {
	type plain RootState
	var p plain
	if err := looseUnmarshal(b, &p); err != nil {
		return err
	}
	*r = RootState(p)
	r.Raw = cloneRaw(b)
	return nil
}

// Terminal finds the catalogue entry for resource.
func (r RootState) Terminal(resource string) (TerminalInfo, bool) {
	for _, t := range r.Terminals {
		if t.Resource == resource {
			return t, true
		}
	}
	return TerminalInfo{}, false
}

// PeerInfo is the informational clientInfo/serverInfo object.
type PeerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Title   string `json:"title,omitempty"`
}

// InitializeParams are the params of `initialize`; Channel defaults to RootChannel.
type InitializeParams struct {
	Channel              string         `json:"channel"`
	ProtocolVersions     []string       `json:"protocolVersions"`
	ClientID             string         `json:"clientId"`
	ClientInfo           *PeerInfo      `json:"clientInfo,omitempty"`
	InitialSubscriptions []string       `json:"initialSubscriptions,omitempty"`
	Locale               string         `json:"locale,omitempty"`
	Meta                 map[string]any `json:"_meta,omitempty"`
}

// InitializeResult is the result of `initialize`.
type InitializeResult struct {
	ProtocolVersion       string          `json:"protocolVersion"`
	ServerSeq             uint64          `json:"serverSeq"`
	Snapshots             []Snapshot      `json:"snapshots"`
	ServerInfo            *PeerInfo       `json:"serverInfo,omitempty"`
	DefaultDirectory      string          `json:"defaultDirectory,omitempty"`
	TerminalCommandPrefix *string         `json:"terminalCommandPrefix,omitempty"`
	Meta                  json.RawMessage `json:"_meta,omitempty"`
	Raw                   json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes an initialize result loosely and keeps its raw bytes.
func (r *InitializeResult) UnmarshalJSON(b []byte) error {
	type plain InitializeResult
	var p plain
	if err := looseUnmarshal(b, &p); err != nil {
		return err
	}
	*r = InitializeResult(p)
	r.Raw = cloneRaw(b)
	return nil
}

// Snapshot finds the snapshot of resource.
func (r InitializeResult) Snapshot(resource string) (Snapshot, bool) {
	return findSnapshot(r.Snapshots, resource)
}

// ReconnectResult is the result of `reconnect`: Type "replay" (Actions, Missing) or "snapshot" (Snapshots).
type ReconnectResult struct {
	Type      string          `json:"type"`
	Actions   []Envelope      `json:"actions,omitempty"`
	Missing   []string        `json:"missing,omitempty"`
	Snapshots []Snapshot      `json:"snapshots,omitempty"`
	Raw       json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes a reconnect result loosely and keeps its raw bytes.
func (r *ReconnectResult) UnmarshalJSON(b []byte) error {
	type plain ReconnectResult
	var p plain
	if err := looseUnmarshal(b, &p); err != nil {
		return err
	}
	*r = ReconnectResult(p)
	r.Raw = cloneRaw(b)
	return nil
}

// Snapshot finds the snapshot of resource in a "snapshot" result.
func (r ReconnectResult) Snapshot(resource string) (Snapshot, bool) {
	return findSnapshot(r.Snapshots, resource)
}

func findSnapshot(list []Snapshot, resource string) (Snapshot, bool) {
	for _, s := range list {
		if s.Resource == resource {
			return s, true
		}
	}
	return Snapshot{}, false
}

// CreateParams are the params of `createTerminal`; zero-valued optional fields are omitted.
type CreateParams struct {
	Channel string         `json:"channel"`
	Claim   *Claim         `json:"claim,omitempty"`
	Name    string         `json:"name,omitempty"`
	Cwd     string         `json:"cwd,omitempty"`
	Cols    int            `json:"cols,omitempty"`
	Rows    int            `json:"rows,omitempty"`
	Meta    map[string]any `json:"_meta,omitempty"`
}

// InputAction builds a `terminal/input` action.
func InputAction(data string) map[string]any {
	return map[string]any{"type": "terminal/input", "data": data}
}

// ResizedAction builds a `terminal/resized` action.
func ResizedAction(cols, rows int) map[string]any {
	return map[string]any{"type": "terminal/resized", "cols": cols, "rows": rows}
}

// ClaimedAction builds a `terminal/claimed` action.
func ClaimedAction(claim Claim) map[string]any {
	return map[string]any{"type": "terminal/claimed", "claim": claim}
}

// TitleChangedAction builds a `terminal/titleChanged` action.
func TitleChangedAction(title string) map[string]any {
	return map[string]any{"type": "terminal/titleChanged", "title": title}
}

// ClearedAction builds a `terminal/cleared` action.
func ClearedAction() map[string]any {
	return map[string]any{"type": "terminal/cleared"}
}
