package sandbox

import (
	"encoding/json"
	"fmt"
)

// Command is the hidden subcommand of the daemon's own binary that confines
// itself and then runs the command: `shellgate sandbox-exec PLAN PROGRAM
// ARGS...` (see Main). The daemon starts it in new namespaces.
const Command = "sandbox-exec"

// plan is everything the helper needs, passed as one JSON argument. It holds
// paths and limits, never a secret.
type plan struct {
	// Mode is "workspace-write" or "read-only".
	Mode string `json:"mode"`
	// Network keeps the host's network; false gives the command a network
	// namespace of its own with nothing but its own loopback.
	Network bool `json:"network,omitempty"`
	// Workspace is writable under workspace-write.
	Workspace string `json:"workspace"`
	// TempDir is mounted on /tmp; empty means a fresh tmpfs.
	TempDir string `json:"tmp,omitempty"`
	// Writable lists more directories the command may write.
	Writable []string `json:"writable,omitempty"`
	// Hide lists paths that must read as empty: a directory is covered by an
	// empty read-only tmpfs, a file by /dev/null.
	Hide []string `json:"hide,omitempty"`
	// Probe makes the inside half check what it can do and exit 0 without
	// running anything.
	Probe bool `json:"probe,omitempty"`
}

func (p plan) encode() string {
	b, err := json.Marshal(p)
	if err != nil {
		panic(fmt.Sprintf("sandbox: encode plan: %v", err)) // plain data cannot fail
	}
	return string(b)
}

func decodePlan(s string) (plan, error) {
	var p plan
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return p, fmt.Errorf("bad sandbox plan: %w", err)
	}
	if p.Mode != "workspace-write" && p.Mode != "read-only" {
		return p, fmt.Errorf("bad sandbox plan: mode %q", p.Mode)
	}
	return p, nil
}
