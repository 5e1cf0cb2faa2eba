package websocket

import "go.uber.org/fx"

// Module provides the WebSocket *Server (an http.Handler and a
// ports.Listener) set with the graph's Options.
var Module = fx.Module("websocket", fx.Provide(New))
