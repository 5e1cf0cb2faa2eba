package ahp

import (
	"log/slog"

	"go.uber.org/fx"

	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/ports"
)

// Module provides the protocol *Server over the terminal use cases, set with
// the graph's Options. Who feeds it connections (ServeListener) and when
// it closes its clients is the composition root's to decide, since that
// orders the daemon's stop.
var Module = fx.Module("ahp",
	fx.Provide(func(app *terminals.App, clk ports.Clock, log *slog.Logger, opts Options) *Server {
		return NewServer(app, clk, log, opts)
	}),
)
