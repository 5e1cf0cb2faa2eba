package main

import "syscall"

// childAttr keeps a helper process out of the terminal's process group (so
// Ctrl-C reaches only this tool, which then stops it in order) and ends it
// if this tool dies without cleaning up.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
