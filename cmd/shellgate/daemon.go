package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"

	"github.com/shellgate/shellgate/adapters/ahp"
	"github.com/shellgate/shellgate/adapters/clock"
	"github.com/shellgate/shellgate/adapters/fdlimit"
	"github.com/shellgate/shellgate/adapters/metrics"
	"github.com/shellgate/shellgate/adapters/runguard"
	"github.com/shellgate/shellgate/adapters/screen"
	"github.com/shellgate/shellgate/adapters/shellinit"
	"github.com/shellgate/shellgate/adapters/transport/websocket"
	"github.com/shellgate/shellgate/adapters/userstore"
	"github.com/shellgate/shellgate/adapters/web"
	"github.com/shellgate/shellgate/app/gate"
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/ports"
)

// daemon is a running (or ready) fx app with the address it bound.
type daemon struct {
	*fx.App
	server *httpServer
	users  *userstore.Store
}

// boundAddr is the address the daemon listens on, once started.
func boundAddr(d *daemon) string { return d.server.Addr() }

// daemonOptions is the production graph; tests add fx.Decorate/fx.Replace
// options after it to swap pieces.
func daemonOptions(cfg Config, logOut io.Writer) fx.Option {
	return fx.Options(
		fx.Supply(cfg),
		fx.Provide(func() *slog.Logger { return newLogger(cfg.LogLevel, logOut) }),
		fx.WithLogger(func(l *slog.Logger) fxevent.Logger {
			fl := &fxevent.SlogLogger{Logger: l}
			fl.UseLogLevel(slog.LevelDebug)
			// A failed start is returned to serve, which prints it as
			// one line; fx's own account of it (hooks, rollback) is for
			// debugging.
			fl.UseErrorLevel(slog.LevelDebug)
			return fl
		}),
		fx.StopTimeout(cfg.StopGrace+10*time.Second),
		fx.Provide(
			fx.Annotate(clock.System, fx.As(new(ports.Clock))),
			newRun,
			terminalsConfig,
			metrics.New,
			newWebSocketServer,
			newProtocolServer,
			newMux,
			newHTTPServer,
		),
		sandboxOptions(),
		fx.Provide(newHub),
		terminals.Module,
		signInOptions(),
		agentOptions(cfg),
		fx.Invoke(serveProtocol),
		fx.Invoke(sweepDuringStop),
		fx.Invoke(func(*httpServer) {}),
	)
}

// newHub is the hub with the configured flow-control marks and total.
func newHub(cfg Config) *hub.Hub {
	total := int64(cfg.MaxClientMemory)
	if total == 0 {
		total = -1 // no cap
	}
	return hub.New(hub.Options{HighWater: int(cfg.ClientHighWater), LowWater: int(cfg.ClientLowWater), MaxClientBytes: total})
}

func newDaemon(cfg Config, logOut io.Writer, extra ...fx.Option) *daemon {
	d := &daemon{}
	d.App = fx.New(daemonOptions(cfg, logOut), fx.Options(extra...), fx.Populate(&d.server, &d.users))
	return d
}

func terminalsConfig(cfg Config, run runguard.Run) terminals.Config {
	dir, _ := os.Getwd()
	tc := terminals.Config{
		Shell:           cfg.Shell,
		Env:             append(terminalEnv(os.Environ()), run.Env()),
		Dir:             dir,
		ScrollbackLimit: cfg.ScrollbackChars,
		StopGrace:       cfg.StopGrace,
		MaxPerOwner:     cfg.MaxTerminalsPerPerson,
		// The reserve is counted against the daemon's own limit, which the
		// Go runtime raised to the hard limit at start.
		Descriptors:       fdlimit.New(),
		DescriptorReserve: cfg.OpenFileReserve,
		RemoteShells:      remoteShells(cfg),
	}
	if cfg.ScreenModel {
		tc.Screens = screen.New()
	}
	if cfg.ShellIntegration {
		tc.Integration = shellinit.New(filepath.Join(cfg.DataDir, "shell-integration"))
	}
	return tc
}

// terminalEnv is the daemon's environment as every terminal inherits it:
// without the CLI's sign-in. SHELLGATE_TOKEN (and a SHELLGATE_URL, which may
// carry a token) is what whoever started `serve` exported for themselves,
// often the admin's token. An agent command would read it with a safe
// `printenv`; in a person's terminal one `env` would put it in a scrollback
// that every watcher of the terminal reads, observers and agents included.
// A person who wants the CLI in a terminal has the credentials file in the
// data directory, which SHELLGATE_DATA_DIR (kept) still names. The terminal
// host sets its own variables (SHELLGATE_NONCE and the shell integration's)
// after this, so they still arrive.
func terminalEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "SHELLGATE_TOKEN=") && !strings.HasPrefix(kv, "SHELLGATE_URL=") {
			out = append(out, kv)
		}
	}
	return out
}

func newLogger(level string, out io.Writer) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: l}))
}

func newWebSocketServer(log *slog.Logger, users ports.UserStore) (*websocket.Server, error) {
	// Requests that are not WebSocket upgrades get the web page.
	return websocket.New(websocket.Options{Logger: log, Authorize: doorAuthorizer(users), Fallback: web.Handler()})
}

func newProtocolServer(cfg Config, host *terminals.Host, clk ports.Clock, log *slog.Logger, m *metrics.Metrics, g *gate.Gate, srv *httpServer, claims sessionClaims) *ahp.Server {
	return ahp.NewServer(host, clk, log, ahp.Options{
		Metrics: m, QueueBytes: cfg.ClientQueueBytes, Gate: g,
		Resource:           func() string { return srv.BaseURL() + "/" },
		MayClaimSession:    claims,
		SignInGrace:        cfg.SignInGrace,
		MaxUnauthenticated: cfg.MaxUnauthenticatedConnections,
		MaxConnections:     cfg.MaxConnections,
		// ahp.Options reads 0 as its default; none is negative there.
		ReservedConnections: cmp.Or(cfg.AdminReservedConnections, -1),
	})
}

// serveProtocol accepts WebSocket connections for the protocol server from
// start until stop; stopping closes every client with a reason before the
// terminals are ended.
func serveProtocol(lc fx.Lifecycle, ws *websocket.Server, srv *ahp.Server) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			go func() {
				defer close(done)
				_ = srv.ServeListener(ctx, ws)
			}()
			return nil
		},
		OnStop: func(context.Context) error {
			_ = ws.Close()
			cancel()
			<-done
			srv.Close("shellgate is stopping")
			return nil
		},
	})
}

// Route is one HTTP handler a module adds to the daemon's listener; provide
// it with fx.ResultTags(`group:"routes"`).
type Route struct {
	Pattern string
	Handler http.Handler
}

type muxParams struct {
	fx.In
	Config  Config
	WS      *websocket.Server
	Metrics *metrics.Metrics
	Sandbox ports.Sandbox
	Users   ports.UserStore
	Hosts   *remoteHosts
	Routes  []Route `group:"routes"`
}

// signedIn serves h only to a request with a known bearer token, unless
// public: the metrics name how many terminals, clients and agents there
// are, which is nothing a stranger needs.
func signedIn(h http.Handler, users ports.UserStore, public bool) http.Handler {
	if public {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if _, ok := users.Lookup(strings.TrimSpace(token)); !ok || !strings.EqualFold(scheme, "Bearer") {
			w.Header().Set("WWW-Authenticate", `Bearer realm="shellgate"`)
			http.Error(w, "sign in: send Authorization: Bearer <token>, or set metrics_public: true in the config", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func newMux(p muxParams) *http.ServeMux {
	ws, m := p.WS, p.Metrics
	mux := http.NewServeMux()
	for _, r := range p.Routes {
		mux.Handle(r.Pattern, r.Handler)
	}
	sandbox := healthOf(p.Config, p.Sandbox.Status())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		health, _ := json.Marshal(struct {
			Status  string        `json:"status"`
			Sandbox sandboxHealth `json:"sandbox"`
			Hosts   []hostHealth  `json:"hosts"`
		}{"ok", sandbox, hostsHealth(p.Hosts)})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(append(health, '\n'))
	})
	m.WatchHosts(func() []metrics.HostState { return hostStates(p.Hosts) })
	mux.Handle("GET /metrics", signedIn(m.Handler(), p.Users, p.Config.MetricsPublic))
	mux.Handle("/", ws)
	return mux
}

// httpServer binds in OnStart and serves in a goroutine until OnStop.
type httpServer struct {
	srv *http.Server
	ln  net.Listener
	log *slog.Logger
	tls bool
}

// BaseURL is the daemon's URL without a trailing slash.
func (s *httpServer) BaseURL() string {
	scheme := "http"
	if s.tls {
		scheme = "https"
	}
	return scheme + "://" + s.Addr()
}

// Addr is the bound address ("" before start).
func (s *httpServer) Addr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
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

func newHTTPServer(lc fx.Lifecycle, cfg Config, mux *http.ServeMux, log *slog.Logger) *httpServer {
	s := &httpServer{
		srv: &http.Server{
			Handler:           bodyDeadline(hostGuard(mux, cfg.Listen), cfg.RequestBodyTimeout),
			ReadHeaderTimeout: cfg.RequestHeaderTimeout,
			ConnContext:       websocket.ConnContext,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		},
		log: log,
		tls: cfg.TLSCert != "",
	}
	served := make(chan struct{})
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error {
			if s.tls {
				if _, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey); err != nil {
					return fmt.Errorf("TLS certificate: %w", err)
				}
			}
			ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.Listen)
			if errors.Is(err, syscall.EADDRINUSE) {
				return fmt.Errorf("cannot listen on %s: something already listens there (another shellgate serve?); stop it, or pick another address with --listen", cfg.Listen)
			}
			if err != nil {
				return fmt.Errorf("cannot listen on %s: %w", cfg.Listen, err)
			}
			// Connections that can gather a batch of frames into one write.
			ln = websocket.Listener(ln)
			s.ln = ln
			go func() {
				defer close(served)
				var err error
				if s.tls {
					err = s.srv.ServeTLS(ln, cfg.TLSCert, cfg.TLSKey)
				} else {
					err = s.srv.Serve(ln)
				}
				if err != nil && !errors.Is(err, http.ErrServerClosed) {
					log.Error("http server stopped", "err", err)
				}
			}()
			log.Info("listening", "addr", ln.Addr().String(), "loopback", isLoopback(ln.Addr()))
			return nil
		},
		OnStop: func(ctx context.Context) error {
			err := s.srv.Shutdown(ctx)
			<-served
			return err
		},
	})
	return s
}

func isLoopback(a net.Addr) bool {
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
