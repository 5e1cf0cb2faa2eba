package shellmarks

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/shellgate/shellgate/domain/terminal"
)

// parse reads the body of a terminated OSC (between "ESC ]" and the
// terminator). ok is false for anything this package does not own or
// cannot read, which then passes through as output.
func parse(b []byte) (Mark, bool) {
	num, rest, _ := bytes.Cut(b, []byte{';'})
	switch string(num) {
	case "133":
		return parseBoundary(rest)
	case "633":
		return parse633(rest)
	case "7":
		path, ok := parseFileURL(string(rest))
		return Mark{Kind: Cwd, Cwd: path}, ok
	}
	return Mark{}, false
}

// parseBoundary reads the A, B, C and D that 133 and 633 share. Options
// after the letter (133;A;aid=1, 133;D;0;err=x) are allowed and ignored,
// except D's first one, its exit code.
func parseBoundary(b []byte) (Mark, bool) {
	if len(b) == 0 || (len(b) > 1 && b[1] != ';') {
		return Mark{}, false
	}
	var opts []byte
	if len(b) > 1 {
		opts = b[2:]
	}
	switch b[0] {
	case 'A':
		return Mark{Kind: PromptStart}, true
	case 'B':
		return Mark{Kind: PromptEnd}, true
	case 'C':
		return Mark{Kind: CommandStart}, true
	case 'D':
		m := Mark{Kind: CommandFinished}
		code, _, _ := bytes.Cut(opts, []byte{';'})
		if n, err := strconv.Atoi(string(code)); err == nil && len(code) > 0 && code[0] != '+' {
			m.ExitCode = &n
		}
		return m, true
	}
	return Mark{}, false
}

// parse633 reads the VS Code sequences; E and P;Cwd= besides the shared ones.
// The other 633 letters and properties are VS Code's own business and pass
// through.
func parse633(b []byte) (Mark, bool) {
	if len(b) == 0 {
		return Mark{}, false
	}
	switch b[0] {
	case 'E':
		if len(b) == 1 {
			return Mark{Kind: CommandLine}, true
		}
		if b[1] != ';' {
			return Mark{}, false
		}
		// Semicolons inside the line are escaped, so the first raw one
		// separates the nonce.
		line, nonce, _ := bytes.Cut(b[2:], []byte{';'})
		return Mark{Kind: CommandLine, CommandLine: unescape633(line), Nonce: string(nonce)}, true
	case 'P':
		v, ok := bytes.CutPrefix(b[1:], []byte(";Cwd="))
		if !ok {
			return Mark{}, false
		}
		s := unescape633(v)
		if strings.HasPrefix(s, "file://") {
			path, ok := parseFileURL(s)
			return Mark{Kind: Cwd, Cwd: path}, ok
		}
		if !validPath(s) {
			return Mark{}, false
		}
		return Mark{Kind: Cwd, Cwd: s}, true
	}
	return parseBoundary(b)
}

// unescape633 undoes OSC 633's escaping: \\ is a backslash and \xAB the byte
// 0xAB (hex in either case); any other backslash is kept as it is.
func unescape633(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == '\\' && i+1 < len(b) {
			if b[i+1] == '\\' {
				out = append(out, '\\')
				i++
				continue
			}
			if b[i+1] == 'x' && i+3 < len(b) {
				if hi, ok := unhex(b[i+2]); ok {
					if lo, ok := unhex(b[i+3]); ok {
						out = append(out, hi<<4|lo)
						i += 3
						continue
					}
				}
			}
		}
		out = append(out, c)
	}
	return string(out)
}

// parseFileURL reads OSC 7's file://host/path: the host is dropped (the
// shell runs where this host runs) and the path percent-decoded. A '%' that
// starts no escape is kept, for shells that print the path unencoded.
func parseFileURL(s string) (string, bool) {
	if len(s) < len("file://") || !strings.EqualFold(s[:len("file://")], "file://") {
		return "", false
	}
	s = s[len("file://"):]
	slash := strings.IndexByte(s, '/')
	if slash < 0 {
		return "", false
	}
	s = s[slash:]
	if strings.IndexByte(s, '%') < 0 {
		return s, validPath(s)
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if hi, ok := unhex(s[i+1]); ok {
				if lo, ok := unhex(s[i+2]); ok {
					out = append(out, hi<<4|lo)
					i += 2
					continue
				}
			}
		}
		out = append(out, s[i])
	}
	p := string(out)
	return p, validPath(p)
}

// validPath reports whether p can be a directory: absolute and free of NUL.
func validPath(p string) bool {
	return strings.HasPrefix(p, "/") && strings.IndexByte(p, 0) < 0
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// FileURI is the file: URI of an absolute path, as terminal/cwdChanged
// carries it (terminal.URIFromPath: one path, one spelling).
func FileURI(path string) string { return terminal.URIFromPath(path) }
