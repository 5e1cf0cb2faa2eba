// Package local routes spawns: Spawner picks pipes or a pseudoterminal on
// this machine, and Router picks the machine a spec names (this one, or a
// host reached over SSH). Only routing lives here; the adapters it routes
// to do the work.
package local

import (
	"context"

	"github.com/shellgate/shellgate/adapters/spawner/pipe"
	"github.com/shellgate/shellgate/adapters/spawner/pty"
	"github.com/shellgate/shellgate/ports"
)

// Spawner routes each spec to the pipe or the pty spawner.
type Spawner struct {
	pipes, ptys ports.Spawner
}

// New returns the machine's spawner.
func New() *Spawner { return &Spawner{pipes: pipe.New(), ptys: pty.New()} }

// Spawn starts the process on pipes, or under a pty when spec.PTY is set.
func (s *Spawner) Spawn(ctx context.Context, spec ports.SpawnSpec) (ports.Process, error) {
	if spec.PTY {
		return s.ptys.Spawn(ctx, spec)
	}
	return s.pipes.Spawn(ctx, spec)
}
