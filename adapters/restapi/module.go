package restapi

import "go.uber.org/fx"

// Module provides the agent API's *Handler, to mount at Prefix.
var Module = fx.Module("restapi", fx.Provide(New))
