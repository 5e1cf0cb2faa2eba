package terminals

import (
	"context"

	"go.uber.org/fx"
)

// Module provides the terminal host and its use cases (*App); it needs a
// Config, a hub, a ports.Spawner, a ports.Clock and the *gate.Gate the use
// cases decide with. Stopping the app ends every terminal.
var Module = fx.Module("terminals",
	fx.Provide(New, NewApp),
	fx.Invoke(func(lc fx.Lifecycle, h *Host) {
		lc.Append(fx.Hook{OnStop: func(ctx context.Context) error { return h.Stop(ctx) }})
	}),
)
