//go:build !linux

package proc

import "os/exec"

// Start runs start, which forks cmd; there is no parent-death signal here.
func Start(cmd *exec.Cmd, start func() error) error { return start() }
