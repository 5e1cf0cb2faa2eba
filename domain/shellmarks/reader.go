// Package shellmarks reads the shell-integration marks a shell prints into
// its pty output — OSC 133 (prompt and command boundaries), the VS Code
// variant OSC 633 (the same boundaries plus the command line and the
// directory) and OSC 7 (the directory) — and removes them from the output,
// as the protocol requires of terminal/data (D12 in docs/protocol.md).
//
// A Reader is fed pty output read by read; a mark split across reads at any
// byte is joined. Every byte that is not a mark passes through unchanged and
// in order, including other escape sequences. A Tracker turns the marks and
// the typed input into terminal actions.
//
// The package is pure: no I/O, no clock, no goroutines.
package shellmarks

import "bytes"

// MaxSequence bounds the bytes held while a possible mark is incomplete. A
// longer sequence is not a mark: it passes through as output, so a stray
// ESC ] never makes the reader hold a flood of output back.
const MaxSequence = 4096

// Kind names what a mark says.
type Kind uint8

// The kinds of marks.
const (
	// PromptStart is OSC 133;A or 633;A: the shell starts drawing a prompt.
	PromptStart Kind = iota + 1
	// PromptEnd is OSC 133;B or 633;B: the prompt ends, typing starts.
	PromptEnd
	// CommandStart is OSC 133;C or 633;C: the typed command starts running.
	CommandStart
	// CommandFinished is OSC 133;D or 633;D, with the exit code when given.
	CommandFinished
	// CommandLine is OSC 633;E: the exact command line the shell is about to run.
	CommandLine
	// Cwd is OSC 7 or OSC 633;P;Cwd=: the shell's working directory.
	Cwd
)

var kindNames = [...]string{"", "PromptStart", "PromptEnd", "CommandStart", "CommandFinished", "CommandLine", "Cwd"}

// String returns the kind's Go name.
func (k Kind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
	}
	return "Kind(?)"
}

// Mark is one shell-integration mark found in the output.
type Mark struct {
	Kind Kind
	// Offset is where the mark sat in the cleaned output: the length the out
	// slice had when the mark was found, so out[:Offset] came before it.
	Offset int
	// ExitCode is CommandFinished's code; nil when the shell gave none.
	ExitCode *int
	// CommandLine is CommandLine's text, unescaped.
	CommandLine string
	// Nonce is CommandLine's optional nonce, for a caller that checks it.
	Nonce string
	// Cwd is the directory as an absolute path, percent- or
	// backslash-decoded, with OSC 7's host dropped; FileURI turns it into the
	// file: URI that terminal/cwdChanged carries.
	Cwd string
}

const (
	esc = 0x1b
	bel = 0x07
)

// window is how much output the hot path searches before copying it out.
const window = 4096

// oscStart is ESC ], the start of every mark.
var oscStart = []byte{esc, ']'}

// state is where the reader is inside a possible mark.
type state uint8

const (
	ground     state = iota // plain output
	sawEsc                  // held: ESC
	intro                   // held: ESC ] and part of "133;", "633;" or "7;"
	payload                 // held: ESC ] <number> ; and the payload so far
	payloadEsc              // held: as payload, plus an ESC that may start ST
)

// Reader removes shell-integration marks from a stream of pty output. The
// zero value is ready to use; a Reader is not safe for concurrent use.
type Reader struct {
	st  state
	buf []byte // held bytes of a possible mark, never more than MaxSequence+1
}

// Feed appends to out the bytes of p that are not marks and to marks the
// marks found in p, and returns both. Bytes of a mark that p leaves
// incomplete are held until a later Feed (or Flush) decides what they are.
func (r *Reader) Feed(p, out []byte, marks []Mark) ([]byte, []Mark) {
	if r.st != ground {
		n := r.resume(p, &out, &marks)
		p = p[n:]
	}
	// The hot path: runs of output are found by searching for ESC ] and
	// copied whole; an escape sequence that cannot be a mark (a colour, a
	// title) does not even break the run.
	start, i := 0, 0
	for {
		// Search and copy a window at a time, so the copy reads bytes the
		// search has just brought into cache.
		end := min(i+window, len(p))
		if bytes.IndexByte(p[i:end], esc) < 0 {
			// Plain text, the common case: no escape at all.
			if end == len(p) {
				return append(out, p[start:]...), marks
			}
			out = append(out, p[start:end]...)
			start, i = end, end
			continue
		}
		j := bytes.Index(p[i:end], oscStart)
		if j < 0 && end < len(p) {
			// The window's last byte may pair with the next one: keep it.
			out = append(out, p[start:end-1]...)
			start, i = end-1, end-1
			continue
		}
		if j < 0 {
			if n := len(p); n > start && p[n-1] == esc {
				// The read ended on an ESC that the next one may make an OSC.
				out = append(out, p[start:n-1]...)
				r.buf = append(r.buf[:0], esc)
				r.st = sawEsc
				return out, marks
			}
			return append(out, p[start:]...), marks
		}
		k := i + j
		if !maybeIntro(p[k+2:]) {
			i = k + 2
			continue
		}
		out = append(out, p[start:k]...)
		r.buf = append(r.buf[:0], oscStart...)
		r.st = intro
		n := r.resume(p[k+2:], &out, &marks)
		start = k + 2 + n
		i = start
		if r.st != ground {
			return out, marks // p ended inside a possible mark
		}
	}
}

// Flush appends whatever is held — the stream ended inside a possible mark,
// so it was output after all — and resets the reader.
func (r *Reader) Flush(out []byte) []byte {
	out = append(out, r.buf...)
	r.buf = r.buf[:0]
	r.st = ground
	return out
}

// Buffered is the number of bytes held back as a possible mark.
func (r *Reader) Buffered() int { return len(r.buf) }

// resume steps through p byte by byte while a possible mark is held and
// returns how many bytes it consumed: it stops at the end of p or as soon as
// the reader is back on plain output, leaving the rest to the fast path.
func (r *Reader) resume(p []byte, out *[]byte, marks *[]Mark) int {
	i := 0
	for i < len(p) && r.st != ground {
		c := p[i]
		switch r.st {
		case sawEsc:
			if c != ']' {
				r.release(out) // not an OSC; c is read again as output
				continue
			}
			r.buf = append(r.buf, c)
			r.st = intro
		case intro:
			r.buf = append(r.buf, c)
			switch {
			case isIntro(r.buf[2:]):
				r.st = payload
			case !maybeIntro(r.buf[2:]):
				r.buf = r.buf[:len(r.buf)-1]
				r.release(out) // another OSC (a title, say): c is read again
				continue
			}
		case payload:
			switch {
			case c == bel:
				r.finish(out, marks, []byte{bel})
			case c == esc:
				r.buf = append(r.buf, c)
				r.st = payloadEsc
			case c < 0x20:
				// A mark never holds a raw control byte (633 E escapes them),
				// and a terminal would cancel the sequence on CAN or SUB:
				// treat it as malformed rather than hold output back.
				r.release(out)
				continue
			default:
				r.buf = append(r.buf, c)
				if len(r.buf) > MaxSequence {
					r.release(out)
				}
			}
		case payloadEsc:
			if c == '\\' {
				r.buf = r.buf[:len(r.buf)-1]
				r.finish(out, marks, []byte{esc, '\\'})
				break
			}
			// ESC not followed by \ cancels the sequence and may start the
			// next one: release what came before it and read ESC c again.
			*out = append(*out, r.buf[:len(r.buf)-1]...)
			r.buf = append(r.buf[:0], esc)
			r.st = sawEsc
			continue
		}
		i++
	}
	return i
}

// release hands the held bytes to the output unchanged: they were no mark.
func (r *Reader) release(out *[]byte) {
	*out = append(*out, r.buf...)
	r.buf = r.buf[:0]
	r.st = ground
}

// finish parses a terminated sequence: a mark is recorded and dropped from
// the output, anything else passes through with its terminator.
func (r *Reader) finish(out *[]byte, marks *[]Mark, term []byte) {
	if m, ok := parse(r.buf[2:]); ok {
		m.Offset = len(*out)
		*marks = append(*marks, m)
	} else {
		*out = append(*out, r.buf...)
		*out = append(*out, term...)
	}
	r.buf = r.buf[:0]
	r.st = ground
}

// intros are the OSC numbers (with their separator) this reader owns.
var intros = [...]string{"133;", "633;", "7;"}

// isIntro reports whether b is exactly one of the intros.
func isIntro(b []byte) bool {
	for _, s := range intros {
		if string(b) == s {
			return true
		}
	}
	return false
}

// maybeIntro reports whether b could still begin with one of the intros:
// true while too short to tell, false once it cannot be a mark.
func maybeIntro(b []byte) bool {
	for _, s := range intros {
		n := min(len(b), len(s))
		if string(b[:n]) == s[:n] {
			return true
		}
	}
	return false
}
