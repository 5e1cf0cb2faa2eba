package ports

import "errors"

// ErrCannotConfine is returned by a Spawner asked for a Confinement it cannot
// put in force. A spawner never runs a confined spec unconfined.
var ErrCannotConfine = errors.New("this spawner cannot confine a process")

// SandboxMode says what a confined command may write (docs/risk-policy.md R21).
type SandboxMode string

// The sandbox modes of agent_terminal.sandbox.
const (
	// SandboxWorkspaceWrite allows writes inside the workspace and the
	// command's private temporary directory, nowhere else.
	SandboxWorkspaceWrite SandboxMode = "workspace-write"
	// SandboxReadOnly allows writes to the private temporary directory only.
	SandboxReadOnly SandboxMode = "read-only"
	// SandboxOff runs agent commands unconfined.
	SandboxOff SandboxMode = "off"
)

// Confinement is what a confined process and everything it starts may do.
// A spawner that honours it (adapters/spawner/sandbox) puts all of it in
// force or refuses to start the process.
type Confinement struct {
	// Mode is workspace-write or read-only.
	Mode SandboxMode
	// Network lets the process reach the network; without it the process
	// has no route to anything, the host's own loopback included.
	Network bool
	// Workspace is the absolute directory it may write (workspace-write).
	Workspace string
	// TempDir is its private temporary directory: it is /tmp inside.
	TempDir string
}

// SandboxStatus is what the kernel allows, as probed when the daemon starts.
type SandboxStatus struct {
	// Available says agent commands can be confined. When false, nothing
	// may claim they are.
	Available bool
	// Reason says why it is not available (empty when it is).
	Reason string
	// Mechanisms lists what is in force for a confined command, e.g.
	// "landlock", "user namespace", "pid namespace".
	Mechanisms []string
	// LandlockABI is the kernel's Landlock ABI version (0: none).
	LandlockABI int
	// Cgroup says how limits are kept: "cgroup v1 (pids, memory)", "cgroup v2",
	// or empty when no cgroup could be had.
	Cgroup string
	// Confines lists what a confined command cannot do, in words.
	Confines []string
	// Helper is the executable that confines each command.
	Helper string
}

// Sandbox gives agent sessions their confinement: it reports what the kernel
// allows, resolves workspaces and keeps each session's private temporary
// directory.
type Sandbox interface {
	// Status says what confinement is available.
	Status() SandboxStatus
	// ResolveDir returns the absolute path of dir with every symlink
	// resolved, or an error when it is not an existing directory.
	ResolveDir(dir string) (string, error)
	// NewScope makes the private temporary directory of one session.
	NewScope(name string) (SandboxScope, error)
}

// SandboxScope is one session's private temporary directory.
type SandboxScope interface {
	// TempDir is the directory's path on the host.
	TempDir() string
	// Close removes the directory and everything in it.
	Close() error
}
