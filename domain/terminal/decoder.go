package terminal

import (
	"unicode/utf8"
)

// Decoder turns a byte stream into valid UTF-8 text, read by read. A
// multi-byte sequence split across reads waits for its next bytes; a byte
// that cannot start or continue a sequence becomes U+FFFD.
type Decoder struct {
	pending [utf8.UTFMax]byte
	n       int
}

// Decode returns the text of p, holding back an incomplete trailing sequence.
func (d *Decoder) Decode(p []byte) string {
	if d.n == 0 {
		complete := len(p) - incompleteTail(p)
		if utf8.Valid(p[:complete]) {
			d.n = copy(d.pending[:], p[complete:])
			return string(p[:complete])
		}
		return d.decodeSlow(p)
	}
	// Finish the held sequence first, then carry on with the rest.
	buf := make([]byte, 0, d.n+len(p))
	buf = append(buf, d.pending[:d.n]...)
	buf = append(buf, p...)
	d.n = 0
	return d.Decode(buf)
}

// Flush returns whatever is held back, as replacement characters: the
// stream ended inside a sequence.
func (d *Decoder) Flush() string {
	if d.n == 0 {
		return ""
	}
	s := d.decodeInvalid(d.pending[:d.n])
	d.n = 0
	return s
}

func (d *Decoder) decodeSlow(p []byte) string {
	tail := incompleteTail(p)
	out := make([]byte, 0, len(p)+8)
	body := p[:len(p)-tail]
	for len(body) > 0 {
		r, size := utf8.DecodeRune(body)
		if r == utf8.RuneError && size <= 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
			body = body[1:]
			continue
		}
		out = append(out, body[:size]...)
		body = body[size:]
	}
	d.n = copy(d.pending[:], p[len(p)-tail:])
	return string(out)
}

func (d *Decoder) decodeInvalid(p []byte) string {
	out := make([]byte, 0, len(p)*3)
	for range p {
		out = utf8.AppendRune(out, utf8.RuneError)
	}
	return string(out)
}

// incompleteTail is the length of a trailing prefix of a multi-byte sequence
// that more bytes could still complete; 0 when p ends on a boundary.
func incompleteTail(p []byte) int {
	// Look back at most UTFMax-1 bytes for the start byte of the last sequence.
	for i := 1; i < utf8.UTFMax && i <= len(p); i++ {
		c := p[len(p)-i]
		if c < 0x80 {
			return 0 // ASCII: the stream ends on a boundary
		}
		if c >= 0xC0 { // a start byte
			need := 0
			switch {
			case c >= 0xF0 && c <= 0xF4:
				need = 4
			case c >= 0xE0:
				need = 3
			case c >= 0xC2 && c < 0xE0:
				need = 2
			default:
				return 0 // not a valid start: it will be replaced
			}
			if i < need && utf8.FullRune(p[len(p)-i:]) == false && validPrefix(p[len(p)-i:]) {
				return i
			}
			return 0
		}
	}
	return 0
}

// validPrefix reports whether p could still become a valid sequence.
func validPrefix(p []byte) bool {
	var buf [utf8.UTFMax]byte
	n := copy(buf[:], p)
	// Complete it with the smallest continuation bytes and see if it decodes;
	// try the largest as well, since the second byte's range depends on the first.
	for _, fill := range []byte{0x80, 0xBF} {
		for i := n; i < utf8.UTFMax; i++ {
			buf[i] = fill
		}
		want := 0
		switch c := buf[0]; {
		case c >= 0xF0:
			want = 4
		case c >= 0xE0:
			want = 3
		default:
			want = 2
		}
		if r, size := utf8.DecodeRune(buf[:want]); r != utf8.RuneError && size == want {
			return true
		}
	}
	return false
}
