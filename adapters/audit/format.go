package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shellgate/shellgate/ports"
)

// timeLayout is RFC 3339 with milliseconds, always in UTC, so lines sort and
// compare as text and read the same on every host.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// maxLine bounds one record. A command runs as one argv string, which Linux
// caps at 128 KiB, so a real record is far below this. A longer one has its
// longest fields cut to fit (see fit) rather than being refused: an agent's
// text, such as a command's description, must never cost the record of what
// the command did. The reader reports a line over this as malformed rather
// than buffering it unbounded.
const maxLine = 1 << 20

// CutFieldsKey is the detail key a record whose fields were cut to fit
// maxLine carries: the fields cut, comma-separated ("detail.description",
// "reasons", "agent_id", "command").
const CutFieldsKey = "cut_fields"

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
	if e.Event == ports.AuditBlocked {
		capRefused(&l)
	}
	if r := e.Result; r != nil {
		l.Result = &result{
			ReturnCode:    r.ReturnCode,
			ExecutionTime: seconds(r.ExecutionTime),
			Signal:        r.Signal,
		}
	}
	b, err := marshal(l)
	if err != nil {
		return nil, err
	}
	if len(b) > maxLine {
		return fit(l)
	}
	return b, nil
}

// RefusedFieldLimit bounds each text field of a refusal's record (a
// "blocked" event): a refused command did nothing, and a client that sends
// 64 KiB commands to be refused must not make the log grow at 64 KiB a
// request. The command's SHA-256 is kept beside its cut text, so repeats of
// one refused command can still be told apart and counted.
const RefusedFieldLimit = 1 << 10

// CommandDigestKey is the detail key holding a cut command's SHA-256 (hex).
const CommandDigestKey = "command_sha256"

// capRefused cuts a refusal's fields to RefusedFieldLimit, each with a
// marker of its whole length, and names them under CutFieldsKey.
func capRefused(l *line) {
	over := func(v string) bool { return len(v) > RefusedFieldLimit }
	if !over(l.Command) && !slices.ContainsFunc(l.Reasons, over) && !slices.ContainsFunc(slices.Collect(maps.Values(l.Detail)), over) {
		return
	}
	// The event's own map and slice belong to the caller.
	detail := maps.Clone(l.Detail)
	if detail == nil {
		detail = map[string]string{}
	}
	var cut []string
	for _, k := range slices.Sorted(maps.Keys(detail)) {
		if over(detail[k]) {
			detail[k] = cutField(detail[k], RefusedFieldLimit)
			cut = append(cut, "detail."+k)
		}
	}
	if over(l.Command) {
		sum := sha256.Sum256([]byte(l.Command))
		detail[CommandDigestKey] = hex.EncodeToString(sum[:])
		l.Command = cutField(l.Command, RefusedFieldLimit)
		cut = append(cut, "command")
	}
	if slices.ContainsFunc(l.Reasons, over) {
		l.Reasons = slices.Clone(l.Reasons)
		for i, r := range l.Reasons {
			if over(r) {
				l.Reasons[i] = cutField(r, RefusedFieldLimit)
			}
		}
		cut = append(cut, "reasons")
	}
	detail[CutFieldsKey] = strings.Join(cut, ",")
	l.Detail = detail
}

func marshal(l line) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	// Commands are read by people grepping for `2>&1` or `<file`; HTML
	// escaping would hide them. Newlines and control characters are still
	// escaped, so a record is always exactly one line.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(l); err != nil {
		return nil, fmt.Errorf("encode audit event: %w", err)
	}
	return b.Bytes(), nil
}

// fit cuts the fields of a record over maxLine until it fits, each with a
// marker that says how long it was, and names them under CutFieldsKey.
// Everything but the command is cut first, the longest fields only, to
// ever shorter lengths; the command (bounded by the gate long before this)
// goes last, since it is what the record is about.
func fit(l line) ([]byte, error) {
	cut := map[string]bool{}
	// orig is each cut field as it was, so every cut starts from the whole
	// text and its marker gives the whole length.
	orig := map[string]string{}
	shorten := func(name, report, cur string, limit int) string {
		o, seen := orig[name]
		if !seen {
			o = cur
		}
		if len(o) <= limit || seen && len(cur) <= limit {
			return cur
		}
		orig[name] = o
		cut[report] = true
		return cutField(o, limit)
	}
	l.Detail = maps.Clone(l.Detail)
	l.Reasons = slices.Clone(l.Reasons)
	try := func() ([]byte, bool, error) {
		if len(cut) > 0 {
			if l.Detail == nil {
				l.Detail = map[string]string{}
			}
			l.Detail[CutFieldsKey] = strings.Join(slices.Sorted(maps.Keys(cut)), ",")
		}
		b, err := marshal(l)
		return b, err == nil && len(b) <= maxLine, err
	}
	for limit := 64 << 10; limit >= 64; limit /= 4 {
		for k, v := range l.Detail {
			if k != CutFieldsKey {
				l.Detail[k] = shorten("detail."+k, "detail."+k, v, limit)
			}
		}
		for i, r := range l.Reasons {
			l.Reasons[i] = shorten("reasons."+strconv.Itoa(i), "reasons", r, limit)
		}
		for name, f := range map[string]*string{
			"session_id": &l.SessionID, "agent_id": &l.AgentID, "agent_role": &l.AgentRole,
			"approval_id": &l.ApprovalID, "risk": &l.Risk, "status": &l.Status, "approved_by": &l.ApprovedBy,
		} {
			*f = shorten(name, name, *f, limit)
		}
		if b, ok, err := try(); ok || err != nil {
			return b, err
		}
	}
	for limit := 256 << 10; limit >= 64; limit /= 4 {
		l.Command = shorten("command", "command", l.Command, limit)
		if b, ok, err := try(); ok || err != nil {
			return b, err
		}
	}
	// Only a record with thousands of fields gets here.
	if len(l.Reasons) > 16 {
		l.Reasons = append(l.Reasons[:16], fmt.Sprintf("… [%d more reasons cut by the audit log]", len(l.Reasons)-16))
		cut["reasons"] = true
	}
	for _, k := range slices.Sorted(maps.Keys(l.Detail)) {
		if len(l.Detail) <= 64 {
			break
		}
		if k != CutFieldsKey {
			delete(l.Detail, k)
			cut["detail"] = true
		}
	}
	b, ok, err := try()
	if err == nil && !ok {
		err = fmt.Errorf("audit record of %d bytes is over the %d-byte limit even with its fields cut; refusing it", len(b), maxLine)
	}
	return b, err
}

// cutField keeps the first limit bytes of s (len(s) > limit), never half
// a character, and says how long it was.
func cutField(s string, limit int) string {
	n := limit
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("… [cut by the audit log: %d bytes in all]", len(s))
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
