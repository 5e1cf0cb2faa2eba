package sandbox

import (
	"context"

	"go.uber.org/fx"

	"github.com/shellgate/shellgate/ports"
)

// Module provides the *Sandbox, probed with the graph's Config when first
// needed, also as the ports.Sandbox; it removes its cgroups at stop.
var Module = fx.Module("sandbox",
	fx.Provide(
		func(lc fx.Lifecycle, cfg Config) *Sandbox {
			sb := New(context.Background(), cfg)
			lc.Append(fx.StopHook(sb.Close))
			return sb
		},
		func(sb *Sandbox) ports.Sandbox { return sb },
	),
)
