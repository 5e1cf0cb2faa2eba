package shellmarks

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shellgate/shellgate/domain/terminal"
)

// maxLine bounds the typed line kept for a command; a longer paste is cut,
// since the line is only what commandExecuted shows.
const maxLine = 16 << 10

// Tracker turns marks and typed input into the terminal actions of command
// detection (D12 in docs/protocol.md). It never reads a clock: the caller passes
// the time with each mark. Not safe for concurrent use.
type Tracker struct {
	nonce     string // when set, a 633 E line counts only with this nonce
	cwd       string // the last directory reported, as a file: URI
	announced bool   // commandDetectionAvailable was emitted

	seq    int       // commands started, for ids
	openID string    // the command between C and D; "" when none
	start  time.Time // when openID started

	reported    string // the last 633 E line since the prompt
	hasReported bool
	line        lineEditor
}

// NewTracker returns a tracker for a terminal whose directory is cwd (a
// file: URI, or "" when unknown), so that a first report of the same
// directory is no change. A non-empty nonce makes a 633 E command line count
// only when it carries that nonce: any program can print marks, only the
// shell's own integration script knows the nonce.
func NewTracker(cwd, nonce string) *Tracker {
	return &Tracker{cwd: cwd, nonce: nonce}
}

// Input reads bytes a client typed (terminal/input), to read the command
// line back when the shell does not report it.
func (t *Tracker) Input(p []byte) { t.line.feed(p) }

// Mark appends to acts the actions that m causes at now. A command's
// duration is now less its start on the monotonic clock, when both times
// carry it (time.Now's do), so a step of the wall clock does not change it.
func (t *Tracker) Mark(m Mark, now time.Time, acts []terminal.Action) []terminal.Action {
	if !t.announced {
		t.announced = true
		acts = append(acts, terminal.CommandDetectionAvailable{})
	}
	switch m.Kind {
	case PromptStart:
		// A prompt with a command still open means its D never came (the
		// shell was interrupted, or prints no D): close it without a code
		// rather than let the next command's output join it.
		acts = t.finish(nil, now, acts)
		t.line.reset()
		t.reported, t.hasReported = "", false
	case CommandLine:
		if t.nonce == "" || m.Nonce == t.nonce {
			t.reported, t.hasReported = m.CommandLine, true
		}
	case CommandStart:
		acts = t.finish(nil, now, acts)
		line := t.line.submitted()
		if t.hasReported {
			line = t.reported
		}
		t.seq++
		t.openID = "cmd-" + strconv.Itoa(t.seq)
		t.start = now
		t.line.reset()
		t.reported, t.hasReported = "", false
		acts = append(acts, terminal.CommandExecuted{
			CommandID:   t.openID,
			CommandLine: strings.TrimSpace(line),
			Timestamp:   now.UnixMilli(),
		})
	case CommandFinished:
		// A D with no C (an empty line, ^C at the prompt, the first prompt)
		// finishes nothing.
		acts = t.finish(m.ExitCode, now, acts)
	case Cwd:
		if uri := FileURI(m.Cwd); uri != t.cwd {
			t.cwd = uri
			acts = append(acts, terminal.CwdChanged{CWD: uri})
		}
	}
	return acts
}

// End appends the actions for the end of the process at now: a command
// still running (typically "exit") finishes with the process's exit code.
func (t *Tracker) End(exitCode *int, now time.Time, acts []terminal.Action) []terminal.Action {
	return t.finish(exitCode, now, acts)
}

func (t *Tracker) finish(code *int, now time.Time, acts []terminal.Action) []terminal.Action {
	if t.openID == "" {
		return acts
	}
	d := max(now.Sub(t.start).Milliseconds(), 0)
	var c *int
	if code != nil {
		v := *code
		c = &v
	}
	acts = append(acts, terminal.CommandFinished{CommandID: t.openID, ExitCode: c, DurationMs: &d})
	t.openID = ""
	return acts
}

// lineEditor follows what was typed since the prompt closely enough to read
// a command line back: printable text, backspace and DEL, ^U and ^W, ^C, and
// Enter. Escape sequences (arrows, history, bracketed-paste brackets) are
// skipped, since their effect on the shell's line is not knowable from here.
type lineEditor struct {
	cur  []byte // the line being typed
	done []byte // lines already entered since the prompt, joined by '\n'
	esc  escState
}

type escState uint8

const (
	escNone  escState = iota
	escStart          // after ESC
	escCSI            // inside ESC [ ... final
	escSS3            // after ESC O, one more byte
)

func (e *lineEditor) reset() {
	e.cur = e.cur[:0]
	e.done = e.done[:0]
}

// submitted is the command the shell was given: the lines entered since the
// prompt or, when no Enter was seen, the line as typed so far.
func (e *lineEditor) submitted() string {
	if len(e.done) == 0 {
		return string(e.cur)
	}
	return string(e.done)
}

func (e *lineEditor) feed(p []byte) {
	for _, c := range p {
		switch e.esc {
		case escStart:
			switch c {
			case '[':
				e.esc = escCSI
			case 'O':
				e.esc = escSS3
			default:
				e.esc = escNone // Alt+key: a readline command, not text
			}
			continue
		case escCSI:
			if c >= 0x40 && c <= 0x7e {
				e.esc = escNone
			}
			continue
		case escSS3:
			e.esc = escNone
			continue
		}
		switch c {
		case 0x1b:
			e.esc = escStart
		case '\r', '\n':
			// Enter; a continuation line (PS2) joins the command.
			if len(e.cur) > 0 {
				if len(e.done) > 0 {
					e.done = appendBounded(e.done, []byte{'\n'})
				}
				e.done = appendBounded(e.done, e.cur)
				e.cur = e.cur[:0]
			}
		case 0x03: // ^C abandons everything typed
			e.reset()
		case 0x15: // ^U kills the line
			e.cur = e.cur[:0]
		case 0x17: // ^W kills the word before the cursor
			e.cur = trimLastWord(e.cur)
		case 0x08, 0x7f:
			if len(e.cur) > 0 {
				_, n := utf8.DecodeLastRune(e.cur)
				e.cur = e.cur[:len(e.cur)-n]
			}
		default:
			if c >= 0x20 {
				e.cur = appendBounded(e.cur, []byte{c})
			}
			// Other controls (tab completion, ^D, ^L …) change the line in
			// ways only the shell knows.
		}
	}
}

func appendBounded(dst, src []byte) []byte {
	if room := maxLine - len(dst); len(src) > room {
		src = src[:max(room, 0)]
	}
	return append(dst, src...)
}

func trimLastWord(b []byte) []byte {
	s := strings.TrimRightFunc(string(b), unicode.IsSpace)
	i := strings.LastIndexFunc(s, unicode.IsSpace)
	return b[:i+1]
}
