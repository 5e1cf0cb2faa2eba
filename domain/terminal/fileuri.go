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

// URIFromPath encodes an absolute path as a file: URI, escaping what a URI
// path cannot hold ("/tmp/my dir" → "file:///tmp/my%20dir").
func URIFromPath(p string) string {
	u := url.URL{Scheme: "file", Path: p}
	// url.URL leaves '#' and '?' alone in Path when building; escape them so
	// they stay part of the path.
	s := u.String()
	if strings.ContainsAny(p, "#?") {
		s = strings.NewReplacer("#", "%23", "?", "%3F").Replace(s)
	}
	return s
}
