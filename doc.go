// Package shellgate is the daemon as a library: the composition root that
// assembles every part's fx module (the terminal host and hub, the
// protocol server and its WebSocket transport, the HTTP listener, the web
// page, the agent gate with its REST API, MCP server and audit log, the
// users file, the spawners and the sandbox) from one Config.
//
// cmd/shellgate parses flags and the config file and calls New; an
// embedder does the same, adding options: ServeAHPOn to serve the
// protocol on a listener of its own, or an fx.Decorate to swap a piece
// (fx.Decorate(func(ports.Spawner) ports.Spawner { return fake.New() })).
// A program that embeds the daemon calls Helper first thing in main.
//
// This package sits outside the four rings (domain, ports, app, adapters):
// it imports all of them and nothing imports it but cmd/ and examples/.
package shellgate
