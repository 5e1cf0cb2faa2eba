package hub

import "go.uber.org/fx"

// Module provides the hub with default bounds.
var Module = fx.Module("hub",
	fx.Provide(func() *Hub { return New(Options{}) }),
)
