package pty_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/adapters/spawner/contract"
	"github.com/shellgate/shellgate/adapters/spawner/pty"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(contract.NoChildrenLeft(m),
		// The thread children are forked on lives as long as the process.
		goleak.IgnoreTopFunction("github.com/shellgate/shellgate/adapters/spawner/internal/proc.spawnThread"))
}

func harness() contract.Harness {
	return contract.Shell(func(*testing.T) ports.Spawner { return pty.New() }, true)
}

func TestPTYContract(t *testing.T) { contract.Run(t, harness()) }

func TestPTYChildSeesTERMAndTheRequestedSize(t *testing.T) {
	spec := contract.ShellSpec(`echo "term=$TERM"; stty size`)
	spec.Cols, spec.Rows = 132, 43
	p := contract.Start(t, harness(), spec)

	out := p.WaitEOF()
	require.Contains(t, out, "term=xterm-256color\n")
	require.Contains(t, out, "43 132\n")
	require.Equal(t, terminal.ExitedWith(0), p.WaitExit())
}

func TestPTYDefaultSizeIs80x24(t *testing.T) {
	p := contract.Start(t, harness(), contract.ShellSpec(`stty size`))

	require.Equal(t, "24 80\n", p.WaitEOF())
	require.Equal(t, terminal.ExitedWith(0), p.WaitExit())
}

func TestPTYChildLeadsASessionOnItsTerminal(t *testing.T) {
	p := contract.Start(t, harness(), contract.ShellSpec(`tty; echo ready; read line`))
	p.WaitOutput("ready")

	sid, err := unix.Getsid(p.Pid())
	require.NoError(t, err)
	require.Equal(t, p.Pid(), sid)
	pgid, err := unix.Getpgid(p.Pid())
	require.NoError(t, err)
	require.Equal(t, p.Pid(), pgid)
	require.Contains(t, p.Output(), "/dev/pts/", "stdin is the pty")

	_, err = p.Write([]byte("\n"))
	require.NoError(t, err)
	require.Equal(t, terminal.ExitedWith(0), p.WaitExit())
	p.WaitEOF()
}

func TestPTYResizeSendsSIGWINCH(t *testing.T) {
	// A trapped signal makes "wait" return at once (POSIX), so the trap runs
	// as soon as the signal arrives.
	p := contract.Start(t, harness(), contract.ShellSpec(
		`trap 'echo "winch $(stty size)"; kill $!; exit 0' WINCH; sleep 1000 & echo ready; wait`))
	p.WaitOutput("ready")

	require.NoError(t, p.Resize(100, 40))

	p.WaitOutput("winch 40 100")
	require.Equal(t, terminal.ExitedWith(0), p.WaitExit())
	p.WaitEOF()
}

func TestPTYFastExitsLoseNoOutput(t *testing.T) {
	s := pty.New()
	for i := range 50 {
		want := fmt.Sprintf("line %d", i)
		p, err := s.Spawn(context.Background(), ports.SpawnSpec{
			Program: "echo", Args: []string{want}, Env: contract.ShellEnv(), PTY: true,
		})
		require.NoError(t, err)

		out, err := readAll(t, p)
		require.NoError(t, err)
		require.Equal(t, want+"\r\n", out, "run %d", i)
		require.Equal(t, terminal.ExitedWith(0), p.Wait())
		require.NoError(t, p.Close())
		contract.RequireGroupGone(t, p.Pid(), contract.DefaultTimeout)
	}
}

func TestPTYCloseInterruptsAPendingRead(t *testing.T) {
	s := pty.New()
	p, err := s.Spawn(context.Background(), ports.SpawnSpec{
		Program: "sh", Args: []string{"-c", "echo ready; exec cat"}, Env: contract.ShellEnv(), PTY: true,
	})
	require.NoError(t, err)

	firstRead := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		buf := make([]byte, 1024)
		_, err := p.Read(buf)
		close(firstRead)
		for err == nil {
			_, err = p.Read(buf)
		}
		readErr <- err
	}()
	// After the first output the reader goes straight back into Read, where
	// only Close can release it: cat never writes or exits on its own. A
	// blocking master would keep that Read (and its goroutine) stuck.
	select {
	case <-firstRead:
	case <-time.After(contract.DefaultTimeout):
		t.Fatal("no output from the child")
	}
	require.NoError(t, p.Close())
	select {
	case err := <-readErr:
		require.ErrorIs(t, err, os.ErrClosed)
	case <-time.After(contract.DefaultTimeout):
		_ = p.Kill()
		t.Fatal("Read still blocked after Close")
	}

	// Closing the master hung up cat's terminal.
	require.Equal(t, terminal.KilledBy("SIGHUP"), p.Wait())
	contract.RequireGroupGone(t, p.Pid(), contract.DefaultTimeout)
}

func TestPTYRefusesAPipesSpec(t *testing.T) {
	p, err := pty.New().Spawn(context.Background(), contract.ShellSpec(`echo must not run`))

	require.ErrorContains(t, err, "pipe")
	require.Nil(t, p)
}

// readAll reads p to the end, giving up (and killing p's group) after the
// contract's deadline.
func readAll(t *testing.T, p ports.Process) (string, error) {
	t.Helper()
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := io.ReadAll(p)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		return string(r.out), r.err
	case <-time.After(contract.DefaultTimeout):
		_ = p.Kill()
		_ = p.Close()
		<-done
		p.Wait()
		t.Fatal("no end of output")
		return "", nil
	}
}
