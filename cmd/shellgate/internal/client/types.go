package client

import (
	"encoding/json"
	"fmt"
	"strings"
)

// RPCError is an error answer from the daemon.
type RPCError struct {
	// Method is the request it answered.
	Method  string          `json:"-"`
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// codeNames are the protocol's names for its error codes.
var codeNames = map[int]string{
	-32700: "ParseError", -32600: "InvalidRequest", -32601: "MethodNotFound",
	-32602: "InvalidParams", -32603: "InternalError",
	-32003: "AlreadyExists", -32005: "UnsupportedProtocolVersion",
	-32007: "AuthRequired", -32008: "NotFound", -32009: "PermissionDenied",
	-32010: "AlreadyExists", -32011: "Conflict",
}

// Error reads like "the daemon refused createTerminal: guest may not
// terminal:create here (-32009 PermissionDenied)".
func (e *RPCError) Error() string {
	code := fmt.Sprint(e.Code)
	if name, ok := codeNames[e.Code]; ok {
		code += " " + name
	}
	method := e.Method
	if method == "" {
		method = "the request"
	}
	return fmt.Sprintf("the daemon refused %s: %s (%s)", method, e.Message, code)
}

// Origin names the client that dispatched an action.
type Origin struct {
	ClientID  string `json:"clientId"`
	ClientSeq int64  `json:"clientSeq"`
}

// Envelope is one action notification.
type Envelope struct {
	Channel   string
	ServerSeq uint64
	// Origin is set on echoes of client-dispatched actions.
	Origin *Origin
	// RejectionReason is set when the daemon refused a dispatched action.
	RejectionReason string
	Action          Action
	// Raw is the action as it was sent.
	Raw json.RawMessage
}

// Action holds the fields of the actions this client reads; the others
// keep only their Type.
type Action struct {
	Type string `json:"type"`
	// Data is terminal/data output or terminal/input text.
	Data string `json:"data"`
	// Cols and Rows are terminal/resized's size.
	Cols int `json:"cols"`
	Rows int `json:"rows"`
	// ExitCode is terminal/exited's code, when the process had one.
	ExitCode *int `json:"exitCode"`
	// Title is terminal/titleChanged's title.
	Title string `json:"title"`
	// Terminals is root/terminalsChanged's full list.
	Terminals []TerminalInfo `json:"terminals"`
}

// Snapshot is a channel's state at FromSeq.
type Snapshot struct {
	Resource string          `json:"resource"`
	State    json.RawMessage `json:"state"`
	FromSeq  uint64          `json:"fromSeq"`
}

// Terminal decodes a terminal channel's state.
func (s Snapshot) Terminal() (TerminalState, error) {
	var t TerminalState
	if err := json.Unmarshal(s.State, &t); err != nil {
		return t, fmt.Errorf("%s: not a terminal state: %w", s.Resource, err)
	}
	return t, nil
}

// Root decodes the root channel's state.
func (s Snapshot) Root() (RootState, error) {
	var r RootState
	if err := json.Unmarshal(s.State, &r); err != nil {
		return r, fmt.Errorf("%s: not a root state: %w", s.Resource, err)
	}
	return r, nil
}

// RootState is the root channel's state.
type RootState struct {
	Terminals []TerminalInfo `json:"terminals"`
	Meta      struct {
		// Holders names the principal each client id holding a listed
		// terminal is signed in as; empty from a daemon that does not say.
		Holders map[string]string `json:"shellgate/holders"`
	} `json:"_meta"`
}

// Holder is who holds t, for a person to read: the name of the principal
// behind a client claim when the daemon gave it, else the claim itself.
func (r RootState) Holder(t TerminalInfo) string {
	if t.Claim.Kind == "client" {
		if name := r.Meta.Holders[t.Claim.ClientID]; name != "" {
			return name
		}
	}
	return t.Claim.String()
}

// Claim says who owns a terminal.
type Claim struct {
	Kind     string `json:"kind"`
	ClientID string `json:"clientId,omitempty"`
	Session  string `json:"session,omitempty"`
	Chat     string `json:"chat,omitempty"`
}

// String is "client <id>" or "session <uri>".
func (c Claim) String() string {
	switch c.Kind {
	case "client":
		return "client " + c.ClientID
	case "session":
		return "session " + c.Session
	}
	return c.Kind
}

// Lifecycle is running or exited (with a code when there was one).
type Lifecycle struct {
	Status   string `json:"status"`
	ExitCode *int   `json:"exitCode,omitempty"`
}

// exit reads the exit from the lifecycle, or from the flat exitCode of
// shapes before 0.9.0.
func exit(l *Lifecycle, legacy *int) (exited bool, code *int) {
	if l != nil {
		if l.Status != "exited" {
			return false, nil
		}
		if l.ExitCode != nil {
			return true, l.ExitCode
		}
		return true, legacy
	}
	return legacy != nil, legacy
}

// status words an exit for people: "running", "exited 3", "exited".
func status(l *Lifecycle, legacy *int) string {
	exited, code := exit(l, legacy)
	switch {
	case !exited && l != nil && l.Status != "" && l.Status != "running":
		return l.Status
	case !exited:
		return "running"
	case code != nil:
		return fmt.Sprintf("exited %d", *code)
	}
	return "exited"
}

// TerminalInfo is one entry of the root list.
type TerminalInfo struct {
	Resource  string     `json:"resource"`
	Title     string     `json:"title"`
	Claim     Claim      `json:"claim"`
	Lifecycle *Lifecycle `json:"lifecycle"`
	ExitCode  *int       `json:"exitCode"`
	Meta      struct {
		// Host is the machine the terminal runs on; empty from a daemon
		// that does not say.
		Host string `json:"shellgate/host"`
	} `json:"_meta"`
}

// Status is "running", "exited N" or "exited".
func (t TerminalInfo) Status() string { return status(t.Lifecycle, t.ExitCode) }

// TerminalState is a terminal channel's state.
type TerminalState struct {
	Title     string        `json:"title"`
	CWD       string        `json:"cwd"`
	Cols      int           `json:"cols"`
	Rows      int           `json:"rows"`
	Content   []ContentPart `json:"content"`
	Claim     Claim         `json:"claim"`
	IsPty     bool          `json:"isPty"`
	Lifecycle *Lifecycle    `json:"lifecycle"`
	ExitCode  *int          `json:"exitCode"`
	Meta      struct {
		// Screen draws the current screen on a blank terminal of the
		// terminal's size; the host sends it for pty terminals.
		Screen string `json:"shellgate/screen"`
	} `json:"_meta"`
}

// Draw is what shows the terminal as it is now: the retained output, then,
// when the host sent one, the current screen over it (leaving the alternate
// screen first, so that the screen's drawing starts on the main one).
func (s TerminalState) Draw() string {
	if s.Meta.Screen == "" {
		return s.Text()
	}
	return s.Text() + "\x1b[?1049l" + s.Meta.Screen
}

// ContentPart is unclassified output or one detected command's output.
type ContentPart struct {
	Type   string `json:"type"`
	Value  string `json:"value"`
	Output string `json:"output"`
}

// Text is the retained output as one stream, in order.
func (s TerminalState) Text() string {
	var b strings.Builder
	for _, p := range s.Content {
		if p.Type == "command" {
			b.WriteString(p.Output)
		} else {
			b.WriteString(p.Value)
		}
	}
	return b.String()
}

// Exited says whether the process has ended, and its code when known.
func (s TerminalState) Exited() (bool, *int) { return exit(s.Lifecycle, s.ExitCode) }
