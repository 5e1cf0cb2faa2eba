package memrelease

import (
	"go.uber.org/fx"

	"github.com/shellgate/shellgate/ports"
)

// Module releases the daemon's memory after each burst of work, from start
// to stop. An embedder that runs the daemon inside a program of its own
// and would rather leave its heap alone decorates the Runtime with one
// whose Release does nothing.
var Module = fx.Module("memrelease",
	fx.Provide(fx.Annotate(NewGoRuntime, fx.As(new(Runtime)))),
	fx.Invoke(func(lc fx.Lifecycle, clock ports.Clock, rt Runtime) {
		r := New(clock, rt)
		lc.Append(fx.StartStopHook(r.Start, r.Stop))
	}),
)
