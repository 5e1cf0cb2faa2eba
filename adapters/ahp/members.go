package ahp

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// Every message a client sends is read first as a JSON object of raw
// members, then field by field, so a wrong type is answered by naming its
// field. encoding/json does that through reflection: a keystroke's three
// levels (envelope, params, action) cost about 3 KiB and 45 allocations
// of the 7 KiB and 106 a key took end to end (BenchmarkKeystrokeThroughCat).
// The frame is checked once with json.Valid; the reads below then only
// split what is known to be valid JSON, and fall back to encoding/json for
// anything they do not read themselves (escapes, keys not plain ASCII,
// numbers that are not plain integers), so they answer exactly what it
// would. Values alias the frame, which no one reuses.

// objectMembers splits raw, a valid JSON value, into its members as
// json.Unmarshal into a map[string]json.RawMessage would (the last of
// duplicate keys wins); false when raw is not an object.
func objectMembers(raw []byte) (map[string]json.RawMessage, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	out := make(map[string]json.RawMessage, 4)
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return out, true
	}
	for i < len(raw) {
		keyEnd := skipString(raw, i)
		key, ok := jsonString(raw[i:keyEnd])
		if !ok {
			return nil, false
		}
		i = skipSpace(raw, keyEnd)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		start := skipSpace(raw, i+1)
		end := skipValue(raw, start)
		out[key] = json.RawMessage(raw[start:end:end])
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return nil, false
		}
		if raw[i] == '}' {
			return out, true
		}
		if raw[i] != ',' {
			return nil, false
		}
		i = skipSpace(raw, i+1)
	}
	return nil, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string that starts at i.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the index just past the value that starts at i.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	}
	// A number or a literal: it ends where the next token begins.
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// jsonString reads raw into a string as json.Unmarshal would, and says
// whether it could (null reads as ""). A string with no escapes in valid
// UTF-8 is its bytes; anything else is left to encoding/json (which also
// turns invalid UTF-8 into U+FFFD).
func jsonString(raw []byte) (string, bool) {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		inner := raw[1 : n-1]
		plain, ascii := true, true
		for _, c := range inner {
			if c == '\\' || c == '"' || c < 0x20 {
				plain = false
				break
			}
			if c >= utf8.RuneSelf {
				ascii = false
			}
		}
		if plain && (ascii || utf8.Valid(inner)) {
			return string(inner), true
		}
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// jsonInt reads raw into an int64 as json.Unmarshal would, and says
// whether it could: false for a fraction, an exponent, a number out of
// range, or a value that is not a number (null reads as 0).
func jsonInt(raw []byte) (int64, bool) {
	if len(raw) == 0 {
		return 0, false
	}
	digits := raw
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) > 0 && len(digits) <= 18 {
		integer := true
		for _, c := range digits {
			if c < '0' || c > '9' {
				integer = false
				break
			}
		}
		if integer {
			n, err := strconv.ParseInt(string(raw), 10, 64)
			return n, err == nil
		}
	}
	var n int64
	if json.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	return n, true
}
