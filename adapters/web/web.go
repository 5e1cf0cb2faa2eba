// Package web serves the page people use to watch and drive terminals and to
// decide agents' pending approvals. The page is plain HTML, CSS and ES
// modules embedded in the binary (xterm.js is vendored under static/vendor by
// vendor.sh), so building needs no Node. It speaks AHP over the daemon's own
// WebSocket endpoint and the agent gate's REST API, like any other client.
//
// Handler serves the page at "/" and its files under "/assets/"; the daemon
// mounts it for requests that are not WebSocket upgrades. Every response
// carries a strict Content-Security-Policy: scripts and stylesheets from this
// origin only, plus the <style> elements xterm.js creates at run time, which
// the page stamps with the per-response nonce of the index document;
// connections only to this origin (http(s) and ws(s)).
package web

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// AssetPrefix is the URL path under which the page's files are served.
const AssetPrefix = "/assets/"

// nonceMarker is replaced in index.html by each response's CSP nonce.
const nonceMarker = "__SHELLGATE_NONCE__"

// asset is one embedded file, ready to serve.
type asset struct {
	contentType string
	body        []byte
	etag        string
	gzipped     []byte // nil when compression does not pay
	gzipETag    string
}

// handler serves the index (templated per response) and the assets.
type handler struct {
	index  []byte
	assets map[string]*asset // by path below static/, e.g. "app.js"
}

// Handler returns the http.Handler that serves the web page and its assets.
// It needs no configuration and starts no goroutines; the daemon mounts it
// for non-WebSocket requests at "/".
func Handler() http.Handler {
	h, err := newHandler(static)
	if err != nil {
		// The files are embedded at build time; a broken tree is a build bug
		// the package tests catch.
		panic(err)
	}
	return h
}

func newHandler(fsys fs.FS) (*handler, error) {
	root, err := fs.Sub(fsys, "static")
	if err != nil {
		return nil, err
	}
	h := &handler{assets: map[string]*asset{}}
	err = fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		if p == "index.html" {
			h.index = body
			return nil
		}
		h.assets[p] = newAsset(p, body)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if h.index == nil {
		return nil, fmt.Errorf("web: static/index.html is missing")
	}
	if !bytes.Contains(h.index, []byte(nonceMarker)) {
		return nil, fmt.Errorf("web: static/index.html has no %s marker for the style nonce", nonceMarker)
	}
	return h, nil
}

func newAsset(name string, body []byte) *asset {
	sum := sha256.Sum256(body)
	a := &asset{
		contentType: contentType(name),
		body:        body,
		etag:        `"` + hex.EncodeToString(sum[:12]) + `"`,
	}
	if compressible(a.contentType) && len(body) > 1024 {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = zw.Write(body)
		_ = zw.Close()
		if buf.Len() < len(body)*9/10 {
			a.gzipped = buf.Bytes()
			a.gzipETag = `"` + hex.EncodeToString(sum[:12]) + `-gz"`
		}
	}
	return a
}

// contentType is decided here rather than by mime.TypeByExtension, whose
// answers depend on the machine's mime tables.
func contentType(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".html":
		return "text/html; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".json":
		return "application/json"
	case ".md", ".txt", "":
		return "text/plain; charset=utf-8" // VERSIONS.md, LICENSE
	}
	return "application/octet-stream"
}

func compressible(ct string) bool {
	return strings.HasPrefix(ct, "text/") || ct == "image/svg+xml" || ct == "application/json"
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	nonce := ""
	isIndex := r.URL.Path == "/" || r.URL.Path == "/index.html"
	if isIndex {
		nonce = newNonce()
	}
	setSecurityHeaders(w.Header(), r.Host, nonce)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		textError(w, http.StatusMethodNotAllowed, "method not allowed: the web page is read with GET")
		return
	}
	if isIndex {
		h.serveIndex(w, r, nonce)
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, AssetPrefix)
	a := h.assets[name]
	if !ok || a == nil {
		textError(w, http.StatusNotFound, "not found: the web page is at /")
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", a.contentType)
	// Files keep their names across releases, so the browser revalidates
	// each time; the ETag makes that a 304.
	hdr.Set("Cache-Control", "no-cache")
	body, etag := a.body, a.etag
	if a.gzipped != nil {
		hdr.Add("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			body, etag = a.gzipped, a.gzipETag
			hdr.Set("Content-Encoding", "gzip")
		}
	}
	hdr.Set("ETag", etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

// serveIndex writes index.html with this response's nonce; it is never
// cached, since the nonce must be fresh.
func (h *handler) serveIndex(w http.ResponseWriter, r *http.Request, nonce string) {
	body := bytes.ReplaceAll(h.index, []byte(nonceMarker), []byte(nonce))
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Cache-Control", "no-store")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

func newNonce() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.StdEncoding.EncodeToString(b)
}

// plainHost matches a Host header safe to quote in a CSP source: a name or
// IPv4 address, or a bracketed IPv6 address, with an optional port.
var plainHost = regexp.MustCompile(`^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$`)

// ContentSecurityPolicy is the policy sent for a request to host; nonce, when
// not empty, admits <style> elements carrying it (xterm.js makes some).
func ContentSecurityPolicy(host, nonce string) string {
	styles := "style-src 'self'"
	if nonce != "" {
		styles += " 'nonce-" + nonce + "'"
	}
	connect := "connect-src 'self'"
	if plainHost.MatchString(host) {
		// 'self' already covers ws(s) in current browsers; naming the
		// WebSocket origins keeps older ones working.
		connect += " ws://" + host + " wss://" + host
	}
	return strings.Join([]string{
		"default-src 'none'",
		"script-src 'self'",
		styles,
		connect,
		"img-src 'self' data:",
		"font-src 'self'",
		"manifest-src 'self'",
		"base-uri 'none'",
		"form-action 'none'",
		"frame-ancestors 'none'",
	}, "; ")
}

func setSecurityHeaders(h http.Header, host, nonce string) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy(host, nonce))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=(), usb=()")
}

func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for part := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
				continue
			}
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

func textError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = fmt.Fprintln(w, msg)
}
