package shellgate

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"

	"github.com/shellgate/shellgate/adapters/ahp"
	"github.com/shellgate/shellgate/adapters/audit"
	"github.com/shellgate/shellgate/adapters/clock"
	"github.com/shellgate/shellgate/adapters/httpserver"
	mcpserver "github.com/shellgate/shellgate/adapters/mcp"
	"github.com/shellgate/shellgate/adapters/memrelease"
	"github.com/shellgate/shellgate/adapters/metrics"
	"github.com/shellgate/shellgate/adapters/restapi"
	"github.com/shellgate/shellgate/adapters/runguard"
	"github.com/shellgate/shellgate/adapters/spawner/local"
	"github.com/shellgate/shellgate/adapters/spawner/sandbox"
	"github.com/shellgate/shellgate/adapters/transport/websocket"
	"github.com/shellgate/shellgate/adapters/userstore"
	"github.com/shellgate/shellgate/adapters/web"
	"github.com/shellgate/shellgate/app/agents"
	"github.com/shellgate/shellgate/app/gate"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/ports"
)

// listenersGroup is the fx value group of the ports.Listeners the
// protocol server accepts connections from.
const listenersGroup = `group:"ahp_listeners"`

// Daemon is a built (not yet started) shellgate: Start binds and serves,
// Stop ends every client and terminal.
type Daemon struct {
	app    *fx.App
	server *httpserver.Server
	users  *userstore.Store
}

// New builds the daemon cfg describes, logging to logOut. extra options
// come after the production graph, so an fx.Decorate or fx.Replace among
// them swaps a piece of it (the spawner, say); see Options.
func New(cfg Config, logOut io.Writer, extra ...fx.Option) *Daemon {
	d := &Daemon{}
	d.app = fx.New(Options(cfg, logOut), fx.Options(extra...), fx.Populate(&d.server, &d.users))
	return d
}

// Err is what went wrong building the graph, if anything; Start returns
// it too.
func (d *Daemon) Err() error { return d.app.Err() }

// Start starts every part, in dependency order, within ctx.
func (d *Daemon) Start(ctx context.Context) error { return d.app.Start(ctx) }

// Stop closes every client with a reason and ends every terminal, within
// ctx (allow StopGrace and then some).
func (d *Daemon) Stop(ctx context.Context) error { return d.app.Stop(ctx) }

// BaseURL is the HTTP listener's URL without a trailing slash, once
// started.
func (d *Daemon) BaseURL() string { return d.server.BaseURL() }

// Addr is the HTTP listener's bound address ("" before start).
func (d *Daemon) Addr() string { return d.server.Addr() }

// Users is the users file the daemon signs people in against.
func (d *Daemon) Users() *userstore.Store { return d.users }

// ServeAHPOn has the protocol server also accept connections from ln, from
// start until stop (when ln is closed). An embedder serving the protocol
// over its own transport, a unix socket say, passes it to New.
func ServeAHPOn(ln ports.Listener) fx.Option {
	return fx.Provide(fx.Annotate(func() ports.Listener { return ln }, fx.ResultTags(listenersGroup)))
}

// Options is the production graph: every contributing package's module,
// each set from cfg. Tests and embedders add fx.Decorate/fx.Replace options
// after it to swap pieces.
func Options(cfg Config, logOut io.Writer) fx.Option {
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
		clock.Module,
		memrelease.Module,
		metrics.Module,
		websocket.Module,
		web.Module,
		ahp.Module,
		httpserver.Module,
		fx.Provide(
			newRunHooked,
			terminalsConfig,
			websocketOptions,
			protocolOptions,
			httpOptions,
			fx.Annotate(newMuxFromParams, fx.As(new(http.Handler))),
			fx.Annotate(func(ws *websocket.Server) ports.Listener { return ws }, fx.ResultTags(listenersGroup)),
		),
		spawnerOptions(),
		fx.Provide(newHub),
		terminals.Module,
		signInOptions(),
		agentOptions(),
		fx.Invoke(serveProtocol),
		fx.Invoke(sweepDuringStop),
		fx.Invoke(func(*httpserver.Server) {}),
	)
}

// newRunHooked begins the run (newRun) and stops its guard at stop. Its
// stop hook runs after the terminals' (fx stops in reverse), so a graceful
// stop sweeps whatever left their process groups.
func newRunHooked(lc fx.Lifecycle, cfg Config, clk ports.Clock, log *slog.Logger) (runguard.Run, *runguard.Guard, error) {
	run, g, err := newRun(cfg, clk, log)
	if err != nil {
		return run, nil, err
	}
	lc.Append(fx.StopHook(func() { stopGuard(g, log) }))
	return run, g, nil
}

// sweepDuringStop has the guard sweep once the terminals' stop grace has
// passed, while they still wait for their output to end. It is invoked
// after the terminal host is built, so its stop hook runs before the host's.
func sweepDuringStop(lc fx.Lifecycle, cfg Config, g *runguard.Guard, _ *terminals.Host) {
	lc.Append(fx.StopHook(func() { g.SweepAfter(cfg.StopGrace) }))
}

type protocolParams struct {
	fx.In
	Config Config
	M      *metrics.Metrics
	Server *httpserver.Server
	Claims sessionClaims
}

func protocolOptions(p protocolParams) ahp.Options {
	cfg, srv := p.Config, p.Server
	return ahp.Options{
		Metrics: p.M, QueueBytes: cfg.ClientQueueBytes,
		Resource:           func() string { return srv.BaseURL() + "/" },
		MayClaimSession:    p.Claims,
		SignInGrace:        cfg.SignInGrace,
		MaxUnauthenticated: cfg.MaxUnauthenticatedConnections,
		MaxConnections:     cfg.MaxConnections,
		// ahp.Options reads 0 as its default; none is negative there.
		ReservedConnections: cmp.Or(cfg.AdminReservedConnections, -1),
	}
}

type websocketParams struct {
	fx.In
	Log   *slog.Logger
	Users ports.UserStore
	Web   http.Handler `name:"web"`
}

func websocketOptions(p websocketParams) websocket.Options {
	// Requests that are not WebSocket upgrades get the web page.
	return websocket.Options{Logger: p.Log, Authorize: doorAuthorizer(p.Users), Fallback: p.Web}
}

type listenersParams struct {
	fx.In
	Listeners []ports.Listener `group:"ahp_listeners"`
}

// serveProtocol accepts connections for the protocol server from every
// listener from start until stop; stopping closes every client with a
// reason before the terminals are ended.
func serveProtocol(lc fx.Lifecycle, p listenersParams, srv *ahp.Server) {
	ctx, cancel := context.WithCancel(context.Background())
	var served sync.WaitGroup
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			for _, ln := range p.Listeners {
				served.Go(func() { _ = srv.ServeListener(ctx, ln) })
			}
			return nil
		},
		OnStop: func(context.Context) error {
			for _, ln := range p.Listeners {
				_ = ln.Close()
			}
			cancel()
			served.Wait()
			srv.Close("shellgate is stopping")
			return nil
		},
	})
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

func newMuxFromParams(p muxParams) *http.ServeMux {
	return newMux(p.Config, p.WS, p.Metrics, p.Sandbox, p.Users, p.Hosts, p.Routes)
}

// spawnerOptions probes the kernel at start, logs what it found, confines
// the agent gate's terminals through the sandbox, routes other hosts' specs
// over SSH, and removes the daemon's cgroups at stop.
func spawnerOptions() fx.Option {
	return fx.Options(
		sandbox.Module,
		local.Module,
		fx.Provide(
			sandboxConfig,
			newRemoteHostsHooked,
			fx.Annotate(func(sb *sandbox.Sandbox, here *local.Spawner, hosts *remoteHosts) ports.Spawner {
				return newSpawner(sb.Spawner(here), hosts)
			}, fx.As(new(ports.Spawner))),
		),
		fx.Decorate(func(sb *sandbox.Sandbox, cfg Config, log *slog.Logger) *sandbox.Sandbox {
			logSandbox(log, cfg, sb.Status())
			return sb
		}),
	)
}

// newRemoteHostsHooked makes the hosts' spawners (newRemoteHosts); each
// dials at start in the background and all close at stop.
func newRemoteHostsHooked(lc fx.Lifecycle, cfg Config, log *slog.Logger) (*remoteHosts, error) {
	r, err := newRemoteHosts(cfg, log)
	if err != nil {
		return nil, err
	}
	lc.Append(fx.StartStopHook(r.start, r.stop))
	return r, nil
}

// signInOptions provides the users directory and the gate.
func signInOptions() fx.Option {
	return fx.Options(
		userstore.Module,
		gate.Module,
		fx.Provide(func(cfg Config) userstore.Path { return userstore.Path(usersPath(cfg)) }),
	)
}

// agentOptions wires the agent command gate (REST API, MCP, agent
// sessions, audit log) into the daemon.
func agentOptions() fx.Option {
	return fx.Module("agent-gate",
		audit.Module,
		agents.Module,
		restapi.Module,
		mcpserver.Module,
		fx.Provide(
			// The audit log comes after the previous run's leftovers were
			// ended: a command recorded lost is one that no longer runs.
			func(cfg Config, _ runguard.Run) audit.Path { return audit.Path(auditLogPath(cfg)) },
			func(cfg Config) audit.Options {
				return audit.Options{MaxBytes: int64(cfg.AgentTerminal.AuditMaxBytes), Keep: cfg.AgentTerminal.AuditKeep}
			},
			agentsConfig,
			newGateClassifier,
			newSessionClaims,
			fx.Annotate(func(h *restapi.Handler) Route { return Route{Pattern: restapi.Prefix, Handler: h} }, fx.ResultTags(`group:"routes"`)),
			func(u *lateURL, log *slog.Logger) mcpserver.Options {
				return mcpserver.Options{BaseURL: u.String, Log: log}
			},
			fx.Annotate(func(h *mcpserver.Handler) Route { return Route{Pattern: mcpserver.Path, Handler: h} }, fx.ResultTags(`group:"routes"`)),
			func() *lateURL { return &lateURL{} },
		),
		fx.Invoke(func(u *lateURL, srv *httpserver.Server) { u.srv = srv }),
		fx.Invoke(stopAgentsBeforeHTTP),
		fx.Invoke(stopMCPBeforeHTTP),
	)
}

// stopMCPBeforeHTTP ends MCP requests (an idle client's event stream would
// hold the HTTP server's drain until its deadline); depending on
// *httpserver.Server makes it run before the server's own stop hook.
func stopMCPBeforeHTTP(lc fx.Lifecycle, _ *httpserver.Server, h *mcpserver.Handler) {
	lc.Append(fx.StopHook(h.Close))
}

// stopAgentsBeforeHTTP closes the gate, then the audit log, before the
// HTTP server drains: closing ends the agents' running commands, so the
// requests waiting on them answer (and are audited) instead of holding
// the server's shutdown until their timeouts. Depending on
// *httpserver.Server makes this hook register after the server's, so it
// runs before it at stop.
func stopAgentsBeforeHTTP(lc fx.Lifecycle, _ *httpserver.Server, app *agents.App, log *audit.Log) {
	lc.Append(fx.Hook{OnStop: func(ctx context.Context) error {
		err := app.Close(ctx)
		if cerr := log.Close(); err == nil {
			err = cerr
		}
		return err
	}})
}
