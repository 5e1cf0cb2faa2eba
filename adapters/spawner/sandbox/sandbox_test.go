package sandbox_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shellgate/shellgate/adapters/spawner/contract"
	"github.com/shellgate/shellgate/adapters/spawner/local"
	"github.com/shellgate/shellgate/adapters/spawner/sandbox"
	"github.com/shellgate/shellgate/ports"
)

// TestMain lets the test binary stand in for the daemon's: the sandbox runs
// its helper as `<binary> sandbox-exec …`.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.Command {
		os.Exit(sandbox.Main(os.Args[2:]))
	}
	goleak.VerifyTestMain(contract.NoChildrenLeft(closingShared{m}),
		// The thread children are forked on lives as long as the process.
		goleak.IgnoreTopFunction("github.com/shellgate/shellgate/adapters/spawner/internal/proc.spawnThread"))
}

var (
	shared     *sandbox.Sandbox
	sharedOnce sync.Once
)

// closingShared removes the shared sandbox's groups once the tests are done.
type closingShared struct{ m *testing.M }

func (c closingShared) Run() int {
	code := c.m.Run()
	if shared != nil {
		shared.Close()
	}
	return code
}

// machine returns the sandbox of this machine, probed once; a test that
// needs it fails (it does not skip) where the kernel cannot confine.
func machine(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	sharedOnce.Do(func() {
		shared = sandbox.New(context.Background(), sandbox.Config{MaxPids: 64, MaxMemory: 256 << 20})
	})
	st := shared.Status()
	require.True(t, st.Available, "the sandbox is unavailable here: %s", st.Reason)
	return shared
}

// confining wraps a spawner so that every spec runs confined to its own
// directory (or a fresh one).
type confining struct {
	t     *testing.T
	inner ports.Spawner
}

func (c confining) Spawn(ctx context.Context, spec ports.SpawnSpec) (ports.Process, error) {
	ws := spec.Dir
	if ws == "" || !filepath.IsAbs(ws) {
		ws = c.t.TempDir()
		if spec.Dir == "" {
			spec.Dir = ws
		}
	}
	spec.Confine = &ports.Confinement{Mode: ports.SandboxWorkspaceWrite, Workspace: ws}
	return c.inner.Spawn(ctx, spec)
}

func TestSandboxPipeContract(t *testing.T) {
	sb := machine(t)
	contract.Run(t, contract.Shell(func(t *testing.T) ports.Spawner {
		return confining{t, sb.Spawner(local.New())}
	}, false))
}

func TestSandboxPTYContract(t *testing.T) {
	sb := machine(t)
	contract.Run(t, contract.Shell(func(t *testing.T) ports.Spawner {
		return confining{t, sb.Spawner(local.New())}
	}, true))
}

// run runs script confined to ws and returns its output and exit code.
func run(t *testing.T, c ports.Confinement, script string, args ...string) (string, int) {
	t.Helper()
	sb := machine(t)
	spec := contract.ShellSpec(script, args...)
	spec.Dir = c.Workspace
	spec.Confine = &c
	p := contract.Start(t, contract.Shell(func(*testing.T) ports.Spawner { return sb.Spawner(local.New()) }, false), spec)
	out := p.WaitEOF()
	return out, p.WaitExit().Code
}

// visibleDir is a temporary directory outside /tmp, which a confined
// command sees (its /tmp is private): what keeps it intact is Landlock.
func visibleDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "shellgate-canary-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func TestSandboxWritesOnlyInsideTheWorkspace(t *testing.T) {
	ws, outside := t.TempDir(), visibleDir(t)
	canary := filepath.Join(outside, "canary")
	require.NoError(t, os.WriteFile(canary, []byte("keep"), 0o644))

	out, code := run(t, ports.Confinement{Mode: ports.SandboxWorkspaceWrite, Workspace: ws},
		`mkdir -p build && echo x > build/a && cat build/a && rm -rf build && echo ok;
		 echo bad > "$1/new" 2>/dev/null && echo wrote-outside;
		 rm -f "$1/canary" 2>/dev/null && echo deleted-outside;
		 echo tmp > /tmp/t && cat /tmp/t; true`, outside)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "x\nok\n")
	require.Contains(t, out, "tmp\n")
	require.NotContains(t, out, "wrote-outside")
	require.NotContains(t, out, "deleted-outside")
	b, err := os.ReadFile(canary)
	require.NoError(t, err)
	require.Equal(t, "keep", string(b))
	require.NoFileExists(t, filepath.Join(outside, "new"))
}

func TestSandboxReadOnlyWritesNothingButTmp(t *testing.T) {
	for _, ws := range []string{t.TempDir(), visibleDir(t)} {
		readOnly(t, ws)
	}
}

func readOnly(t *testing.T, ws string) {
	out, _ := run(t, ports.Confinement{Mode: ports.SandboxReadOnly, Workspace: ws},
		`echo x > f 2>/dev/null && echo wrote; echo t > /tmp/t && echo tmp-ok`)
	require.NotContains(t, out, "wrote")
	require.Contains(t, out, "tmp-ok")
	require.NoFileExists(t, filepath.Join(ws, "f"))
}

func TestSandboxHidesTheDeniedPaths(t *testing.T) {
	secretDir, ws := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(secretDir, "key"), []byte("SECRET-DIR"), 0o600))
	secretFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(secretFile, []byte("SECRET-FILE"), 0o600))
	sb := sandbox.New(context.Background(), sandbox.Config{Hide: []string{secretDir, secretFile}})
	require.True(t, sb.Status().Available, sb.Status().Reason)
	t.Cleanup(sb.Close) // after the command's own cleanup has ended its groups

	spec := contract.ShellSpec(`cat "$1/key" "$2" /proc/self/root"$2" 2>&1; ls -A "$1"; echo end`, secretDir, secretFile)
	spec.Dir = ws
	spec.Confine = &ports.Confinement{Mode: ports.SandboxWorkspaceWrite, Workspace: ws}
	p := contract.Start(t, contract.Shell(func(*testing.T) ports.Spawner { return sb.Spawner(local.New()) }, false), spec)
	out := p.WaitEOF()
	require.Contains(t, out, "end")
	require.NotContains(t, out, "SECRET")
}

func TestSandboxHasNoNetworkWhenOff(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	out, code := run(t, ports.Confinement{Mode: ports.SandboxWorkspaceWrite, Workspace: t.TempDir()},
		`"$1" -c 'echo hi > /dev/tcp/127.0.0.1/`+port+`' 2>/dev/null && echo connected; echo done`, bash)
	require.Equal(t, 0, code)
	require.Equal(t, "done\n", out)
	select {
	case <-accepted:
		t.Fatal("the confined command reached the host's listener")
	default:
	}
}

func TestSandboxCannotSeeOrSignalProcessesOutside(t *testing.T) {
	victim := exec.Command("sleep", "300")
	require.NoError(t, victim.Start())
	t.Cleanup(func() { _ = victim.Process.Kill(); _ = victim.Wait() })
	pid := strconv.Itoa(victim.Process.Pid)

	out, _ := run(t, ports.Confinement{Mode: ports.SandboxWorkspaceWrite, Workspace: t.TempDir()},
		`kill -9 `+pid+` 2>/dev/null && echo killed; ls /proc | grep -c '^[0-9]'; cat /proc/`+pid+`/environ 2>/dev/null && echo read-env; echo end`)
	require.NotContains(t, out, "killed")
	require.NotContains(t, out, "read-env")
	require.Contains(t, out, "end")
	// Only the sandbox's own few processes are visible.
	n, err := strconv.Atoi(strings.Fields(out)[0])
	require.NoError(t, err)
	require.Less(t, n, 10)
	require.NoError(t, victim.Process.Signal(syscall.Signal(0)), "the victim must still be alive")
}

func TestSandboxEndsDetachedProcessesWithTheCommand(t *testing.T) {
	marker := "300." + strconv.Itoa(os.Getpid())
	_, code := run(t, ports.Confinement{Mode: ports.SandboxWorkspaceWrite, Workspace: t.TempDir()},
		`setsid sleep `+marker+` </dev/null >/dev/null 2>&1 & echo started`)
	require.Equal(t, 0, code)
	contract.RequireNoProcessMatching(t, "sleep "+marker, contract.DefaultTimeout)
}

func TestSandboxForkBombStopsAtThePidsLimit(t *testing.T) {
	out, _ := run(t, ports.Confinement{Mode: ports.SandboxWorkspaceWrite, Workspace: t.TempDir()},
		`perl -e 'my $n = 0; while ($n < 200) { my $p = fork(); last unless defined $p; if ($p == 0) { sleep 30; exit 0 } $n++ } print "$n\n"; kill 9, -$$'; echo end`)
	require.Contains(t, out, "end")
	n, err := strconv.Atoi(strings.Fields(out)[0])
	require.NoError(t, err)
	require.Less(t, n, 64, "more processes ran than the pids limit allows")
}

func TestSandboxRefusesWhenUnavailable(t *testing.T) {
	sb := sandbox.New(context.Background(), sandbox.Config{Unavailable: "forced off by the test"})
	require.False(t, sb.Status().Available)
	spec := contract.ShellSpec(`echo must not run`)
	spec.Confine = &ports.Confinement{Mode: ports.SandboxWorkspaceWrite, Workspace: t.TempDir()}
	_, err := sb.Spawner(local.New()).Spawn(context.Background(), spec)
	require.True(t, errors.Is(err, ports.ErrCannotConfine), "%v", err)
	// Unconfined specs still run.
	p := contract.Start(t, contract.Shell(func(*testing.T) ports.Spawner { return sb.Spawner(local.New()) }, false), contract.ShellSpec(`echo free`))
	require.Equal(t, "free\n", p.WaitEOF())
}

func TestSandboxRunsAsTheRunAsUserWhoCannotReadTheDaemonsFiles(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("run_as needs a daemon running as root; this test runs as uid", os.Geteuid())
	}
	nobody, err := user.Lookup("nobody")
	require.NoError(t, err, "Debian always has the user nobody")
	uid, _ := strconv.Atoi(nobody.Uid)
	sb := sandbox.New(context.Background(), sandbox.Config{RunAs: "nobody"})
	require.True(t, sb.Status().Available, sb.Status().Reason)
	t.Cleanup(sb.Close) // after the command's own cleanup has ended its groups
	require.Contains(t, strings.Join(sb.Status().Mechanisms, ", "), "runs as nobody")

	// A file of the daemon's user that no rule hides: only the OS user stops it.
	secretDir := visibleDir(t)
	require.NoError(t, os.Chmod(secretDir, 0o755))
	secret := filepath.Join(secretDir, "private")
	require.NoError(t, os.WriteFile(secret, []byte("SECRET-OF-THE-DAEMON-USER"), 0o600))
	ws := filepath.Join(visibleDir(t), "ws")
	require.NoError(t, os.Chmod(filepath.Dir(ws), 0o755))
	require.NoError(t, os.Mkdir(ws, 0o755))
	require.NoError(t, os.Chown(ws, uid, uid))

	spec := contract.ShellSpec(`cat "$1" 2>&1; echo made > made; echo "home=$HOME"`, secret)
	spec.Dir = ws
	spec.Env = append(spec.Env, "HOME=/root")
	spec.Confine = &ports.Confinement{Mode: ports.SandboxWorkspaceWrite, Workspace: ws}
	p := contract.Start(t, contract.Shell(func(*testing.T) ports.Spawner { return sb.Spawner(local.New()) }, false), spec)
	out := p.WaitEOF()
	require.NotContains(t, out, "SECRET")
	require.Contains(t, out, "Permission denied")
	require.Contains(t, out, "home="+nobody.HomeDir)
	st, err := os.Stat(filepath.Join(ws, "made"))
	require.NoError(t, err, out)
	require.EqualValues(t, uid, st.Sys().(*syscall.Stat_t).Uid, "what it writes is the run_as user's")
}
