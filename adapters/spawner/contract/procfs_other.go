//go:build !linux

package contract

import (
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// RequireGroupGone fails t if process group pgid still exists. Without /proc
// and pidfds it cannot wait for dying members, so it only looks once.
func RequireGroupGone(t testing.TB, pgid int, _ time.Duration) {
	t.Helper()
	if err := unix.Kill(-pgid, 0); !errors.Is(err, unix.ESRCH) {
		t.Errorf("process group %d still exists (kill = %v)", pgid, err)
		_ = unix.Kill(-pgid, unix.SIGKILL)
	}
}

// RequireProcessGone fails t if pid still exists. It only looks once.
func RequireProcessGone(t testing.TB, pid int, _ time.Duration) {
	t.Helper()
	if err := unix.Kill(pid, 0); !errors.Is(err, unix.ESRCH) {
		t.Errorf("process %d still exists (kill = %v)", pid, err)
		_ = unix.Kill(pid, unix.SIGKILL)
	}
}

// M is what a TestMain receives (*testing.M).
type M interface {
	Run() int
}

// NoChildrenLeft returns m unchanged: listing children needs /proc.
func NoChildrenLeft(m M) M { return m }

func openFDs() (int, error) { return 0, errors.ErrUnsupported }

func threadCount() (int, error) { return 0, errors.ErrUnsupported }

// ProcessesMatching finds nothing where there is no /proc to read.
func ProcessesMatching(string) []int { return nil }

// RequireNoProcessMatching checks nothing where there is no /proc to read.
func RequireNoProcessMatching(testing.TB, string, time.Duration) {}
