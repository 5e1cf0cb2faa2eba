// Package fdlimit reports how many file descriptors this process may still
// open (ports.Descriptors): its RLIMIT_NOFILE soft limit less the
// descriptors open now, counted in /proc/self/fd.
package fdlimit

import (
	"fmt"
	"os"
	"syscall"
)

// Process is this process's descriptors.
type Process struct{}

// New returns the reader of this process's descriptors.
func New() Process { return Process{} }

// Free counts the open descriptors and reads the soft limit each time: the
// Go runtime raises the limit at start, and an admin may change it on a
// running daemon (prlimit).
func (Process) Free() (free, limit int, err error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, 0, fmt.Errorf("reading the open-file limit: %w", err)
	}
	dir, err := os.Open("/proc/self/fd")
	if err != nil {
		return 0, 0, fmt.Errorf("counting open files: %w", err)
	}
	names, err := dir.Readdirnames(-1)
	_ = dir.Close()
	if err != nil {
		return 0, 0, fmt.Errorf("counting open files: %w", err)
	}
	// The directory's own descriptor was among those listed; it is closed.
	open := len(names) - 1
	limit = int(min(rl.Cur, uint64(1<<31-1)))
	return max(limit-open, 0), limit, nil
}
