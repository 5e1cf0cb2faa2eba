package local

import "go.uber.org/fx"

// Module provides this machine's *Spawner (pipes, or a pty when asked).
var Module = fx.Module("local", fx.Provide(New))
