package httpserver

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// hostGuard refuses, when the daemon listens on loopback only, a request
// whose Host is not a loopback name. A web page elsewhere can make its own
// name resolve to 127.0.0.1 (DNS rebinding); the browser then treats this
// daemon as that page's own origin and sends Host: <its name>, which an
// Origin check alone accepts. Loopback names are localhost (and
// *.localhost), loopback addresses, and the host --listen names. A daemon
// listening beyond loopback has TLS or --insecure and is not guarded here.
func hostGuard(next http.Handler, listen string) http.Handler {
	listenHost, _, err := net.SplitHostPort(listen)
	if err != nil || !loopbackName(listenHost, "") {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackName(hostOnly(r.Host), listenHost) {
			http.Error(w, fmt.Sprintf("shellgate listens on loopback and answers only to loopback names (localhost, 127.0.0.1, [::1]), not to Host %q", r.Host), http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackName reports whether host names this machine's loopback: a
// loopback address, localhost or a name under it, or listen itself.
func loopbackName(host, listen string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host != "" && host == strings.ToLower(listen) {
		return true
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// hostOnly is a Host header without its port.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}
