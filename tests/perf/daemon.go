package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// buildDaemon builds ./cmd/shellgate of the module we run in into dir.
func buildDaemon(ctx context.Context, dir string) (string, error) {
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(gomod))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the shellgate module: run from the repository or pass -bin")
	}
	bin := filepath.Join(dir, "shellgate")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/shellgate")
	cmd.Dir = filepath.Dir(mod)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/shellgate: %w\n%s", err, out)
	}
	return bin, nil
}

// adminToken prepares sign-in for a daemon about to start on dataDir: when
// this shellgate has a `token` command, it adds an admin for the run and
// returns its bearer token; without one (no sign-in yet) it returns "".
// Everything the perf tool knows about sign-in is in this function.
func adminToken(ctx context.Context, bin, dataDir string) (string, error) {
	if exec.CommandContext(ctx, bin, "token", "--help").Run() != nil {
		return "", nil
	}
	cmd := exec.CommandContext(ctx, bin, "token", "add", "perf", "--role", "admin", "--data-dir", dataDir)
	cmd.Env = append(os.Environ(), "SHELLGATE_DATA_DIR="+dataDir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("shellgate token add: %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	token := strings.TrimSpace(string(out))
	if token == "" || strings.ContainsAny(token, " \t\n") {
		return "", fmt.Errorf("shellgate token add printed %q, not one token", out)
	}
	return token, nil
}

// daemon is one running `shellgate serve`.
type daemon struct {
	cmd     *exec.Cmd
	addr    string
	token   string
	dataDir string
	stderr  *tailBuffer
	exited  chan struct{}
	waitErr error
	once    sync.Once
}

var servingLine = regexp.MustCompile(`shellgate serving on http://(\S+) `)

// startDaemon starts bin on a loopback port with a fresh data directory
// under dir and waits until it serves.
func startDaemon(ctx context.Context, bin, dir string) (*daemon, error) {
	dataDir, err := os.MkdirTemp(dir, "data-")
	if err != nil {
		return nil, err
	}
	token, err := adminToken(ctx, bin, dataDir)
	if err != nil {
		return nil, err
	}
	// Room for every idle connection the memory figure opens: the default
	// cap (256) is for people, not for this count.
	config := filepath.Join(dataDir, "perf-config.yaml")
	if err := os.WriteFile(config, []byte("max_connections: 4096\n"), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--config", config)
	// The same shell as the plain runs, so both sides run the same command.
	cmd.Env = append(os.Environ(), "SHELL=/bin/sh", "SHELLGATE_DATA_DIR="+dataDir)
	cmd.SysProcAttr = childAttr()
	found := make(chan string, 1)
	cmd.Stdout = &lineWatcher{match: servingLine, found: found}
	d := &daemon{cmd: cmd, token: token, dataDir: dataDir, stderr: &tailBuffer{max: 16 << 10}, exited: make(chan struct{})}
	cmd.Stderr = d.stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		d.waitErr = cmd.Wait()
		close(d.exited)
	}()
	startup := time.NewTimer(30 * time.Second)
	defer startup.Stop()
	select {
	case d.addr = <-found:
		return d, nil
	case <-d.exited:
		return nil, fmt.Errorf("shellgate exited before serving (%v): %s", d.waitErr, d.stderr)
	case <-startup.C:
		_ = d.stop()
		return nil, fmt.Errorf("shellgate did not print its address within 30s: %s", d.stderr)
	case <-ctx.Done():
		_ = d.stop()
		return nil, ctx.Err()
	}
}

func (d *daemon) pid() int { return d.cmd.Process.Pid }

// dial opens an initialized AHP connection to the daemon.
func (d *daemon) dial(ctx context.Context) (*wsClient, error) {
	return dialAHP(ctx, d.addr, d.token)
}

// stop sends SIGTERM and waits for the daemon to end its terminals and
// exit; one that will not is killed.
func (d *daemon) stop() error {
	d.once.Do(func() {
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		grace := time.NewTimer(30 * time.Second)
		defer grace.Stop()
		select {
		case <-d.exited:
		case <-grace.C:
			_ = d.cmd.Process.Kill()
			<-d.exited
		}
	})
	if d.waitErr != nil {
		return fmt.Errorf("shellgate did not stop cleanly: %w: %s", d.waitErr, d.stderr)
	}
	return nil
}

// lineWatcher is a stdout that sends the first submatch of match, once.
type lineWatcher struct {
	match *regexp.Regexp
	found chan<- string
	line  []byte
	done  bool
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	if w.done {
		return len(p), nil
	}
	w.line = append(w.line, p...)
	for {
		i := bytes.IndexByte(w.line, '\n')
		if i < 0 {
			return len(p), nil
		}
		if m := w.match.FindSubmatch(w.line[:i]); m != nil {
			w.found <- string(m[1])
			w.done, w.line = true, nil
			return len(p), nil
		}
		w.line = w.line[i+1:]
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = t.b[over:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}

// rss is VmRSS of a process, in bytes.
func rss(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("VmRSS of %d: %w", pid, err)
		}
		return kb << 10, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no VmRSS for process %d", pid)
}

// cpuTime is the user+system CPU time a process has used so far.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces: state is field 3, utime 14, stime 15.
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 13 {
		return 0, fmt.Errorf("unreadable /proc/%d/stat", pid)
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	const clkTck = 100 // USER_HZ: 100 on every Linux this runs on
	return time.Duration(ticks) * time.Second / clkTck, nil
}

// runTime is the time a process's threads have spent on a CPU so far, in
// nanoseconds (the first field of each thread's schedstat): /proc/pid/stat
// counts in 10 ms ticks, too coarse for a block of keys.
func runTime(pid int) (time.Duration, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread ended meanwhile
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			return 0, fmt.Errorf("unreadable %s/%s/schedstat", dir, t.Name())
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s/%s/schedstat: %w", dir, t.Name(), err)
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}

// settledRSS polls a process's RSS until it has held within 1% for
// longer than the daemon's memory releaser takes between two looks
// (adapters/memrelease: slowLook, 2 s), or 20 s pass. A window shorter than
// that could end before the releaser has given back what starting the
// terminals left behind, and the figure would count that garbage or not by
// chance; within this window, a release moves RSS out of the band and the
// wait starts over from the released figure.
func settledRSS(ctx context.Context, pid int) (int64, error) {
	const (
		every  = 100 * time.Millisecond
		steady = 26 // polls in a row: 2.5 s, past one slowLook
	)
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(every)
	defer tick.Stop()
	var last []int64
	for {
		v, err := rss(pid)
		if err != nil {
			return 0, err
		}
		last = append(last, v)
		if len(last) > steady {
			last = last[1:]
		}
		if len(last) == steady {
			lo, hi := last[0], last[0]
			for _, x := range last {
				lo, hi = min(lo, x), max(hi, x)
			}
			if hi-lo <= hi/100 {
				return v, nil
			}
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return v, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}
