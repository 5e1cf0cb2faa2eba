package mcp

import "go.uber.org/fx"

// Module provides the MCP *Handler, to mount at Path, set with the graph's
// Options. Close it before the HTTP server drains (an idle client's event
// stream would hold the drain until its deadline).
var Module = fx.Module("mcp", fx.Provide(New))
