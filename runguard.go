package shellgate

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/shellgate/shellgate/adapters/runguard"
	"github.com/shellgate/shellgate/ports"
)

// newRun begins this daemon's run: it ends what a previous run left (its
// run file names the marker its processes carry), records this run, and
// starts the guard that ends this run's processes when the daemon goes.
func newRun(cfg Config, clk ports.Clock, log *slog.Logger) (runguard.Run, *runguard.Guard, error) {
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
	return cur, g, nil
}

// stopGuard stops the guard once the terminals have ended. A guard that
// could not end some escapee is worth a warning, not a failed stop.
func stopGuard(g *runguard.Guard, log *slog.Logger) {
	if err := g.Stop(); err != nil {
		log.Warn("the run guard could not end every process of this run", "err", err.Error())
	}
}
