//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package pty

import "golang.org/x/sys/unix"

// getTermios is the ioctl request that reads a terminal's settings.
const getTermios = unix.TIOCGETA
