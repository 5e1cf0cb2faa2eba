//go:build !linux

package main

import "syscall"

// childAttr keeps a helper process out of the terminal's process group, so
// Ctrl-C reaches only this tool, which then stops it in order.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
