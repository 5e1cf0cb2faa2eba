package shellgate

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/shellgate/shellgate/adapters/fdlimit"
	"github.com/shellgate/shellgate/adapters/httpserver"
	"github.com/shellgate/shellgate/adapters/metrics"
	"github.com/shellgate/shellgate/adapters/runguard"
	"github.com/shellgate/shellgate/adapters/screen"
	"github.com/shellgate/shellgate/adapters/shellinit"
	"github.com/shellgate/shellgate/adapters/transport/websocket"
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/ports"
)

// UsersFile is the users file in the data directory.
func (c Config) UsersFile() string { return usersPath(c) }

// CredentialsFile is the local client credentials file the CLI reads.
func (c Config) CredentialsFile() string { return credentialsPath(c) }

// AuditLogFile is where the audit log lives.
func (c Config) AuditLogFile() string { return auditLogPath(c) }

// usersPath is the users file in the data directory.
func usersPath(cfg Config) string { return filepath.Join(cfg.DataDir, "users.yaml") }

// credentialsPath is the local client credentials file the CLI reads.
func credentialsPath(cfg Config) string { return filepath.Join(cfg.DataDir, "credentials.json") }

// newHub is the hub with the configured flow-control marks and total.
func newHub(cfg Config) *hub.Hub {
	total := int64(cfg.MaxClientMemory)
	if total == 0 {
		total = -1 // no cap
	}
	return hub.New(hub.Options{HighWater: int(cfg.ClientHighWater), LowWater: int(cfg.ClientLowWater), MaxClientBytes: total})
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

// doorAuthorizer refuses, before any WebSocket exists, a token the users
// file does not know. No token is let in as nobody: it may sign in with
// authenticate, and meanwhile sees only the root list.
func doorAuthorizer(users ports.UserStore) func(*http.Request, string) error {
	return func(_ *http.Request, token string) error {
		if token == "" {
			return nil
		}
		if _, ok := users.Lookup(token); !ok {
			return errors.New("unknown token at the door")
		}
		return nil
	}
}

// Route is one HTTP handler a module adds to the daemon's listener; provide
// it with fx.ResultTags(`group:"routes"`).
type Route struct {
	Pattern string
	Handler http.Handler
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

// newMux serves the routes, health, metrics and, at "/", the WebSocket
// upgrade (whose fallback is the web page).
func newMux(cfg Config, ws *websocket.Server, m *metrics.Metrics, sb ports.Sandbox, users ports.UserStore, hosts *remoteHosts, routes []Route) *http.ServeMux {
	mux := http.NewServeMux()
	for _, r := range routes {
		mux.Handle(r.Pattern, r.Handler)
	}
	sandbox := healthOf(cfg, sb.Status())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		health, _ := json.Marshal(struct {
			Status  string        `json:"status"`
			Sandbox sandboxHealth `json:"sandbox"`
			Hosts   []HostHealth  `json:"hosts"`
		}{"ok", sandbox, hostsHealth(hosts)})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(append(health, '\n'))
	})
	m.WatchHosts(func() []metrics.HostState { return hostStates(hosts) })
	mux.Handle("GET /metrics", signedIn(m.Handler(), users, cfg.MetricsPublic))
	mux.Handle("/", ws)
	return mux
}

// httpOptions are the HTTP listener's settings from cfg.
func httpOptions(cfg Config) httpserver.Options {
	return httpserver.Options{
		Listen: cfg.Listen, TLSCert: cfg.TLSCert, TLSKey: cfg.TLSKey,
		RequestHeaderTimeout: cfg.RequestHeaderTimeout, RequestBodyTimeout: cfg.RequestBodyTimeout,
		// Connections that can gather a batch of frames into one write.
		ConnContext: websocket.ConnContext, WrapListener: websocket.Listener,
	}
}
