package metrics

import "go.uber.org/fx"

// Module provides the daemon's *Metrics over the terminal use cases.
var Module = fx.Module("metrics", fx.Provide(New))
