// Package websocket serves ports.Conn connections over WebSocket
// (github.com/coder/websocket): one JSON-RPC message per frame, gated at the
// HTTP upgrade by an Origin check and a bearer-token hook.
//
// The Server is both the http.Handler the daemon mounts and the
// ports.Listener its accept loop drains. Each accepted connection expects the
// daemon's usual pattern: one goroutine reading and one goroutine writing.
// Writes are safe while a Read is in progress (and from several goroutines);
// two Reads at once are not. Pongs to the server's pings are only noticed
// while a Read is in progress, so a connection whose owner stops reading for
// longer than the ping timeout is dropped.
//
// Once a connection has ended, Read and Write return a *ports.CloseError
// (matching ports.ErrConnClosed) with the first known cause: the peer's close
// frame, this side's Close, 1009 for an oversized message, or
// ports.CloseAbnormal when it dropped, missed a ping, or a write timed out.
// coder/websocket ends the whole connection when a Read or Write context
// ends, so cancelling a Read is final; that error also matches ctx's error.
// Every accepted connection must be Closed by its owner.
package websocket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	ws "github.com/coder/websocket"

	"github.com/shellgate/shellgate/ports"
)

// Defaults used for zero Options fields.
const (
	// DefaultReadLimit caps one inbound message; a larger one closes that
	// connection with 1009.
	DefaultReadLimit int64 = 4 << 20
	// DefaultPingInterval is how often the server pings an idle peer.
	DefaultPingInterval = 30 * time.Second
	// DefaultPingTimeout is how long a peer has to answer a ping.
	DefaultPingTimeout = 15 * time.Second
	// DefaultWriteTimeout bounds the sending of one message.
	DefaultWriteTimeout = 10 * time.Second
)

// Options configures a Server. The zero value is usable.
type Options struct {
	// ReadLimit is the largest inbound message in bytes; 0 means
	// DefaultReadLimit. A larger message closes that connection with 1009.
	ReadLimit int64
	// PingInterval is the time between server pings; 0 means
	// DefaultPingInterval, negative disables pings.
	PingInterval time.Duration
	// PingTimeout is how long a ping may go unanswered before the connection
	// is dropped; 0 means DefaultPingTimeout.
	PingTimeout time.Duration
	// WriteTimeout bounds each Write on top of the caller's context; 0 means
	// DefaultWriteTimeout, negative leaves only the caller's context.
	WriteTimeout time.Duration
	// AllowedOrigins lists extra browser origins allowed to connect, as
	// path.Match patterns against the Origin's host, or its scheme://host when
	// the pattern contains "://". The request's own host is always allowed,
	// and requests without an Origin header (not browsers) are not checked.
	AllowedOrigins []string
	// Authorize is called before the upgrade with the bearer token (empty if
	// none was presented); an error refuses the request with 401. Nil allows
	// every request. The error is logged (so it must not quote the token) and
	// never sent to the client. A nil error with an empty token lets the
	// connection sign in later with the AHP authenticate command.
	Authorize func(r *http.Request, token string) error
	// Fallback serves requests that are not WebSocket upgrades (the web
	// page, say). Nil answers them 426 Upgrade Required.
	Fallback http.Handler
	// Logger receives refused upgrades and dropped connections; nil discards.
	// Tokens and query strings are never logged.
	Logger *slog.Logger
}

// Server upgrades HTTP requests to WebSocket connections and hands each one
// to Accept.
type Server struct {
	opts  Options
	log   *slog.Logger
	conns chan *conn

	mu       sync.Mutex
	closed   bool
	done     chan struct{}
	handlers sync.WaitGroup // upgrades not yet taken by Accept
}

var (
	_ http.Handler   = (*Server)(nil)
	_ ports.Listener = (*Server)(nil)
)

// New returns a Server with opts, defaults filled in. It fails on a malformed
// origin pattern, which would otherwise refuse every browser at run time.
func New(opts Options) (*Server, error) {
	for _, p := range opts.AllowedOrigins {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("websocket: allowed origin %q: %w", p, err)
		}
	}
	if opts.ReadLimit <= 0 {
		opts.ReadLimit = DefaultReadLimit
	}
	if opts.PingInterval == 0 {
		opts.PingInterval = DefaultPingInterval
	}
	if opts.PingTimeout <= 0 {
		opts.PingTimeout = DefaultPingTimeout
	}
	if opts.WriteTimeout == 0 {
		opts.WriteTimeout = DefaultWriteTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{
		opts:  opts,
		log:   log,
		conns: make(chan *conn),
		done:  make(chan struct{}),
	}, nil
}

// ServeHTTP upgrades a WebSocket request after the Origin and token checks,
// and passes any other request to Options.Fallback (or answers 426).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !isUpgrade(r) {
		if s.opts.Fallback != nil {
			s.opts.Fallback.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Upgrade", "websocket")
		textError(w, http.StatusUpgradeRequired,
			"this is a WebSocket endpoint (Agent Host Protocol): connect with a WebSocket client")
		return
	}
	if !s.originAllowed(r) {
		s.refuse(r, "origin not allowed", slog.String("origin", r.Header.Get("Origin")))
		textError(w, http.StatusForbidden,
			"origin not allowed: open the page served by this host, or add the origin to the allowed origins")
		return
	}
	token := bearerToken(r)
	if s.opts.Authorize != nil {
		if err := s.opts.Authorize(r, token); err != nil {
			s.refuse(r, "not authorized", slog.String("err", err.Error()))
			w.Header().Set("WWW-Authenticate", `Bearer realm="shellgate"`)
			textError(w, http.StatusUnauthorized,
				"not authorized: present a valid token as \"Authorization: Bearer <token>\" or the token query parameter")
			return
		}
	}

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		textError(w, http.StatusServiceUnavailable, "server is shutting down: try again later")
		return
	}
	s.handlers.Add(1)
	s.mu.Unlock()
	defer s.handlers.Done()

	wsc, err := ws.Accept(withSmallBuffers(w), r, &ws.AcceptOptions{
		// Checked above already; passing the same patterns keeps the
		// library's own check in agreement instead of disabling it.
		OriginPatterns: s.opts.AllowedOrigins,
	})
	if err != nil {
		// Accept has already written the HTTP error response.
		s.refuse(r, "upgrade failed", slog.String("err", err.Error()))
		return
	}
	wsc.SetReadLimit(s.opts.ReadLimit)
	c := newConn(wsc, ports.Peer{
		Token:      token,
		RemoteAddr: r.RemoteAddr,
		Origin:     r.Header.Get("Origin"),
	}, s.opts, s.log)
	c.gather = gathererOf(r.Context())

	// The handler waits here until Accept takes the connection: the hijacked
	// socket lives on after ServeHTTP returns, so nothing is lost by blocking.
	select {
	case s.conns <- c:
		c.startPings()
	case <-s.done:
		_ = c.Close(ports.CloseGoingAway, "server is shutting down")
	}
}

// Accept returns the next upgraded connection, or ports.ErrListenerClosed
// once Close was called, or ctx's error.
func (s *Server) Accept(ctx context.Context) (ports.Conn, error) {
	select {
	case <-s.done:
		return nil, ports.ErrListenerClosed
	default:
	}
	select {
	case c := <-s.conns:
		return c, nil
	case <-s.done:
		return nil, ports.ErrListenerClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close refuses new upgrades (503), ends pending Accepts, and closes with
// 1001 the connections upgraded but never accepted, waiting for those close
// handshakes. Connections already accepted belong to the caller.
func (s *Server) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
	s.mu.Unlock()
	s.handlers.Wait()
	return nil
}

func (s *Server) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	for _, p := range s.opts.AllowedOrigins {
		target := u.Host
		if strings.Contains(p, "://") {
			target = u.Scheme + "://" + u.Host
		}
		if ok, _ := path.Match(strings.ToLower(p), strings.ToLower(target)); ok {
			return true
		}
	}
	return false
}

// refuse logs a refused upgrade; the path is logged without its query, which
// may carry the token.
func (s *Server) refuse(r *http.Request, why string, attrs ...any) {
	attrs = append(attrs,
		slog.String("remote", r.RemoteAddr),
		slog.String("path", r.URL.Path))
	s.log.Info("websocket upgrade refused: "+why, attrs...)
}

// bearerToken takes the token from "Authorization: Bearer X" first, and from
// the token query parameter otherwise, because browsers cannot set headers on
// a WebSocket.
func bearerToken(r *http.Request) string {
	if scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok &&
		strings.EqualFold(scheme, "Bearer") {
		if tok = strings.TrimSpace(tok); tok != "" {
			return tok
		}
	}
	return r.URL.Query().Get("token")
}

func isUpgrade(r *http.Request) bool {
	return headerHasToken(r.Header, "Connection", "upgrade") &&
		headerHasToken(r.Header, "Upgrade", "websocket")
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

func textError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, msg+"\n")
}

// errorsAsClose maps a coder/websocket close frame to the port's type.
func errorsAsClose(err error) (*ports.CloseError, bool) {
	var ce ws.CloseError
	if !errors.As(err, &ce) {
		return nil, false
	}
	return &ports.CloseError{Code: ports.CloseCode(ce.Code), Reason: ce.Reason}, true
}
