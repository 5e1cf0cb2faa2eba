package terminal

import (
	"bytes"
	"strings"
)

// MaxTitleBytes bounds a title a process sets: a longer OSC 0/2 string is
// not a title but a runaway sequence, and is let go without one.
const MaxTitleBytes = 4096

// TitleScanner finds the window titles a process sets in its output with
// OSC 0 (icon name and title) and OSC 2 (title), ended by BEL or ST
// (ESC \), across reads of any size. It only reads: the output goes on to
// clients untouched, so their own emulators set the title too. It is its
// own small piece on the pty output path so that a screen model can take
// its place later.
type TitleScanner struct {
	state   titleState
	num     int  // the OSC number read so far
	digits  int  // how many digits it has
	isTitle bool // the OSC is 0 or 2
	buf     []byte
	over    bool // the title outgrew MaxTitleBytes
}

type titleState uint8

const (
	titleGround  titleState = iota
	titleEsc                // saw ESC
	titleNum                // inside ESC ], reading the number
	titleText               // after the number's ';'
	titleTextEsc            // saw ESC inside the string: ST if '\' follows
)

const (
	bel = 0x07
	esc = 0x1b
	can = 0x18
	sub = 0x1a
)

// Feed reads p and reports the last title completed in it, if any.
func (s *TitleScanner) Feed(p []byte) (title string, ok bool) {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch s.state {
		case titleGround:
			// Output is mostly text: jump to the next ESC.
			j := bytes.IndexByte(p[i:], esc)
			if j < 0 {
				return title, ok
			}
			i += j
			s.state = titleEsc
		case titleEsc:
			switch c {
			case ']':
				s.state, s.num, s.digits, s.isTitle = titleNum, 0, 0, false
			case esc:
			default:
				s.state = titleGround
			}
		case titleNum:
			switch {
			case c >= '0' && c <= '9' && s.digits < 4:
				s.num = s.num*10 + int(c-'0')
				s.digits++
			case c == ';' && s.digits > 0:
				s.isTitle = s.num == 0 || s.num == 2
				s.buf, s.over = s.buf[:0], false
				s.state = titleText
			default:
				s.abort(c)
			}
		case titleText:
			switch c {
			case bel:
				if t, done := s.end(); done {
					title, ok = t, true
				}
			case esc:
				s.state = titleTextEsc
			case can, sub:
				s.state = titleGround
			default:
				if !s.isTitle {
					continue // another OSC: read to its end, keep nothing
				}
				if len(s.buf) >= MaxTitleBytes {
					s.over = true
				} else if c >= 0x20 {
					s.buf = append(s.buf, c)
				}
			}
		case titleTextEsc:
			if c == '\\' {
				if t, done := s.end(); done {
					title, ok = t, true
				}
				continue
			}
			// ESC ends the string without a proper ST; it may start the
			// next sequence.
			s.state = titleEsc
			i--
		}
	}
	return title, ok
}

// end finishes the OSC string; it is a title if it was OSC 0 or 2.
func (s *TitleScanner) end() (string, bool) {
	s.state = titleGround
	if !s.isTitle || s.over {
		return "", false
	}
	return strings.ToValidUTF8(string(s.buf), "\uFFFD"), true
}

// abort leaves a malformed sequence; an ESC may start the next one.
func (s *TitleScanner) abort(c byte) {
	s.state = titleGround
	if c == esc {
		s.state = titleEsc
	}
}
