package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shellgate/shellgate/ports"
)

// Recovery is what Recover found and recorded.
type Recovery struct {
	// TornBytes is the length of the torn last line cut off; 0 when the log
	// ended cleanly.
	TornBytes int64
	// Lost are the command ids given a "lost" record.
	Lost []string
}

// tornSample is how much of a torn line its repair record keeps.
const tornSample = 256

// Recover repairs what a crash left, before the log takes new records:
// a torn last line is cut off and a log_repaired record says how long it
// was and how it began; then every agent command that started (an execute
// record with status "running", or an "approved" one) and has no result
// record gets an execute record with status "lost", carrying the start
// record's session, agent, command and ids. Call it once, at start, before
// any command can run.
func (l *Log) Recover(ctx context.Context, now time.Time) (Recovery, error) {
	var rec Recovery
	l.mu.Lock()
	torn := l.torn
	l.mu.Unlock()
	if torn {
		n, sample, err := cutTornLine(l.path)
		if err != nil {
			return rec, err
		}
		l.mu.Lock()
		l.torn = false
		l.mu.Unlock()
		rec.TornBytes = n
		if err := l.Record(ctx, ports.AuditEvent{
			Time: now, Event: ports.AuditLogRepaired, Status: "torn_line_removed",
			Detail: map[string]string{
				"bytes":  strconv.FormatInt(n, 10),
				"sample": sample,
				"reason": "the log ended inside a line, as a crash mid-write leaves it",
			},
		}); err != nil {
			return rec, err
		}
	}

	// A command's start may be in a rotated file, its result in this one.
	var readers []io.Reader
	for _, p := range Files(l.path) {
		f, err := os.Open(p)
		if err != nil {
			return rec, fmt.Errorf("audit log %s: %w", p, err)
		}
		defer f.Close()
		readers = append(readers, f)
	}
	started := map[string]ports.AuditEvent{}
	var order []string
	err := Read(io.MultiReader(readers...), Filter{}, func(e ports.AuditEvent) error {
		id := e.Detail["command_id"]
		if id == "" {
			return nil
		}
		switch {
		case e.Event == ports.AuditExecute && e.Status == "running", e.Event == ports.AuditApproved:
			if _, seen := started[id]; !seen {
				order = append(order, id)
			}
			started[id] = e
		case e.Event == ports.AuditExecute:
			delete(started, id) // its result, or an earlier lost record
		}
		return nil
	})
	var bad *MalformedError
	if err != nil && !errors.As(err, &bad) {
		return rec, err
	}
	for _, id := range order {
		s, ok := started[id]
		if !ok {
			continue
		}
		lost := ports.AuditEvent{
			Time: now, Event: ports.AuditExecute, Status: ports.AuditStatusLost,
			SessionID: s.SessionID, AgentID: s.AgentID, AgentRole: s.AgentRole,
			ApprovalID: s.ApprovalID, Command: s.Command, Risk: s.Risk, ApprovedBy: s.ApprovedBy,
			Detail: map[string]string{
				"command_id": id,
				"started_at": s.Time.UTC().Format(time.RFC3339Nano),
				"reason":     "the daemon stopped while the command ran and never recorded its result; its processes were ended",
			},
		}
		if t := s.Detail["terminal"]; t != "" {
			lost.Detail["terminal"] = t
		}
		if err := l.Record(ctx, lost); err != nil {
			return rec, err
		}
		rec.Lost = append(rec.Lost, id)
	}
	return rec, nil
}

// cutTornLine truncates the file at path after its last newline and returns
// how many bytes went and how they began.
func cutTornLine(path string) (int64, string, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, "", fmt.Errorf("audit log %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, "", fmt.Errorf("audit log %s: %w", path, err)
	}
	size := fi.Size()
	keep := int64(0)
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	for end := size; end > 0; {
		start := max(end-chunk, 0)
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, "", fmt.Errorf("audit log %s: %w", path, err)
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			keep = start + int64(i) + 1
			break
		}
		end = start
	}
	head := make([]byte, min(size-keep, tornSample))
	_, _ = f.ReadAt(head, keep)
	sample := strings.ToValidUTF8(string(head), string(utf8.RuneError))
	if err := f.Truncate(keep); err != nil {
		return 0, "", fmt.Errorf("audit log %s: cut the torn last line: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return 0, "", fmt.Errorf("audit log %s: %w", path, err)
	}
	return size - keep, sample, nil
}
