package audit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shellgate/shellgate/ports"
)

// Filter selects records. Zero fields select everything.
type Filter struct {
	// SessionID keeps only this session's records.
	SessionID string
	// AgentID keeps only this agent's records.
	AgentID string
	// Events keeps only records of these kinds.
	Events []ports.AuditEventKind
	// Since keeps records at or after this instant.
	Since time.Time
	// Until keeps records before this instant, so consecutive windows
	// neither miss nor repeat a record.
	Until time.Time
}

// Match reports whether e passes the filter.
func (f Filter) Match(e ports.AuditEvent) bool {
	switch {
	case f.SessionID != "" && e.SessionID != f.SessionID:
		return false
	case f.AgentID != "" && e.AgentID != f.AgentID:
		return false
	case len(f.Events) > 0 && !slices.Contains(f.Events, e.Event):
		return false
	case !f.Since.IsZero() && e.Time.Before(f.Since):
		return false
	case !f.Until.IsZero() && !e.Time.Before(f.Until):
		return false
	}
	return true
}

// maxReported bounds how many malformed line numbers are kept.
const maxReported = 20

// MalformedError lists the lines Read skipped because they are not records:
// a line torn by a crash, an edit by hand, one over the size limit.
type MalformedError struct {
	// Lines are the first malformed line numbers (1-based), at most 20.
	Lines []int
	// Count is how many lines were malformed in all.
	Count int
}

// Error names the skipped lines.
func (e *MalformedError) Error() string {
	nums := make([]string, len(e.Lines))
	for i, n := range e.Lines {
		nums[i] = strconv.Itoa(n)
	}
	more := ""
	if e.Count > len(e.Lines) {
		more = fmt.Sprintf(" and %d more", e.Count-len(e.Lines))
	}
	return fmt.Sprintf("audit log has %d malformed line(s), skipped: line %s%s", e.Count, strings.Join(nums, ", "), more)
}

// Read calls fn, in file order, with every record in r that passes filter.
// It stops at the first error fn returns and returns that error as is.
// Malformed lines do not stop it — the rest of the log is still evidence —
// but once r is exhausted they are reported as a *MalformedError, so a
// reader never mistakes a damaged log for a clean one.
func Read(r io.Reader, filter Filter, fn func(ports.AuditEvent) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var bad MalformedError
	var buf []byte
	for n := 1; ; n++ {
		text, tooLong, err := readLine(br, &buf)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read audit log line %d: %w", n, err)
		}
		if errors.Is(err, io.EOF) && len(text) == 0 && !tooLong {
			break
		}
		switch {
		case tooLong:
			bad.add(n)
		case len(bytes.TrimSpace(text)) == 0:
			// Blank lines hold nothing and claim nothing.
		default:
			e, derr := decode(text)
			if derr != nil {
				bad.add(n)
				break
			}
			if filter.Match(e) {
				if ferr := fn(e); ferr != nil {
					return ferr
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if bad.Count > 0 {
		return &bad
	}
	return nil
}

func (e *MalformedError) add(line int) {
	e.Count++
	if len(e.Lines) < maxReported {
		e.Lines = append(e.Lines, line)
	}
}

// readLine returns the next line without its newline, reusing *buf. A line
// over maxLine is skipped to its end and reported as tooLong. err is io.EOF
// when the input ended (text may still hold a last line with no newline).
func readLine(br *bufio.Reader, buf *[]byte) (text []byte, tooLong bool, err error) {
	*buf = (*buf)[:0]
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(*buf)+len(chunk) > maxLine+1 {
				tooLong = true
				*buf = (*buf)[:0]
			} else {
				*buf = append(*buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(*buf, []byte{'\n'}), tooLong, err
	}
}
