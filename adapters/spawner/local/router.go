package local

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/shellgate/shellgate/ports"
)

// Router sends each spec to the machine it names (ports.SpawnSpec.Host):
// this one, or another host's spawner (adapters/spawner/ssh).
type Router struct {
	here  ports.Spawner
	hosts map[string]ports.Spawner
}

var _ ports.Spawner = (*Router)(nil)

// NewRouter returns a router that starts specs for this machine on here and
// those for each named host on its spawner.
func NewRouter(here ports.Spawner, hosts map[string]ports.Spawner) *Router {
	return &Router{here: here, hosts: hosts}
}

// Spawn starts spec on its host. A confined spec for another host is
// refused: confinement is this machine's kernel's, and never silently
// dropped.
func (r *Router) Spawn(ctx context.Context, spec ports.SpawnSpec) (ports.Process, error) {
	if spec.Host == "" || spec.Host == ports.MainHost {
		if len(spec.Files) > 0 {
			return nil, fmt.Errorf("spawn %q: files travel with a spec for another machine only; this machine's spawners read files from its disk", spec.Program)
		}
		return r.here.Spawn(ctx, spec)
	}
	sp, ok := r.hosts[spec.Host]
	if !ok {
		return nil, fmt.Errorf("spawn %q: no host %q is configured; the hosts are %s", spec.Program, spec.Host, strings.Join(r.Names(), ", "))
	}
	if spec.Confine != nil {
		return nil, fmt.Errorf("spawn %q on %s: %w; confinement is for this machine only", spec.Program, spec.Host, ports.ErrCannotConfine)
	}
	return sp.Spawn(ctx, spec)
}

// Names lists the hosts, main first, then the others sorted.
func (r *Router) Names() []string {
	names := make([]string, 0, len(r.hosts)+1)
	for n := range r.hosts {
		names = append(names, n)
	}
	slices.Sort(names)
	return append([]string{ports.MainHost}, names...)
}
