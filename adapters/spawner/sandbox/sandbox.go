// Package sandbox confines agent commands (docs/risk-policy.md R21). It is a
// decorator of ports.Spawner: a spec without a Confinement passes straight
// through to the inner spawner (people's terminals are not confined); a spec
// that carries one is started, on pipes or a pty, as the daemon's own
// binary (`shellgate sandbox-exec`, see Main) in new user, mount, PID, IPC,
// UTS and (network off) network namespaces and in cgroups with a pids and a
// memory limit. The helper gives the command a private /tmp, hides the
// daemon's files and the denied paths behind empty mounts, restricts writes
// to the workspace with Landlock (which also keeps signals and abstract
// sockets inside), sets no_new_privs and drops every capability before it
// runs the command.
//
// New probes the kernel once, by confining a real process; where that
// fails the sandbox says so in its Status and refuses every confined spec,
// so a command is never run as if it were confined when it is not.
package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/adapters/spawner/pipe"
	"github.com/shellgate/shellgate/adapters/spawner/pty"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

// HelperName is the small helper binary (cmd/shellgate-sandbox) the daemon
// prefers when it is installed beside it.
const HelperName = "shellgate-sandbox"

// Config says how confined commands are set up.
type Config struct {
	// Hide lists paths a confined command must not read: the daemon's own
	// files and agent_terminal.sandbox_deny_read. Each reads as empty.
	Hide []string
	// Writable lists more directories every confined command may write
	// (agent_terminal.sandbox_allow_write), on top of its workspace.
	Writable []string
	// MaxPids and MaxMemory (bytes) limit each command; 0 means no limit.
	MaxPids   int
	MaxMemory int64
	// TempRoot is where the sessions' private temporary directories are
	// made; empty means os.TempDir().
	TempRoot string
	// Helper is the executable that implements Command as its first
	// argument; empty means HelperName beside this process's binary when it
	// is there (it starts in a fraction of the daemon's time), else this
	// process's own binary.
	Helper string
	// Unavailable, when set, skips the probe and reports the sandbox as
	// unavailable for this reason (for tests of the unconfined path).
	Unavailable string
	// RunAs names an OS user that confined commands run as (seen from the
	// host), when the daemon runs as root: that user should own nothing but
	// the workspaces, so that even a gap in the rules above leaves the
	// daemon's files unreadable. Its workspaces must be writable by it.
	RunAs string
}

// Sandbox is the machine's confinement: its status and the decorator.
type Sandbox struct {
	cfg    Config
	helper string
	status ports.SandboxStatus
	cg     *cgroups
	// as is who confined commands run as on the host.
	as identity
}

// identity is a host user a confined command runs as.
type identity struct {
	uid, gid int
	name     string
	home     string
	switched bool // RunAs is in force
}

var _ ports.Sandbox = (*Sandbox)(nil)

// New probes what the kernel allows and returns the sandbox; it never
// fails: an unusable sandbox reports why in its Status.
func New(ctx context.Context, cfg Config) *Sandbox {
	s := &Sandbox{cfg: cfg}
	s.status = s.probe(ctx)
	return s
}

// Status reports what the probe found.
func (s *Sandbox) Status() ports.SandboxStatus { return s.status }

// Close removes the daemon's parent cgroups.
func (s *Sandbox) Close() {
	if s.cg != nil {
		s.cg.close()
	}
}

func (s *Sandbox) probe(ctx context.Context) ports.SandboxStatus {
	st := ports.SandboxStatus{}
	if s.cfg.Unavailable != "" {
		st.Reason = s.cfg.Unavailable
		return st
	}
	helper := s.cfg.Helper
	if helper == "" {
		self, err := os.Executable()
		if err != nil {
			st.Reason = "cannot find the daemon's own binary: " + err.Error()
			return st
		}
		helper = self
		if small := filepath.Join(filepath.Dir(self), HelperName); executable(small) == nil {
			helper = small
		}
	}
	s.helper = helper
	abi, err := llsyscall.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		st.Reason = "the kernel offers no Landlock, so writes cannot be confined"
		return st
	}
	st.LandlockABI = abi
	s.as = identity{uid: os.Getuid(), gid: os.Getgid()}
	runAsNote := ""
	if name := s.cfg.RunAs; name != "" {
		u, err := user.Lookup(name)
		switch {
		case err != nil:
			st.Reason = fmt.Sprintf("agent_terminal.run_as names %q, which is no user here", name)
			return st
		case os.Geteuid() != 0:
			runAsNote = fmt.Sprintf("run_as %s is not in force: switching users needs a daemon running as root", name)
		default:
			uid, _ := strconv.Atoi(u.Uid)
			gid, _ := strconv.Atoi(u.Gid)
			s.as = identity{uid: uid, gid: gid, name: name, home: u.HomeDir, switched: true}
		}
	}
	cg, why := newCgroups()
	if cg != nil {
		s.cg = cg
		st.Cgroup = cg.describe()
	}
	// The real thing, once: a confined process that checks every mechanism.
	dir, err := os.MkdirTemp(s.cfg.TempRoot, "shellgate-probe-")
	if err != nil {
		st.Reason = "cannot make a probe directory: " + err.Error()
		return st
	}
	defer os.RemoveAll(dir)
	if err := s.own(dir); err != nil {
		st.Reason = "cannot hand the probe directory to the run_as user: " + err.Error()
		return st
	}
	out, err := s.runProbe(ctx, dir)
	if err != nil {
		st.Reason = "the probe could not confine a process: " + strings.TrimSpace(out+" "+err.Error())
		s.Close()
		s.cg = nil
		st.Cgroup = ""
		return st
	}
	st.Available = true
	st.Helper = helper
	st.Mechanisms = []string{"user namespace", "mount namespace", "pid namespace", "ipc namespace", "network namespace (network off)",
		fmt.Sprintf("landlock ABI %d", abi), "no_new_privs", "no capabilities"}
	st.Confines = []string{
		"writes only in the workspace and a private /tmp (read-only: only /tmp)",
		"the daemon's files and the denied paths read as empty",
		"no network (network off): not even the host's 127.0.0.1",
		"sees and signals only its own processes; no ptrace outside",
		"no setuid gain (no_new_privs), no capabilities",
		"ending the command ends every process it started",
	}
	if cg != nil {
		st.Mechanisms = append(st.Mechanisms, st.Cgroup)
		st.Confines = append(st.Confines, "pids and memory limits")
	} else {
		st.Confines = append(st.Confines, "no pids or memory limit: "+why)
	}
	if s.as.switched {
		st.Mechanisms = append(st.Mechanisms, fmt.Sprintf("runs as %s (uid %d)", s.as.name, s.as.uid))
		st.Confines = append(st.Confines, "runs as "+s.as.name+", so what that user cannot read stays unread")
	} else if runAsNote != "" {
		st.Confines = append(st.Confines, runAsNote)
	}
	return st
}

// own hands dir to the user confined commands run as.
func (s *Sandbox) own(dir string) error {
	if !s.as.switched {
		return nil
	}
	return os.Chown(dir, s.as.uid, s.as.gid)
}

// runProbe confines one process as a command would be and returns what it
// wrote.
func (s *Sandbox) runProbe(ctx context.Context, dir string) (string, error) {
	p := plan{Mode: string(ports.SandboxWorkspaceWrite), Workspace: dir, Probe: true}
	proc, err := s.start(ctx, ports.SpawnSpec{Dir: dir, Env: []string{"PATH=/usr/bin:/bin"}}, p, "true")
	if err != nil {
		return "", err
	}
	defer proc.Close()
	_ = proc.CloseInput()
	out, _ := io.ReadAll(io.LimitReader(proc, 64<<10))
	st := proc.Wait()
	if st.Code != 0 || st.Signal != "" {
		return string(out), fmt.Errorf("it exited with %d %s", st.Code, st.Signal)
	}
	return string(out), nil
}

// ResolveDir resolves every symlink in dir and checks it is a directory.
func (s *Sandbox) ResolveDir(dir string) (string, error) {
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("%q is not an absolute path", dir)
	}
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("%s does not exist", dir)
	}
	st, err := os.Stat(r)
	if err != nil || !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	return r, nil
}

// NewScope makes one session's private temporary directory, mode 0700.
func (s *Sandbox) NewScope(name string) (ports.SandboxScope, error) {
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, name)
	if len(clean) > 40 {
		clean = clean[:40]
	}
	dir, err := os.MkdirTemp(s.cfg.TempRoot, "shellgate-agent-"+clean+"-")
	if err != nil {
		return nil, fmt.Errorf("make the session's temporary directory: %w", err)
	}
	if err := s.own(dir); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("hand the session's temporary directory to %s: %w", s.as.name, err)
	}
	return scope(dir), nil
}

type scope string

func (d scope) TempDir() string { return string(d) }
func (d scope) Close() error    { return os.RemoveAll(string(d)) }

// Spawner returns the decorator of inner.
func (s *Sandbox) Spawner(inner ports.Spawner) ports.Spawner { return &spawner{s: s, inner: inner} }

type spawner struct {
	s     *Sandbox
	inner ports.Spawner
}

// Spawn runs spec unchanged, or confined when it carries a Confinement.
func (sp *spawner) Spawn(ctx context.Context, spec ports.SpawnSpec) (ports.Process, error) {
	c := spec.Confine
	if c == nil {
		return sp.inner.Spawn(ctx, spec)
	}
	s := sp.s
	if !s.status.Available {
		return nil, fmt.Errorf("sandbox: spawn %q: %w: %s", spec.Program, ports.ErrCannotConfine, s.status.Reason)
	}
	if c.Mode != ports.SandboxWorkspaceWrite && c.Mode != ports.SandboxReadOnly {
		return nil, fmt.Errorf("sandbox: spawn %q: unknown sandbox mode %q", spec.Program, c.Mode)
	}
	if !filepath.IsAbs(c.Workspace) {
		return nil, fmt.Errorf("sandbox: spawn %q: the workspace %q is not an absolute path", spec.Program, c.Workspace)
	}
	program, err := lookPath(spec)
	if err != nil {
		return nil, fmt.Errorf("sandbox: spawn %q: %w", spec.Program, err)
	}
	p := plan{
		Mode: string(c.Mode), Network: c.Network, Workspace: c.Workspace, TempDir: c.TempDir,
		Writable: s.cfg.Writable, Hide: s.cfg.Hide,
	}
	return s.start(ctx, spec, p, program)
}

// start runs the helper for spec (its streams, directory, environment and
// size) in new namespaces, puts it in the command's cgroups, and then lets
// it go on to confine itself and run program with spec.Args.
func (s *Sandbox) start(ctx context.Context, spec ports.SpawnSpec, p plan, program string) (ports.Process, error) {
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: status pipe: %w", err)
	}
	goR, goW, err := os.Pipe()
	if err != nil {
		closeAll(statusR, statusW)
		return nil, fmt.Errorf("sandbox: start pipe: %w", err)
	}
	// The helper is executed through a descriptor the daemon opened, so
	// that a run_as user needs no way to the daemon's binary directory.
	helper, err := os.Open(s.helper)
	if err != nil {
		closeAll(statusR, statusW, goR, goW)
		return nil, fmt.Errorf("sandbox: open the helper: %w", err)
	}
	defer helper.Close()
	// Inside, the helper is root of its user namespace (it needs that to
	// mount), which is the daemon's user on the host, or run_as's.
	inside, insideGID := os.Getuid(), os.Getgid()
	if s.as.switched {
		inside, insideGID = 0, 0
		spec.Env = withHome(spec.Env, s.as)
	}
	flags := uintptr(unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS)
	if !p.Network {
		flags |= unix.CLONE_NEWNET
	}
	prepare := func(cmd *exec.Cmd) {
		cmd.Path = "/proc/self/fd/" + strconv.Itoa(helperFD)
		cmd.SysProcAttr.Cloneflags |= flags
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: inside, HostID: s.as.uid, Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: insideGID, HostID: s.as.gid, Size: 1}}
		if s.as.switched {
			// The child starts as the daemon's root, which the namespace
			// does not map; becoming its root makes it run_as on the host.
			cmd.SysProcAttr.Credential = &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: true}
		}
		cmd.ExtraFiles = []*os.File{statusW, goR, helper} // statusFD, goFD, helperFD
	}
	var inner ports.Spawner = pipe.NewPrepared(prepare)
	if spec.PTY {
		inner = pty.NewPrepared(prepare)
	}
	var g *group
	if s.cg != nil {
		if g, err = s.cg.create(s.cfg.MaxPids, s.cfg.MaxMemory); err != nil {
			closeAll(statusR, statusW, goR, goW)
			return nil, fmt.Errorf("sandbox: spawn %q: %w", spec.Program, err)
		}
	}
	out := spec
	out.Confine = nil
	out.Program = s.helper
	out.Args = append([]string{Command, p.encode(), program}, spec.Args...)
	proc, err := inner.Spawn(ctx, out)
	closeAll(statusW, goR)
	if err != nil {
		closeAll(statusR, goW)
		if g != nil {
			g.remove()
		}
		return nil, err
	}
	// Nothing of the command runs before it is counted in its cgroups.
	if g != nil {
		if err := g.join(proc.Pid()); err != nil {
			goW.Close() // the helper reads end of file and starts nothing
			_ = proc.Kill()
			proc.Wait()
			_ = proc.Close()
			statusR.Close()
			g.end()
			return nil, fmt.Errorf("sandbox: spawn %q: %w", spec.Program, err)
		}
	}
	// A helper already gone makes this write fail; its Wait says how.
	_, _ = goW.Write([]byte{1})
	goW.Close()
	return &process{Process: proc, g: g, status: statusR}, nil
}

// withHome points HOME, USER and LOGNAME at the run_as user, whose
// programs (git, say) would otherwise fail on the daemon user's home.
func withHome(env []string, as identity) []string {
	out := make([]string, 0, len(env)+3)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "USER=") && !strings.HasPrefix(kv, "LOGNAME=") {
			out = append(out, kv)
		}
	}
	return append(out, "HOME="+as.home, "USER="+as.name, "LOGNAME="+as.name)
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// lookPath finds the program as the command's own PATH would, so that a
// missing program fails the spawn here, as it does unconfined.
func lookPath(spec ports.SpawnSpec) (string, error) {
	name := spec.Program
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) && spec.Dir != "" {
			name = filepath.Join(spec.Dir, name)
		}
		if err := executable(name); err != nil {
			return "", err
		}
		return name, nil
	}
	path := ""
	for _, kv := range spec.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) && spec.Dir != "" {
			d = filepath.Join(spec.Dir, d)
		}
		if full := filepath.Join(d, name); executable(full) == nil {
			return full, nil
		}
	}
	return "", fmt.Errorf("%w: %s not found in PATH", exec.ErrNotFound, name)
}

func executable(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}

// process is a confined process: the helper's, standing for the command.
// Once it has ended, whatever is left in its cgroups is killed and the
// groups removed.
type process struct {
	ports.Process
	g      *group
	status *os.File

	once sync.Once
	st   terminal.ExitStatus
}

// Wait returns the command's status, as the helper reported it (or the
// helper's own, when it was killed before it could); the first return also
// ends the command's cgroups.
func (p *process) Wait() terminal.ExitStatus {
	st := p.Process.Wait()
	p.once.Do(func() {
		p.st = st
		// The helper has exited, so the pipe's only writer is gone.
		report, _ := io.ReadAll(io.LimitReader(p.status, 4<<10))
		if got, ok := statusOf(string(report)); ok {
			p.st = got
		}
		if p.g != nil {
			p.g.end()
		}
	})
	return p.st
}

// Close releases the process and the helper's status pipe; a Wait after
// it still ends the cgroups, and reports the helper's own status.
func (p *process) Close() error {
	err := p.Process.Close()
	_ = p.status.Close()
	return err
}

// Stderr hands out the inner process's standard error, if it keeps one.
func (p *process) Stderr() io.Reader {
	if s, ok := p.Process.(ports.StderrSource); ok {
		return s.Stderr()
	}
	return nil
}

// TryWrite writes what the input takes now.
func (p *process) TryWrite(b []byte) (int, error) {
	if t, ok := p.Process.(ports.InputTrier); ok {
		return t.TryWrite(b)
	}
	return p.Process.Write(b)
}

var _ ports.QuietParker = (*process)(nil)

// ReadLentQuiet is the confined process's, where it has one; otherwise
// ReadLent, which never gives up.
func (p *process) ReadLentQuiet(quiet time.Duration, lend func() []byte, giveBack func([]byte)) ([]byte, int, error) {
	if q, ok := p.Process.(ports.QuietParker); ok {
		return q.ReadLentQuiet(quiet, lend, giveBack)
	}
	return p.ReadLent(lend, giveBack)
}

// AwaitOutput is the confined process's, where it has one; otherwise ready
// comes at once.
func (p *process) AwaitOutput(ready func()) {
	if q, ok := p.Process.(ports.QuietParker); ok {
		q.AwaitOutput(ready)
		return
	}
	ready()
}

// ReadLent reads into a buffer borrowed once output is there.
func (p *process) ReadLent(lend func() []byte, giveBack func([]byte)) ([]byte, int, error) {
	if l, ok := p.Process.(ports.BufferLender); ok {
		return l.ReadLent(lend, giveBack)
	}
	buf := lend()
	n, err := p.Process.Read(buf)
	if n == 0 && err != nil {
		giveBack(buf)
		return nil, 0, err
	}
	return buf, n, err
}
