package shellinit

import "github.com/shellgate/shellgate/ports"

// Integration is the ports.ShellIntegration that keeps its scripts in one
// directory of the daemon's.
type Integration struct{ dir string }

var _ ports.ShellIntegration = (*Integration)(nil)

// New returns an integration whose scripts live in dir (created 0700).
func New(dir string) *Integration { return &Integration{dir: dir} }

var _ ports.RemoteShellIntegration = (*Integration)(nil)

// PrepareRemote rewrites an interactive bash or zsh on another machine;
// see the package function.
func (i *Integration) PrepareRemote(program string, args, env []string) ([]string, []string, map[string]string, bool) {
	return PrepareRemote(program, args, env)
}

// Prepare rewrites an interactive bash or zsh; see the package function.
func (i *Integration) Prepare(program string, args, env []string) ([]string, []string, bool, error) {
	return Prepare(i.dir, program, args, env)
}
