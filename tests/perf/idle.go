package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// holderEnv, set to "1", makes this program an idle-terminal holder: the
// plain side of the memory figure, run as its own process so its RSS is
// only that of the terminals it holds.
const holderEnv = "SHELLGATE_PERF_IDLE_HOLDER"

// holdIdle reads target counts, one per line, from in; for each it opens
// interactive shells under ptys (each with a plain read loop) until that
// many are open, then answers "ok N". At the end of in it ends them all.
func holdIdle(in io.Reader, out io.Writer) int {
	var held []*idleTerm
	defer func() {
		for _, t := range held {
			t.close()
		}
	}()
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		n, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
		if err != nil {
			fmt.Fprintf(out, "error: %v\n", err)
			return 1
		}
		for len(held) < n {
			t, err := openIdle()
			if err != nil {
				fmt.Fprintf(out, "error: %v\n", err)
				return 1
			}
			held = append(held, t)
		}
		fmt.Fprintf(out, "ok %d\n", len(held))
	}
	return 0
}

// idleTerm is an interactive shell under a pty with a goroutine reading
// (and dropping) its output.
type idleTerm struct {
	cmd    *exec.Cmd
	master *os.File
	done   chan struct{}
}

func openIdle() (*idleTerm, error) {
	cmd := exec.Command("/bin/sh")
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 80, Rows: 24})
	if err != nil {
		return nil, err
	}
	master, err := pollable(f)
	if err != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		return nil, err
	}
	t := &idleTerm{cmd: cmd, master: master, done: make(chan struct{})}
	go func() {
		defer close(t.done)
		buf := make([]byte, readSize)
		for {
			if _, err := master.Read(buf); err != nil {
				return
			}
		}
	}()
	return t, nil
}

// pollable swaps creack/pty's master (left in blocking mode) for a
// non-blocking duplicate that goes through Go's poller, as the daemon does:
// five hundred blocking reads would each pin an OS thread.
func pollable(f *os.File) (*os.File, error) {
	defer f.Close()
	raw, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var fd int
	var dupErr error
	if err := raw.Control(func(old uintptr) { fd, dupErr = unix.FcntlInt(old, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, dupErr
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

func (t *idleTerm) close() {
	_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	_ = t.master.Close()
	<-t.done
	_ = t.cmd.Wait()
}

// startHelper runs this program again in the role that env (set to "1")
// gives it, talking over its stdin and stdout. The helper ends when its
// stdin closes; Wait gives up on its output 5 s after it exits.
func startHelper(env string) (*exec.Cmd, io.WriteCloser, io.ReadCloser, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), env+"=1")
	cmd.SysProcAttr = childAttr()
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, err
	}
	return cmd, stdin, stdout, nil
}

// plainIdleRSS runs a holder and reads its settled RSS at each count.
func plainIdleRSS(ctx context.Context, counts []int) ([]int64, error) {
	cmd, stdin, stdout, err := startHelper(holderEnv)
	if err != nil {
		return nil, fmt.Errorf("start the idle holder: %w", err)
	}
	// Closing stdin makes the holder end its terminals and exit, after the
	// count it is working on; one that does not is killed (its shells then
	// get SIGHUP from their closed ptys).
	stopKill := context.AfterFunc(ctx, func() {
		_ = stdin.Close()
		time.AfterFunc(10*time.Second, func() { _ = cmd.Process.Kill() })
	})
	finish := func() error {
		stopKill()
		_ = stdin.Close()
		_, _ = io.Copy(io.Discard, stdout)
		err := cmd.Wait()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	answers := bufio.NewScanner(stdout)
	var out []int64
	for _, n := range counts {
		if _, err := fmt.Fprintln(stdin, n); err != nil {
			return nil, errors.Join(fmt.Errorf("idle holder: %w", err), finish())
		}
		if !answers.Scan() {
			return nil, errors.Join(fmt.Errorf("idle holder ended early: %v", answers.Err()), finish())
		}
		if a := answers.Text(); a != fmt.Sprintf("ok %d", n) {
			return nil, errors.Join(fmt.Errorf("idle holder: %s", a), finish())
		}
		v, err := settledRSS(ctx, cmd.Process.Pid)
		if err != nil {
			return nil, errors.Join(err, finish())
		}
		out = append(out, v)
	}
	if err := finish(); err != nil {
		return nil, fmt.Errorf("idle holder: %w", err)
	}
	return out, nil
}
