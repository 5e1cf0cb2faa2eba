package proc

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shellgate/shellgate/adapters/spawner/contract"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(contract.NoChildrenLeft(m),
		// The thread children are forked on lives as long as the process.
		goleak.IgnoreTopFunction("github.com/shellgate/shellgate/adapters/spawner/internal/proc.spawnThread"))
}

func TestSignalNamesAreNormalised(t *testing.T) {
	tests := []struct {
		sig  syscall.Signal
		want string
	}{
		{syscall.SIGINT, "SIGINT"},
		{syscall.SIGTERM, "SIGTERM"},
		{syscall.SIGKILL, "SIGKILL"},
		{syscall.Signal(40), "SIG40"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, SignalName(tt.sig))
	}
}

func TestChildThatNeverStartedRefusesSignals(t *testing.T) {
	// Not kill(0, sig), which would hit the daemon's own process group; and
	// the very sentinel, which callers compare with ==.
	var c *Child

	require.Zero(t, c.Pid())
	require.Equal(t, ports.ErrNoProcess, c.Signal(syscall.SIGKILL))
}

func TestStatusIsNormalisedOnce(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   terminal.ExitStatus
	}{
		{"exit code", "exit 3", terminal.ExitedWith(3)},
		{"success", "exit 0", terminal.ExitedWith(0)},
		{"killed by a signal", "kill -TERM $$", terminal.KilledBy("SIGTERM")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", tt.script)
			require.NoError(t, cmd.Start())
			state, _ := cmd.Process.Wait()
			require.Equal(t, tt.want, Status(state))
		})
	}
	require.Equal(t, terminal.CouldNotStart(), Status(nil), "no state: it never ran")
}

func TestReapReportsTheExitToEveryWaiter(t *testing.T) {
	c := start(t, "exit 7")

	got := make(chan terminal.ExitStatus, 3)
	for range cap(got) {
		go func() { got <- c.Wait() }()
	}
	for range cap(got) {
		require.Equal(t, terminal.ExitedWith(7), receive(t, got))
	}
	require.Equal(t, terminal.ExitedWith(7), c.Wait())
}

func TestCollectAloneStillReaps(t *testing.T) {
	// What every child does where pidfds are missing: a blocking wait.
	cmd := exec.Command("sh", "-c", "exit 5")
	require.NoError(t, cmd.Start())
	c := &Child{who: "test", process: cmd.Process, done: make(chan struct{})}

	go c.collect()

	require.Equal(t, terminal.ExitedWith(5), waitFor(t, c))
	contract.RequireProcessGone(t, cmd.Process.Pid, contract.DefaultTimeout)
}

func TestSignalAfterTheGroupIsGoneReportsProcessDone(t *testing.T) {
	c := start(t, "exit 0")
	waitFor(t, c)

	err := c.Signal(syscall.SIGTERM)

	require.ErrorIs(t, err, os.ErrProcessDone)
	require.ErrorContains(t, err, "test: SIGTERM to process group")
}

// start runs script in a process group of its own, reaped by a Child.
func start(t *testing.T, script string) *Child {
	t.Helper()
	cmd := Command(ports.SpawnSpec{Program: "sh", Args: []string{"-c", script}})
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	c := Reap("test", cmd)
	t.Cleanup(func() {
		_ = c.Signal(syscall.SIGKILL)
		waitFor(t, c)
	})
	return c
}

func waitFor(t *testing.T, c *Child) terminal.ExitStatus {
	t.Helper()
	got := make(chan terminal.ExitStatus, 1)
	go func() { got <- c.Wait() }()
	return receive(t, got)
}

func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), contract.DefaultTimeout)
	defer cancel()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		t.Fatalf("nothing after %v", contract.DefaultTimeout)
		var zero T
		return zero
	}
}
