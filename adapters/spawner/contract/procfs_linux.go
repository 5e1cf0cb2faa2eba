//go:build linux

package contract

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// RequireGroupGone fails t unless pgid's leader has been reaped and no live
// process is left in process group pgid. Members still dying are waited for
// (through a pidfd, not by polling) up to timeout; survivors are reported and
// then killed so they cannot leak into later tests. Zombies count as gone:
// they are dead, and reaping them is their new parent's business.
func RequireGroupGone(t testing.TB, pgid int, timeout time.Duration) {
	t.Helper()
	if err := unix.Kill(pgid, 0); !errors.Is(err, unix.ESRCH) {
		if alive, _ := liveProcess(pgid); alive {
			t.Errorf("process %d (a group leader) is still running", pgid)
		} else {
			t.Errorf("process %d exited but was never reaped (kill(pid, 0) = %v)", pgid, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	members, err := groupMembers(pgid)
	if err != nil {
		t.Errorf("listing process group %d: %v", pgid, err)
		return
	}
	for _, pid := range members {
		if err := waitGone(ctx, pid); err != nil {
			t.Errorf("process %d of group %d outlived the test: %v", pid, pgid, err)
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	}
}

// RequireProcessGone fails t unless pid exits within timeout (waiting on a
// pidfd). A zombie counts as gone.
func RequireProcessGone(t testing.TB, pid int, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := waitGone(ctx, pid); err != nil {
		t.Errorf("process %d still running: %v", pid, err)
		_ = unix.Kill(pid, unix.SIGKILL)
		return
	}
	if alive, _ := liveProcess(pid); alive {
		t.Errorf("process %d still running after its pidfd reported exit", pid)
	}
}

// M is what a TestMain receives (*testing.M), and what goleak.VerifyTestMain
// takes.
type M interface {
	Run() int
}

// NoChildrenLeft wraps m so that, after the tests, the run fails if the test
// binary still has any child process, running or unreaped. Use it as
// goleak.VerifyTestMain(contract.NoChildrenLeft(m)).
func NoChildrenLeft(m M) M { return childCheck{m} }

type childCheck struct{ m M }

// Run runs the tests, then fails the run if any child process remains,
// killing what it finds so nothing outlives the binary.
func (c childCheck) Run() int {
	code := c.m.Run()
	kids, err := children(os.Getpid())
	if err != nil {
		fmt.Fprintf(os.Stderr, "contract: listing child processes: %v\n", err)
		return 1
	}
	if len(kids) > 0 {
		fmt.Fprintf(os.Stderr, "contract: child processes outlived the tests: %v\n", kids)
		for _, pid := range kids {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		return 1
	}
	return code
}

// waitGone waits until pid has exited; a pidfd becomes readable then.
func waitGone(ctx context.Context, pid int) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pidfd_open: %w", err)
	}
	defer func() { _ = unix.Close(fd) }()
	deadline, _ := ctx.Deadline()
	for {
		ms := int(time.Until(deadline).Milliseconds())
		if ms <= 0 {
			return context.DeadlineExceeded
		}
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, ms)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return fmt.Errorf("poll pidfd: %w", err)
		case n > 0:
			return nil
		}
	}
}

// procStat is the part of /proc/<pid>/stat the checks need.
type procStat struct {
	state      byte
	ppid, pgrp int
}

func readStat(pid int) (procStat, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	// The command name is in parentheses and may itself hold spaces or
	// parentheses, so fields are counted from the last ')'.
	s := string(raw)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return procStat{}, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	fields := strings.Fields(s[end+1:])
	if len(fields) < 3 {
		return procStat{}, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	ppid, err1 := strconv.Atoi(fields[1])
	pgrp, err2 := strconv.Atoi(fields[2])
	if err := errors.Join(err1, err2); err != nil {
		return procStat{}, fmt.Errorf("malformed /proc/%d/stat: %w", pid, err)
	}
	return procStat{state: fields[0][0], ppid: ppid, pgrp: pgrp}, nil
}

func (s procStat) dead() bool { return s.state == 'Z' || s.state == 'X' }

func liveProcess(pid int) (bool, error) {
	st, err := readStat(pid)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return !st.dead(), nil
}

// eachProcess calls f for every process /proc lists; processes that vanish
// while it looks are skipped.
func eachProcess(f func(pid int, st procStat)) error {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(pid)
		if err != nil {
			continue
		}
		f(pid, st)
	}
	return nil
}

// groupMembers lists the live processes in process group pgid.
func groupMembers(pgid int) ([]int, error) {
	var pids []int
	err := eachProcess(func(pid int, st procStat) {
		if st.pgrp == pgid && !st.dead() {
			pids = append(pids, pid)
		}
	})
	return pids, err
}

// children lists the child processes of parent, zombies included.
func children(parent int) ([]int, error) {
	var pids []int
	err := eachProcess(func(pid int, st procStat) {
		if st.ppid == parent {
			pids = append(pids, pid)
		}
	})
	return pids, err
}

// openFDs counts the test process's open descriptors.
func openFDs() (int, error) {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	// ReadDir itself holds one open while it lists.
	return len(entries) - 1, nil
}

// threadCount is how many OS threads the test process has.
func threadCount() (int, error) {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(raw)) {
		if rest, ok := strings.CutPrefix(line, "Threads:"); ok {
			return strconv.Atoi(strings.TrimSpace(rest))
		}
	}
	return 0, errors.New("no Threads line in /proc/self/status")
}

// ProcessesMatching lists the live processes whose command line (its
// arguments joined by spaces) contains what.
func ProcessesMatching(what string) []int {
	var out []int
	_ = eachProcess(func(pid int, st procStat) {
		if st.dead() {
			return
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), what) {
			out = append(out, pid)
		}
	})
	return out
}

// RequireNoProcessMatching fails t unless every live process whose command
// line contains what exits within timeout (waiting on pidfds); survivors
// are killed so they cannot leak into later tests.
func RequireNoProcessMatching(t testing.TB, what string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for _, pid := range ProcessesMatching(what) {
		if err := waitGone(ctx, pid); err != nil {
			t.Errorf("process %d (%q) outlived its command: %v", pid, what, err)
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	}
}
