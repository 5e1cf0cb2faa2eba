package gate

import "go.uber.org/fx"

// Module provides the protocol's *Gate over the graph's ports.UserStore.
var Module = fx.Module("gate", fx.Provide(New))
