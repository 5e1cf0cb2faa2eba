// Package ahp speaks the Agent Host Protocol: JSON-RPC 2.0 messages, version
// negotiation, the root and terminal channels, dispatch and reconnect. It
// drives app/terminals over any ports.Conn.
package ahp

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// JSON-RPC and AHP error codes.
const (
	CodeParseError         = -32700
	CodeInvalidRequest     = -32600
	CodeMethodNotFound     = -32601
	CodeInvalidParams      = -32602
	CodeInternalError      = -32603
	CodeAlreadyExists      = -32003
	CodeUnsupportedVersion = -32005
	CodeAuthRequired       = -32007
	CodeNotFound           = -32008
	CodePermissionDenied   = -32009
	// CodeLimitReached is shellgate's own: one of the host's caps (a
	// person's terminals, the daemon's open files, connections) refused
	// the request; the message names the cap and what frees a place, and
	// data.limit names its config key. It lies outside the -32000…-32099
	// range AHP assigns, so no later AHP code can collide with it.
	CodeLimitReached = -31001
)

// Error is a JSON-RPC error answer.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

func errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func invalidParams(format string, args ...any) *Error {
	return errorf(CodeInvalidParams, format, args...)
}

// message is one decoded incoming frame.
type message struct {
	ID     json.RawMessage // nil for a notification
	Method string
	Params json.RawMessage
}

func (m message) isRequest() bool { return m.ID != nil }

// decode parses one frame. An error carries the answer to send (with the id
// when one could be read).
func decode(frame []byte) (message, *Error) {
	if !json.Valid(frame) {
		var v any
		return message{}, errorf(CodeParseError, "That is not valid JSON: %v", json.Unmarshal(frame, &v))
	}
	raw, ok := objectMembers(frame)
	if !ok {
		return message{}, errorf(CodeInvalidRequest, "A message must be one JSON-RPC 2.0 object (batches are not used by this protocol)")
	}
	var m message
	if id, ok := raw["id"]; ok && !bytes.Equal(id, []byte("null")) {
		if !validID(id) {
			return message{}, errorf(CodeInvalidRequest, "id must be a number or a string")
		}
		m.ID = id
	}
	if version, ok := jsonString(raw["jsonrpc"]); !ok || version != "2.0" {
		return m, errorf(CodeInvalidRequest, `jsonrpc must be "2.0"`)
	}
	method, ok := jsonString(raw["method"])
	if !ok || method == "" {
		return m, errorf(CodeInvalidRequest, "method must be a non-empty string")
	}
	m.Method = method
	m.Params = raw["params"]
	if len(m.Params) == 0 || bytes.Equal(m.Params, []byte("null")) {
		m.Params = []byte("{}")
	}
	if m.Params[0] != '{' {
		return m, invalidParams("params must be an object")
	}
	return m, nil
}

func validID(id json.RawMessage) bool {
	switch id[0] {
	case '"':
		_, ok := jsonString(id)
		return ok
	case '{', '[', 't', 'f':
		return false
	}
	var n json.Number
	return json.Unmarshal(id, &n) == nil
}

// params reads an object's fields one by one, so each wrong type is
// answered by naming its field.
type params map[string]json.RawMessage

// parseParams splits an object of a frame decode has checked.
func parseParams(raw json.RawMessage) (params, *Error) {
	p, ok := objectMembers(raw)
	if !ok {
		return nil, invalidParams("params must be an object")
	}
	return p, nil
}

func (p params) has(key string) bool {
	v, ok := p[key]
	return ok && !bytes.Equal(v, []byte("null"))
}

// str reads a required string field.
func (p params) str(key string) (string, *Error) {
	v, ok := p[key]
	if !ok {
		return "", invalidParams("%s is required", key)
	}
	s, ok := jsonString(v)
	if !ok {
		return "", invalidParams("%s must be a string", key)
	}
	return s, nil
}

// optStr reads an optional string; a value of another type is ignored.
func (p params) optStr(key string) (string, bool) {
	if v, ok := p[key]; ok {
		return jsonString(v)
	}
	return "", false
}

// optInt reads an optional integer; a value of another type is ignored.
func (p params) optInt(key string) (int64, bool) {
	if v, ok := p[key]; ok && len(v) > 0 && v[0] != '"' {
		return jsonInt(v)
	}
	return 0, false
}

// strings reads a required array of strings.
func (p params) strings(key string) ([]string, *Error) {
	v, ok := p[key]
	if !ok {
		return nil, invalidParams("%s is required", key)
	}
	var out []string
	if err := json.Unmarshal(v, &out); err != nil {
		return nil, invalidParams("%s must be an array of strings", key)
	}
	return out, nil
}

// optStrings reads an optional array of strings; a wrong type is an error.
func (p params) optStrings(key string) ([]string, *Error) {
	if !p.has(key) {
		return nil, nil
	}
	return p.strings(key)
}

// response is an answer to a request, queued in order with the events.
type response struct {
	ID     json.RawMessage
	Result any
	Err    *Error
	// closeAfter ends the connection once the answer is sent.
	closeAfter string
}

func (r response) encode() ([]byte, error) {
	id := r.ID
	if id == nil {
		id = json.RawMessage("null")
	}
	if r.Err != nil {
		return json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *Error          `json:"error"`
		}{"2.0", id, r.Err})
	}
	return json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{"2.0", id, r.Result})
}

// notification is a server notification other than an action.
type notification struct {
	Method string
	Params any
}

func (n notification) encode() ([]byte, error) {
	return json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", n.Method, n.Params})
}
