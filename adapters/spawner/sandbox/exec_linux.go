package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/domain/terminal"
)

// exitSetup is the exit code of a command whose confinement could not be
// put in force: nothing of the command ran.
const exitSetup = 126

// The descriptors the daemon hands the helper beside the standard streams.
const (
	// statusFD is where the helper reports how the command ended.
	statusFD = 3
	// goFD is where the daemon says, with one byte, that the helper is in
	// its cgroups and may start the command; end of file means it may not.
	goFD = 4
	// helperFD is the helper's own binary, which it was executed through.
	helperFD = 5
)

// Main runs the helper: args are what follows Command on the command line
// (PLAN PROGRAM ARGS...). It is process 1 of the command's PID namespace, in
// its own user, mount, IPC, UTS and (network off) network namespaces, which
// the daemon created when it started it. It waits until the daemon has put
// it in its cgroups, builds the command's view of the filesystem, restricts
// itself with Landlock, drops every capability, runs the command as its
// child, reaps whatever gets reparented to it, and reports how the command
// ended on descriptor 3, since process 1 of a PID namespace cannot die of
// the command's signal itself. When it exits, the kernel kills everything
// left in the namespace: nothing a command started outlives it.
func Main(args []string) int {
	// Neither descriptor may reach the command.
	syscall.CloseOnExec(statusFD)
	syscall.CloseOnExec(goFD)
	syscall.CloseOnExec(helperFD)
	status := os.NewFile(statusFD, "status")
	report := func(format string, a ...any) int {
		fmt.Fprintf(status, format+"\n", a...)
		return 0
	}
	fail := func(format string, a ...any) int {
		msg := fmt.Sprintf(format, a...)
		fmt.Fprintf(os.Stderr, "shellgate: sandbox: %s\n", msg)
		return report("error %s", msg)
	}
	if len(args) < 2 {
		return fail("usage: shellgate %s PLAN PROGRAM [ARGS...]", Command)
	}
	p, err := decodePlan(args[0])
	if err != nil {
		return fail("%v", err)
	}
	if n, _ := os.NewFile(goFD, "go").Read(make([]byte, 1)); n != 1 {
		return fail("the daemon did not let the command start")
	}
	// Capabilities are per thread: the thread that drops them must be the
	// one that starts the command.
	runtime.LockOSThread()
	if err := confine(p); err != nil {
		return fail("%v", err)
	}
	if p.Probe {
		return report("exit 0")
	}
	program, err := exec.LookPath(args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "shellgate: sandbox: %s: %v\n", args[1], err)
		return report("exit 127")
	}
	if err := dropCapabilities(); err != nil {
		return fail("drop capabilities: %v", err)
	}
	// The signals a terminal sends reach the whole process group, the
	// command included; process 1 only waits for the command's end.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	pid, err := syscall.ForkExec(program, args[1:], &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
	})
	if err != nil {
		return fail("start %s: %v", args[1], err)
	}
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return fail("wait: %v", err)
		}
		if got != pid {
			continue // an orphan reparented to us
		}
		if ws.Signaled() {
			return report("signal %d", int(ws.Signal()))
		}
		return report("exit %d", ws.ExitStatus())
	}
}

// statusOf reads the helper's report: how the command ended, or ok false
// when there is none (the helper itself was killed).
func statusOf(report string) (terminal.ExitStatus, bool) {
	kind, value, _ := strings.Cut(strings.TrimSpace(report), " ")
	switch kind {
	case "exit":
		code, err := strconv.Atoi(value)
		return terminal.ExitedWith(code), err == nil
	case "signal":
		n, err := strconv.Atoi(value)
		if err != nil {
			return terminal.ExitStatus{}, false
		}
		name := unix.SignalName(syscall.Signal(n))
		if name == "" {
			name = "SIG" + value
		}
		return terminal.KilledBy(name), true
	case "error":
		return terminal.ExitedWith(exitSetup), true
	}
	return terminal.ExitStatus{}, false
}

// confine builds the mounts, the network and the Landlock domain.
func confine(p plan) error {
	cwd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	writable := []string{"/tmp"}
	if p.Mode == "workspace-write" {
		writable = append(writable, p.Workspace)
	}
	writable = append(writable, p.Writable...)
	if err := privateTmp(p.TempDir, append([]string{cwd, p.Workspace}, p.Writable...), writable); err != nil {
		return err
	}
	if _, err := os.Stat("/dev/shm"); err == nil {
		if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
			return fmt.Errorf("mount /dev/shm: %w", err)
		}
	}
	for _, h := range p.Hide {
		if err := hide(h); err != nil {
			return err
		}
	}
	if err := os.Chdir(cwd); err != nil {
		return fmt.Errorf("enter %s: %w", cwd, err)
	}
	if !p.Network {
		if err := loopbackUp(); err != nil {
			return fmt.Errorf("loopback: %w", err)
		}
	}
	return restrict(writable)
}

// privateTmp puts the command's own /tmp in place: tempDir bound over it,
// or a fresh tmpfs. Paths in keep that lay under /tmp (a workspace made
// there) are bound back at the same place, through descriptors opened
// before /tmp was covered; those not in writable are bound read-only, since
// Landlock would otherwise grant them the private /tmp's rights.
func privateTmp(tempDir string, keep, writable []string) error {
	type kept struct {
		path string
		fd   int
		ro   bool
	}
	var under []kept
	seen := map[string]bool{}
	for _, k := range keep {
		if k == "" || !strings.HasPrefix(k, "/tmp/") || seen[k] {
			continue
		}
		seen[k] = true
		fd, err := unix.Open(k, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // it is not there to keep
		}
		defer unix.Close(fd)
		under = append(under, kept{k, fd, !within(k, writable[1:])})
	}
	// A parent before its children, so a child's bind is not covered.
	slices.SortFunc(under, func(a, b kept) int { return strings.Compare(a.path, b.path) })
	if tempDir != "" {
		if err := unix.Mount(tempDir, "/tmp", "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s on /tmp: %w", tempDir, err)
		}
	} else if err := unix.Mount("tmpfs", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		return fmt.Errorf("mount /tmp: %w", err)
	}
	for _, k := range under {
		if err := os.MkdirAll(k.path, 0o700); err != nil {
			return fmt.Errorf("keep %s: %w", k.path, err)
		}
		src := "/proc/self/fd/" + strconv.Itoa(k.fd)
		if err := unix.Mount(src, k.path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("keep %s: %w", k.path, err)
		}
		if k.ro {
			if err := unix.Mount("", k.path, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
				return fmt.Errorf("keep %s read-only: %w", k.path, err)
			}
		}
	}
	return nil
}

// within reports whether path is one of dirs or lies under one.
func within(path string, dirs []string) bool {
	for _, d := range dirs {
		if path == d || strings.HasPrefix(path, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

// hide makes path read as empty; a path that does not exist is left alone.
func hide(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return nil
	}
	if st.IsDir() {
		if err := unix.Mount("tmpfs", path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555"); err != nil {
			return fmt.Errorf("hide %s: %w", path, err)
		}
		return nil
	}
	if err := unix.Mount("/dev/null", path, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("hide %s: %w", path, err)
	}
	if err := unix.Mount("", path, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
		return fmt.Errorf("hide %s: %w", path, err)
	}
	return nil
}

// loopbackUp brings up the namespace's own loopback, so that a build or a
// test may listen and connect on 127.0.0.1 inside; it is not the host's.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// devices are the device files any command may open for writing.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

// restrict enforces the Landlock domain: read and execute everywhere (what
// must not be read is hidden by mounts), write only in writable and the
// devices, no signal to and no abstract socket of a process outside the
// domain. Network access is the network namespace's business, so the TCP
// rights are left out.
func restrict(writable []string) error {
	cfg := landlock.V7
	cfg.HandledAccessNet = 0
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles(devices...).WithIoctlDev().IgnoreIfMissing(),
		landlock.RWDirs("/dev/pts", "/dev/shm").WithIoctlDev().IgnoreIfMissing(),
		landlock.RWDirs(writable...).WithRefer().IgnoreIfMissing(),
	}
	if err := cfg.BestEffort().Restrict(rules...); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return nil
}

// dropCapabilities leaves the command no capability, even as root of its
// user namespace: the bounding set is emptied, so no exec can regain one.
// Capabilities are per thread; the caller has locked its goroutine to the
// thread that will start the command.
func dropCapabilities() error {
	last := 40
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("bounding set: %w", err)
		}
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}
