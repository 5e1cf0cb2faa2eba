// Package httpserver is the daemon's HTTP listener: it binds at start,
// serves one handler (the web page, the WebSocket upgrade, the agent API,
// MCP, health and metrics) until stop, and guards it against requests that
// trickle in or that reach a loopback daemon under a foreign name.
package httpserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// Options say where and how to listen.
type Options struct {
	// Listen is the TCP address, host:port; port 0 picks a free one.
	Listen string
	// TLSCert and TLSKey, when set, serve HTTPS.
	TLSCert, TLSKey string
	// RequestHeaderTimeout bounds how long a request's headers may take;
	// RequestBodyTimeout bounds its body from the moment its headers are in.
	RequestHeaderTimeout, RequestBodyTimeout time.Duration
	// ConnContext, if set, gives each accepted connection its context, as
	// http.Server.ConnContext; WrapListener, if set, wraps the bound
	// listener. A transport that needs to see the connections under its
	// requests is plugged in here by the composition root, since this
	// adapter imports no other.
	ConnContext  func(ctx context.Context, c net.Conn) context.Context
	WrapListener func(net.Listener) net.Listener
}

// Server binds in Start and serves in a goroutine until Stop.
type Server struct {
	opts   Options
	srv    *http.Server
	ln     net.Listener
	log    *slog.Logger
	served chan struct{}
}

// New is a server of h that has not bound yet.
func New(opts Options, h http.Handler, log *slog.Logger) *Server {
	return &Server{
		opts: opts,
		srv: &http.Server{
			Handler:           bodyDeadline(hostGuard(h, opts.Listen), opts.RequestBodyTimeout),
			ReadHeaderTimeout: opts.RequestHeaderTimeout,
			ConnContext:       opts.ConnContext,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		},
		log:    log,
		served: make(chan struct{}),
	}
}

// BaseURL is the server's URL without a trailing slash.
func (s *Server) BaseURL() string {
	scheme := "http"
	if s.opts.TLSCert != "" {
		scheme = "https"
	}
	return scheme + "://" + s.Addr()
}

// Addr is the bound address ("" before start).
func (s *Server) Addr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Start binds the address and serves it in the background. An address
// already taken is an error that says what to do.
func (s *Server) Start(ctx context.Context) error {
	if s.opts.TLSCert != "" {
		if _, err := tls.LoadX509KeyPair(s.opts.TLSCert, s.opts.TLSKey); err != nil {
			return fmt.Errorf("TLS certificate: %w", err)
		}
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", s.opts.Listen)
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("cannot listen on %s: something already listens there (another shellgate serve?); stop it, or pick another address with --listen", s.opts.Listen)
	}
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", s.opts.Listen, err)
	}
	if s.opts.WrapListener != nil {
		ln = s.opts.WrapListener(ln)
	}
	s.ln = ln
	go func() {
		defer close(s.served)
		var err error
		if s.opts.TLSCert != "" {
			err = s.srv.ServeTLS(ln, s.opts.TLSCert, s.opts.TLSKey)
		} else {
			err = s.srv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("http server stopped", "err", err)
		}
	}()
	s.log.Info("listening", "addr", ln.Addr().String(), "loopback", isLoopback(ln.Addr()))
	return nil
}

// Stop drains the requests in flight until ctx ends, then returns.
func (s *Server) Stop(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if s.ln != nil {
		<-s.served
	}
	return err
}

// bodyDeadline gives every request with a body d to deliver it, counted
// from its headers: one byte every few seconds would otherwise hold the
// connection and its handler for ever, before anyone checked a token. A
// WebSocket upgrade has no body, and its connection must not inherit the
// deadline. The server resets the deadline for the next request's headers.
func bodyDeadline(h http.Handler, d time.Duration) http.Handler {
	if d <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody && r.Header.Get("Upgrade") == "" {
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
		}
		h.ServeHTTP(w, r)
	})
}

func isLoopback(a net.Addr) bool {
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
