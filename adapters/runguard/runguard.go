// Package runguard makes sure nothing a daemon started outlives it: every
// terminal's processes carry the run's marker in their environment, a small
// guard process ends every marked process the moment the daemon is gone
// (however it went, kill -9 included), and a daemon starting up ends what a
// previous run left behind, named by the run file in the data directory.
//
// The marker is what survives an escape from a terminal's process group
// and session (setsid, double forks): a child inherits its parent's
// environment. A program that execs itself with a cleared environment and
// leaves its session is not found; sandboxed agent commands do not depend on
// the marker, since their first process is process 1 of a PID namespace and
// is killed with the daemon (parent-death signal).
package runguard

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// EnvVar is the environment variable that marks a run's processes.
const EnvVar = "SHELLGATE_RUN"

// Command is the hidden subcommand that runs the guard.
const Command = "run-guard"

// FileName is the run file's name in the data directory.
const FileName = "run.json"

// Run is one daemon run, as its run file records it.
type Run struct {
	// ID is the run's marker value, random per run.
	ID string `json:"id"`
	// Pid is the daemon's process id, for people reading the file.
	Pid int `json:"pid"`
	// Started is when the run began.
	Started time.Time `json:"started"`
}

// Env is the environment entry every process of the run carries.
func (r Run) Env() string { return EnvVar + "=" + r.ID }

// Begin reads the previous run's file in dataDir, if any, and replaces it
// with a new run's. A missing or unreadable previous file is not an error:
// there is then nothing known to end.
func Begin(dataDir string, now time.Time) (prev *Run, cur Run, err error) {
	path := filepath.Join(dataDir, FileName)
	if b, rerr := os.ReadFile(path); rerr == nil {
		var p Run
		if json.Unmarshal(b, &p) == nil && validID(p.ID) {
			prev = &p
		}
	} else if !errors.Is(rerr, fs.ErrNotExist) {
		return nil, Run{}, fmt.Errorf("run file %s: %w", path, rerr)
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, Run{}, fmt.Errorf("run id: %w", err)
	}
	cur = Run{ID: hex.EncodeToString(id[:]), Pid: os.Getpid(), Started: now.UTC()}
	b, _ := json.Marshal(cur)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return nil, Run{}, fmt.Errorf("run file %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, Run{}, fmt.Errorf("run file %s: %w", path, err)
	}
	return prev, cur, nil
}

func validID(id string) bool {
	if len(id) != 32 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

// sweepFor bounds a sweep: processes that keep appearing for this long
// (another user's setuid program, which cannot be signalled) are given up.
const sweepFor = 5 * time.Second

// Sweep ends every process of this user whose environment carries the
// run's marker, and returns how many it signalled. Each round stops all it
// finds before killing any, so a process cannot fork faster than it is
// found; rounds repeat until one finds nothing. A killed process may take a
// moment to exit, so a round that finds only those already killed waits a
// little before looking again.
func Sweep(id string) (int, error) {
	if !validID(id) {
		return 0, fmt.Errorf("run id %q is not one a run file holds", id)
	}
	entry := []byte(EnvVar + "=" + id)
	killed := map[int]bool{}
	deadline := time.Now().Add(sweepFor)
	for {
		pids, err := marked(entry)
		if err != nil {
			return len(killed), err
		}
		if len(pids) == 0 {
			return len(killed), nil
		}
		if time.Now().After(deadline) {
			return len(killed), fmt.Errorf("%d processes of the run could not be ended within %s", len(pids), sweepFor)
		}
		fresh := false
		for _, pid := range pids {
			if !killed[pid] {
				fresh = true
				_ = syscall.Kill(pid, syscall.SIGSTOP)
			}
		}
		for _, pid := range pids {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed[pid] = true
			}
		}
		if !fresh {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// marked lists the live processes whose environment holds entry.
func marked(entry []byte) ([]int, error) {
	dir, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	self := os.Getpid()
	var out []int
	for _, d := range dir {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + d.Name() + "/environ")
		if err != nil || len(env) == 0 {
			continue // gone, another user's, or a zombie
		}
		for kv := range bytes.SplitSeq(env, []byte{0}) {
			if bytes.Equal(kv, entry) {
				if !zombie(pid) {
					out = append(out, pid)
				}
				break
			}
		}
	}
	return out, nil
}

// zombie reports a process that has exited but is not yet reaped: it holds
// nothing, and signalling it again would loop.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z' || b[i+2] == 'X'
}

// Guard is a started guard process.
type Guard struct {
	cmd  *exec.Cmd
	pipe *os.File // the write end: its close is the guard's cue

	cue   sync.Once
	timer *time.Timer
}

// Start runs exe's guard for run: it waits for the daemon to go (its end of
// a pipe closes, as it does when the daemon dies) and then sweeps. It is a
// process group of its own, without the marker, and holds none of the
// daemon's streams.
func Start(exe string, run Run) (*Guard, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("run guard: %w", err)
	}
	cmd := exec.Command(exe, Command, run.ID)
	cmd.Stdin = r
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	_ = r.Close()
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("run guard: %w", err)
	}
	return &Guard{cmd: cmd, pipe: w}, nil
}

// SweepAfter gives the guard its cue once d has passed, without waiting. A
// stopping daemon calls it as it starts ending its terminals: a process
// that left a terminal's session but holds its pty or pipe keeps the
// terminal's output open, and the terminal's stop would wait for it for
// ever; d is the grace the terminals give their processes.
func (g *Guard) SweepAfter(d time.Duration) {
	g.timer = time.AfterFunc(d, g.sweepNow)
}

func (g *Guard) sweepNow() { g.cue.Do(func() { _ = g.pipe.Close() }) }

// Stop gives the guard its cue, if it has not had it, and waits for its
// sweep: at a graceful stop this ends whatever left the terminals' process
// groups.
func (g *Guard) Stop() error {
	if g.timer != nil {
		g.timer.Stop()
	}
	g.sweepNow()
	if err := g.cmd.Wait(); err != nil {
		return fmt.Errorf("run guard: %w", err)
	}
	return nil
}

// Main is the guard: args are the run id. It returns the exit code.
func Main(args []string, stdin io.Reader) int {
	if len(args) != 1 || !validID(args[0]) {
		fmt.Fprintln(os.Stderr, "shellgate run-guard is started by the daemon, not by hand")
		return 2
	}
	_, _ = io.Copy(io.Discard, stdin) // returns when the daemon's end closes
	if _, err := Sweep(args[0]); err != nil {
		fmt.Fprintln(os.Stderr, "shellgate run-guard:", err)
		return 1
	}
	return 0
}
