package proc

import (
	"io"
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/domain/terminal"
)

// privateReaper is a reaper of the test's own, so that its state and its
// failures touch no other test.
func privateReaper(t *testing.T) *reaper {
	t.Helper()
	r := newReaper()
	if r == nil {
		t.Skip("no pidfds or waitid(P_PIDFD) here")
	}
	t.Cleanup(func() { _ = r.set.file.Close() })
	return r
}

// idleChild starts cat, which runs until its input ends or a signal; the
// returned writer is that input.
func idleChild(t *testing.T) (*Child, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command("cat")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	c := &Child{who: "test", process: cmd.Process, done: make(chan struct{})}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		waitFor(t, c)
		_ = stdin.Close()
	})
	return c, stdin
}

func TestReaperReapsEachChildAsItExits(t *testing.T) {
	r := privateReaper(t)
	first, firstIn := idleChild(t)
	second, _ := idleChild(t)
	require.True(t, r.watch(first))
	require.True(t, r.watch(second))

	require.NoError(t, firstIn.Close())
	require.Equal(t, terminal.ExitedWith(0), waitFor(t, first))
	select {
	case <-second.done:
		t.Fatal("the child still running was reaped")
	default:
	}

	require.NoError(t, second.process.Signal(syscall.SIGKILL))
	require.Equal(t, terminal.KilledBy("SIGKILL"), waitFor(t, second))
}

func TestReaperWatchesChildrenThatCameAfterItWentIdle(t *testing.T) {
	r := privateReaper(t)
	for range 3 {
		c, in := idleChild(t)
		require.True(t, r.watch(c))
		require.NoError(t, in.Close())
		require.Equal(t, terminal.ExitedWith(0), waitFor(t, c))
	}
}

func TestReaperThatBrokeLeavesNoChildUnreaped(t *testing.T) {
	r := privateReaper(t)
	running, _ := idleChild(t)
	require.True(t, r.watch(running))

	// With the epoll set gone, the reaper's wait fails: the children it has
	// get blocking waits of their own, and it takes no more.
	require.NoError(t, r.set.file.Close())
	later, _ := idleChild(t)
	if !r.watch(later) {
		go later.collect()
	}

	for _, c := range []*Child{running, later} {
		require.NoError(t, c.process.Signal(syscall.SIGKILL))
		require.Equal(t, terminal.KilledBy("SIGKILL"), waitFor(t, c))
	}
}
