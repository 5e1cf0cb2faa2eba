package terminal

import (
	"errors"
	"net/url"
	"path"
	"strings"
)

// ErrNotAFileURI is returned for a directory that is neither a file: URI nor
// an absolute path.
var ErrNotAFileURI = errors.New("not a file: URI or an absolute path")

// PathFromURI decodes a file: URI ("file:///tmp/my%20dir") or passes an
// absolute path through. A literal '#' or '?' in the URI is part of the path.
func PathFromURI(s string) (string, error) {
	if strings.HasPrefix(s, "/") {
		return path.Clean(s), nil
	}
	rest, ok := strings.CutPrefix(s, "file:")
	if !ok {
		return "", ErrNotAFileURI
	}
	if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
		// Drop the host part ("file://host/path"): the directory is local.
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return "", ErrNotAFileURI
		}
		rest = rest[i:]
	}
	p, err := url.PathUnescape(rest)
	if err != nil || !strings.HasPrefix(p, "/") {
		return "", ErrNotAFileURI
	}
	return path.Clean(p), nil
}

// URIFromPath encodes an absolute path as a file: URI: every byte but the
// unreserved ones and '/' is percent-encoded ("/tmp/my dir" →
// "file:///tmp/my%20dir"), so one path always has one spelling.
func URIFromPath(p string) string {
	const hexdigits = "0123456789ABCDEF"
	b := make([]byte, 0, len("file://")+len(p)+8)
	b = append(b, "file://"...)
	for i := 0; i < len(p); i++ {
		c := p[i]
		if unreserved(c) || c == '/' {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hexdigits[c>>4], hexdigits[c&15])
	}
	return string(b)
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}
