package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/creack/pty"
)

// readSize is the plain loop's read size, the daemon's pump buffer (a pty
// hands out at most 4 KiB a read either way; the pump reads on into its
// buffer while more is there, the plain loop reads once per call).
const readSize = 64 << 10

// plainTerm is a shell line under a pty, read with creack/pty's master
// directly: the plain loop with no server that shellgate is measured
// against.
type plainTerm struct {
	cmd    *exec.Cmd
	master *os.File
	cancel func() bool
}

// startPlain runs `/bin/sh -c line` under a fresh 80x24 pty, as the daemon
// runs a command line. Cancelling ctx kills its process group, which ends
// any blocked read with EIO.
func startPlain(ctx context.Context, line string) (*plainTerm, error) {
	cmd := exec.Command("/bin/sh", "-c", line)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "COLUMNS=80", "LINES=24")
	master, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 80, Rows: 24})
	if err != nil {
		return nil, fmt.Errorf("plain: start %q under a pty: %w", line, err)
	}
	p := &plainTerm{cmd: cmd, master: master}
	p.cancel = context.AfterFunc(ctx, p.kill)
	return p, nil
}

// kill ends the child's whole process group (creack/pty makes the child a
// session leader, so its pid is the group id).
func (p *plainTerm) kill() { _ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) }

// read reads once; EIO (every holder of the other end has closed it) is the
// end of output.
func (p *plainTerm) read(buf []byte) (int, error) {
	n, err := p.master.Read(buf)
	if errors.Is(err, syscall.EIO) {
		err = io.EOF
	}
	return n, err
}

// drain reads to the end of output and reaps the child.
func (p *plainTerm) drain(ctx context.Context, buf []byte) ([]byte, error) {
	var out []byte
	for {
		n, err := p.read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, p.close(ctx, false)
		}
		if err != nil {
			_ = p.close(ctx, true)
			return out, err
		}
	}
}

// close reaps the child, killing it first if asked.
func (p *plainTerm) close(ctx context.Context, kill bool) error {
	p.cancel()
	if kill {
		p.kill()
	}
	_ = p.master.Close()
	err := p.cmd.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var exit *exec.ExitError
	if kill && errors.As(err, &exit) {
		return nil
	}
	return err
}

// plainThroughput times a pty delivering n bytes to a plain read loop, from
// spawn to the last byte, in MB/s; and counts the reads that returned data.
func plainThroughput(ctx context.Context, n int64) (float64, int, error) {
	t0 := time.Now()
	p, err := startPlain(ctx, throughputLine(n))
	if err != nil {
		return 0, 0, err
	}
	buf := make([]byte, readSize)
	var got int64
	var last time.Time
	reads := 0
	for {
		k, err := p.read(buf)
		if k > 0 {
			reads++
		}
		got += int64(k)
		if got >= n && last.IsZero() {
			last = time.Now()
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			_ = p.close(ctx, true)
			return 0, 0, fmt.Errorf("plain: read: %w", err)
		}
	}
	if err := p.close(ctx, false); err != nil {
		return 0, 0, fmt.Errorf("plain: %w", err)
	}
	if got != n {
		return 0, 0, fmt.Errorf("plain: the pty delivered %d of %d bytes", got, n)
	}
	return float64(n) / last.Sub(t0).Seconds() / 1e6, reads, nil
}

// plainStart times spawning `echo ready` under a pty to its first byte, and
// reports whether its whole line arrived before the end of output.
func plainStart(ctx context.Context, line, want string) (time.Duration, bool, error) {
	t0 := time.Now()
	p, err := startPlain(ctx, line)
	if err != nil {
		return 0, false, err
	}
	buf := make([]byte, readSize)
	n, err := p.read(buf)
	first := time.Since(t0)
	out := append([]byte(nil), buf[:n]...)
	if err == nil {
		var rest []byte
		rest, err = p.drain(ctx, buf)
		out = append(out, rest...)
	} else if err == io.EOF {
		err = p.close(ctx, false)
	} else {
		_ = p.close(ctx, true)
	}
	if err != nil {
		return 0, false, fmt.Errorf("plain: %q: %w", line, err)
	}
	return first, bytes.Contains(out, []byte(want)), nil
}
