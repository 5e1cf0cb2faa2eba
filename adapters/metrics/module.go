package metrics

import "go.uber.org/fx"

// Module provides the daemon's *Metrics over the terminal host.
var Module = fx.Module("metrics", fx.Provide(New))
