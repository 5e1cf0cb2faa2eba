package agents

import (
	"log/slog"

	"go.uber.org/fx"

	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/risk"
	"github.com/shellgate/shellgate/ports"
)

// deps are the gate's dependencies as the graph provides them.
type deps struct {
	fx.In
	Clock      ports.Clock
	Audit      ports.AuditSink
	Terminals  *terminals.Host
	Classifier *risk.Classifier
	Sandbox    ports.Sandbox
	Log        *slog.Logger
}

// Module provides the agent gate's *App with the graph's Config. Closing
// it (which ends the agents' running commands) is the owner's: it must
// come before the HTTP server drains, so that waiting requests answer.
var Module = fx.Module("agents",
	fx.Provide(func(cfg Config, d deps) *App {
		return New(cfg, Deps{Clock: d.Clock, Audit: d.Audit, Terminals: d.Terminals, Classifier: d.Classifier, Sandbox: d.Sandbox, Log: d.Log})
	}),
)
