package web

import (
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The thread children are forked on lives as long as the process.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/shellgate/shellgate/adapters/spawner/internal/proc.spawnThread"))
}

func get(t *testing.T, h http.Handler, method, target string, hdr map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	req.Host = "127.0.0.1:7681"
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	return string(b)
}

var nonceInCSP = regexp.MustCompile(`style-src 'self' 'nonce-([A-Za-z0-9+/=]+)'`)

func TestIndexIsServedWithAFreshNonceAndIsNeverCached(t *testing.T) {
	h := Handler()
	var nonces []string
	for _, target := range []string{"/", "/index.html", "/?x=1"} {
		resp := get(t, h, http.MethodGet, target, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, target)
		require.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
		require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
		page := body(t, resp)
		require.Contains(t, page, `<script type="module" src="/assets/app.js"></script>`)
		require.NotContains(t, page, nonceMarker)
		m := nonceInCSP.FindStringSubmatch(resp.Header.Get("Content-Security-Policy"))
		require.NotNil(t, m, "the index's policy admits styles carrying its nonce")
		require.Contains(t, page, `nonce="`+m[1]+`"`, "the page carries the nonce its policy names")
		nonces = append(nonces, m[1])
	}
	require.NotEqual(t, nonces[0], nonces[1])
	require.NotEqual(t, nonces[1], nonces[2])
}

func TestIndexHasNoInlineScriptOrStyle(t *testing.T) {
	page := body(t, get(t, Handler(), http.MethodGet, "/", nil))
	require.NotRegexp(t, `<script(?:\s[^>]*)?>[^<]+</script>`, page, "scripts come from files only")
	require.NotContains(t, page, "<style")
	require.NotRegexp(t, `\sstyle=`, page)
	require.NotRegexp(t, `\son[a-z]+=`, page, "no inline event handlers")
}

func TestAssetsHaveTheirContentTypes(t *testing.T) {
	h := Handler()
	for path, want := range map[string]string{
		"/assets/app.js":                         "text/javascript; charset=utf-8",
		"/assets/ahp.js":                         "text/javascript; charset=utf-8",
		"/assets/agents.js":                      "text/javascript; charset=utf-8",
		"/assets/dom.js":                         "text/javascript; charset=utf-8",
		"/assets/app.css":                        "text/css; charset=utf-8",
		"/assets/favicon.svg":                    "image/svg+xml",
		"/assets/vendor/xterm/xterm.mjs":         "text/javascript; charset=utf-8",
		"/assets/vendor/xterm/xterm.css":         "text/css; charset=utf-8",
		"/assets/vendor/xterm/LICENSE":           "text/plain; charset=utf-8",
		"/assets/vendor/addon-fit/addon-fit.mjs": "text/javascript; charset=utf-8",
		"/assets/vendor/addon-fit/LICENSE":       "text/plain; charset=utf-8",
		"/assets/vendor/VERSIONS.md":             "text/plain; charset=utf-8",
	} {
		resp := get(t, h, http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		require.Equal(t, want, resp.Header.Get("Content-Type"), path)
		require.Equal(t, "no-cache", resp.Header.Get("Cache-Control"), path)
		require.NotEmpty(t, resp.Header.Get("ETag"), path)
		require.NotEmpty(t, body(t, resp), path)
	}
}

func TestEverySecurityHeaderOnEveryAnswer(t *testing.T) {
	h := Handler()
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, "/", http.StatusOK},
		{http.MethodHead, "/", http.StatusOK},
		{http.MethodGet, "/assets/app.js", http.StatusOK},
		{http.MethodGet, "/nope", http.StatusNotFound},
		{http.MethodGet, "/assets/", http.StatusNotFound},
		{http.MethodGet, "/assets/../web.go", http.StatusNotFound},
		{http.MethodGet, "/static/index.html", http.StatusNotFound},
		{http.MethodPost, "/", http.StatusMethodNotAllowed},
		{http.MethodDelete, "/assets/app.js", http.StatusMethodNotAllowed},
	} {
		resp := get(t, h, tc.method, tc.path, nil)
		_ = body(t, resp)
		require.Equal(t, tc.status, resp.StatusCode, "%s %s", tc.method, tc.path)
		csp := resp.Header.Get("Content-Security-Policy")
		require.Contains(t, csp, "default-src 'none'")
		require.Contains(t, csp, "script-src 'self'")
		require.Contains(t, csp, "connect-src 'self' ws://127.0.0.1:7681 wss://127.0.0.1:7681")
		require.Contains(t, csp, "frame-ancestors 'none'")
		require.Contains(t, csp, "base-uri 'none'")
		require.NotContains(t, csp, "unsafe")
		require.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
		require.Equal(t, "no-referrer", resp.Header.Get("Referrer-Policy"))
		require.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
		if tc.status == http.StatusMethodNotAllowed {
			require.Equal(t, "GET, HEAD", resp.Header.Get("Allow"))
		}
	}
}

func TestPolicyNamesOnlyAPlainHost(t *testing.T) {
	for host, wantWS := range map[string]bool{
		"127.0.0.1:7681":     true,
		"localhost":          true,
		"box.example.com":    true,
		"[::1]:7681":         true,
		"evil; script-src *": false,
		"a b":                false,
		"":                   false,
		"x'y":                false,
	} {
		csp := ContentSecurityPolicy(host, "")
		if wantWS {
			require.Contains(t, csp, "ws://"+host+" wss://"+host, host)
		} else {
			require.Contains(t, csp, "connect-src 'self'; ", host)
			require.NotContains(t, csp, "ws://", host)
		}
		require.NotContains(t, csp, "nonce", host)
	}
}

func TestRevalidationAnswers304(t *testing.T) {
	h := Handler()
	first := get(t, h, http.MethodGet, "/assets/app.css", nil)
	_ = body(t, first)
	etag := first.Header.Get("ETag")
	again := get(t, h, http.MethodGet, "/assets/app.css", map[string]string{"If-None-Match": etag})
	_ = body(t, again)
	require.Equal(t, http.StatusNotModified, again.StatusCode)
}

func TestBigFilesAreSentGzippedWhenAsked(t *testing.T) {
	h := Handler()
	plain := get(t, h, http.MethodGet, "/assets/vendor/xterm/xterm.mjs", nil)
	plainBody := body(t, plain)
	require.Empty(t, plain.Header.Get("Content-Encoding"))
	require.Equal(t, "Accept-Encoding", plain.Header.Get("Vary"))

	zipped := get(t, h, http.MethodGet, "/assets/vendor/xterm/xterm.mjs", map[string]string{"Accept-Encoding": "br, gzip;q=0.8"})
	require.Equal(t, "gzip", zipped.Header.Get("Content-Encoding"))
	require.Equal(t, "text/javascript; charset=utf-8", zipped.Header.Get("Content-Type"))
	require.NotEqual(t, plain.Header.Get("ETag"), zipped.Header.Get("ETag"))
	zr, err := gzip.NewReader(strings.NewReader(body(t, zipped)))
	require.NoError(t, err)
	unzipped, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.Equal(t, plainBody, string(unzipped))

	refused := get(t, h, http.MethodGet, "/assets/vendor/xterm/xterm.mjs", map[string]string{"Accept-Encoding": "gzip;q=0"})
	_ = body(t, refused)
	require.Empty(t, refused.Header.Get("Content-Encoding"))
}

func TestVendoredFilesArePresentWithTheirLicences(t *testing.T) {
	for _, name := range []string{
		"static/vendor/xterm/xterm.mjs",
		"static/vendor/xterm/xterm.css",
		"static/vendor/xterm/LICENSE",
		"static/vendor/addon-fit/addon-fit.mjs",
		"static/vendor/addon-fit/LICENSE",
		"static/vendor/VERSIONS.md",
	} {
		b, err := fs.ReadFile(static, name)
		require.NoError(t, err, "%s is vendored by adapters/web/vendor.sh", name)
		require.NotEmpty(t, b, name)
	}
	versions, err := fs.ReadFile(static, "static/vendor/VERSIONS.md")
	require.NoError(t, err)
	require.Regexp(t, "`@xterm/xterm` \\| \\d+\\.\\d+\\.\\d+ \\| MIT \\|", string(versions))
	require.Regexp(t, "`@xterm/addon-fit` \\| \\d+\\.\\d+\\.\\d+ \\| MIT \\|", string(versions))
	lic, err := fs.ReadFile(static, "static/vendor/xterm/LICENSE")
	require.NoError(t, err)
	require.Contains(t, string(lic), "MIT")

	mod, err := fs.ReadFile(static, "static/vendor/xterm/xterm.mjs")
	require.NoError(t, err)
	require.Contains(t, string(mod), "Terminal}", "the ES module exports Terminal")
}

// Every file the page imports or links is embedded.
func TestEveryReferencedFileIsEmbedded(t *testing.T) {
	h := Handler()
	page := body(t, get(t, h, http.MethodGet, "/", nil))
	refs := regexp.MustCompile(`(?:src|href)="(/assets/[^"]+)"`).FindAllStringSubmatch(page, -1)
	require.NotEmpty(t, refs)
	imports := regexp.MustCompile(`from '\./([^']+)'`)
	seen := map[string]bool{}
	queue := []string{}
	for _, r := range refs {
		queue = append(queue, r[1])
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		resp := get(t, h, http.MethodGet, p, nil)
		text := body(t, resp)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s is referenced but not served", p)
		if strings.HasSuffix(p, ".js") {
			dir := p[:strings.LastIndex(p, "/")+1]
			for _, m := range imports.FindAllStringSubmatch(text, -1) {
				queue = append(queue, dir+m[1])
			}
		}
	}
	require.True(t, seen["/assets/vendor/xterm/xterm.mjs"])
	require.True(t, seen["/assets/vendor/addon-fit/addon-fit.mjs"])
}

func TestABrokenTreeIsRefused(t *testing.T) {
	_, err := newHandler(fstest.MapFS{"static/app.js": {Data: []byte("x")}})
	require.ErrorContains(t, err, "index.html is missing")
	_, err = newHandler(fstest.MapFS{"static/index.html": {Data: []byte("<html>")}})
	require.ErrorContains(t, err, "marker")
	h, err := newHandler(fstest.MapFS{"static/index.html": {Data: []byte("<i nonce=\"" + nonceMarker + "\">")}})
	require.NoError(t, err)
	require.Empty(t, h.assets)
}

func TestHeadSendsNoBody(t *testing.T) {
	resp := get(t, Handler(), http.MethodHead, "/assets/app.js", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Empty(t, body(t, resp))
}
