package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"go.uber.org/fx"

	"github.com/shellgate/shellgate/adapters/runguard"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/ports"
)

// newRun begins this daemon's run: it ends what a previous run left (its
// run file names the marker its processes carry), records this run, and
// starts the guard that ends this run's processes when the daemon goes.
// Its stop hook runs after the terminals' (fx stops in reverse), so a
// graceful stop sweeps whatever left their process groups.
func newRun(lc fx.Lifecycle, cfg Config, clk ports.Clock, log *slog.Logger) (runguard.Run, *runguard.Guard, error) {
	prev, cur, err := runguard.Begin(cfg.DataDir, clk.Now())
	if err != nil {
		return runguard.Run{}, nil, err
	}
	if prev != nil {
		n, err := runguard.Sweep(prev.ID)
		if err != nil {
			return runguard.Run{}, nil, fmt.Errorf("ending what the previous run left: %w", err)
		}
		if n > 0 {
			log.Warn("ended processes a previous run left running", "count", n, "previous_pid", prev.Pid)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return runguard.Run{}, nil, fmt.Errorf("run guard: %w", err)
	}
	g, err := runguard.Start(exe, cur)
	if err != nil {
		return runguard.Run{}, nil, err
	}
	lc.Append(fx.StopHook(func(context.Context) error {
		// The terminals have ended by now; a guard that could not end some
		// escapee is worth a warning, not a failed stop.
		if err := g.Stop(); err != nil {
			log.Warn("the run guard could not end every process of this run", "err", err.Error())
		}
		return nil
	}))
	return cur, g, nil
}

// sweepDuringStop has the guard sweep once the terminals' stop grace has
// passed, while they still wait for their output to end. It is invoked
// after the terminal host is built, so its stop hook runs before the host's.
func sweepDuringStop(lc fx.Lifecycle, cfg Config, g *runguard.Guard, _ *terminals.Host) {
	lc.Append(fx.StopHook(func() { g.SweepAfter(cfg.StopGrace) }))
}
