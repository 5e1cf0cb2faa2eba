package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/shellgate/shellgate/ports"
)

// timeLayout is RFC 3339 with milliseconds, always in UTC, so lines sort and
// compare as text and read the same on every host.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// maxLine bounds one record. A command runs as one argv string, which Linux
// caps at 128 KiB, so a real record is far below this; a longer one is refused
// on write and reported as malformed on read rather than buffered unbounded.
const maxLine = 1 << 20

// line is one record as stored: seed 002's snake_case keys, empty ones left
// out. The on-disk shape is this adapter's alone; ports.AuditEvent knows
// nothing of JSON.
type line struct {
	Timestamp  string            `json:"timestamp"`
	Event      string            `json:"event"`
	SessionID  string            `json:"session_id,omitempty"`
	AgentID    string            `json:"agent_id,omitempty"`
	AgentRole  string            `json:"agent_role,omitempty"`
	ApprovalID string            `json:"approval_id,omitempty"`
	Command    string            `json:"command,omitempty"`
	Risk       string            `json:"risk,omitempty"`
	Status     string            `json:"status,omitempty"`
	ApprovedBy string            `json:"approved_by,omitempty"`
	Result     *result           `json:"result,omitempty"`
	Reasons    []string          `json:"reasons,omitempty"`
	Detail     map[string]string `json:"detail,omitempty"`
}

// result keeps return_code even when it is 0: a success is a fact, not an
// absent field.
type result struct {
	ReturnCode    int         `json:"return_code"`
	ExecutionTime json.Number `json:"execution_time"`
	Signal        string      `json:"signal,omitempty"`
}

// encode turns e into one line, newline included. It refuses an event with
// no time or kind: a record that cannot say when or what is no audit.
func encode(e ports.AuditEvent) ([]byte, error) {
	if e.Time.IsZero() {
		return nil, errors.New("audit event has no time; refusing to write an undated record")
	}
	if e.Event == "" {
		return nil, errors.New("audit event has no kind; refusing to write it")
	}
	l := line{
		Timestamp:  e.Time.UTC().Format(timeLayout),
		Event:      string(e.Event),
		SessionID:  e.SessionID,
		AgentID:    e.AgentID,
		AgentRole:  e.AgentRole,
		ApprovalID: e.ApprovalID,
		Command:    e.Command,
		Risk:       e.Risk,
		Status:     e.Status,
		ApprovedBy: e.ApprovedBy,
		Reasons:    e.Reasons,
		Detail:     e.Detail,
	}
	if r := e.Result; r != nil {
		l.Result = &result{
			ReturnCode:    r.ReturnCode,
			ExecutionTime: seconds(r.ExecutionTime),
			Signal:        r.Signal,
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	// Commands are read by people grepping for `2>&1` or `<file`; HTML
	// escaping would hide them. Newlines and control characters are still
	// escaped, so a record is always exactly one line.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(l); err != nil {
		return nil, fmt.Errorf("encode audit event: %w", err)
	}
	if b.Len() > maxLine {
		return nil, fmt.Errorf("audit record of %d bytes is over the %d-byte limit; refusing it", b.Len(), maxLine)
	}
	return b.Bytes(), nil
}

// seconds writes a duration as seconds to the microsecond, as the seed's
// execution_time (0.123).
func seconds(d time.Duration) json.Number {
	return json.Number(strconv.FormatFloat(d.Round(time.Microsecond).Seconds(), 'f', -1, 64))
}

// decode reads one stored line back.
func decode(b []byte) (ports.AuditEvent, error) {
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		return ports.AuditEvent{}, err
	}
	if l.Event == "" {
		return ports.AuditEvent{}, errors.New("no event")
	}
	ts, err := time.Parse(time.RFC3339Nano, l.Timestamp)
	if err != nil {
		return ports.AuditEvent{}, fmt.Errorf("timestamp: %w", err)
	}
	e := ports.AuditEvent{
		Time:       ts,
		Event:      ports.AuditEventKind(l.Event),
		SessionID:  l.SessionID,
		AgentID:    l.AgentID,
		AgentRole:  l.AgentRole,
		ApprovalID: l.ApprovalID,
		Command:    l.Command,
		Risk:       l.Risk,
		Status:     l.Status,
		ApprovedBy: l.ApprovedBy,
		Reasons:    l.Reasons,
		Detail:     l.Detail,
	}
	if r := l.Result; r != nil {
		secs, err := r.ExecutionTime.Float64()
		if err != nil && r.ExecutionTime != "" {
			return ports.AuditEvent{}, fmt.Errorf("execution_time: %w", err)
		}
		e.Result = &ports.AuditResult{
			ReturnCode:    r.ReturnCode,
			ExecutionTime: time.Duration(math.Round(secs * float64(time.Second))),
			Signal:        r.Signal,
		}
	}
	return e, nil
}
