package terminals

import (
	"context"

	"go.uber.org/fx"
)

// Module provides the terminal host; it needs a Config, a hub, a
// ports.Spawner and a ports.Clock. Stopping the app ends every terminal.
var Module = fx.Module("terminals",
	fx.Provide(New),
	fx.Invoke(func(lc fx.Lifecycle, h *Host) {
		lc.Append(fx.Hook{OnStop: func(ctx context.Context) error { return h.Stop(ctx) }})
	}),
)
