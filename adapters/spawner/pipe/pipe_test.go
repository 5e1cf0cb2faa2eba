package pipe_test

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/adapters/spawner/contract"
	"github.com/shellgate/shellgate/adapters/spawner/pipe"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(contract.NoChildrenLeft(m),
		// The thread children are forked on lives as long as the process.
		goleak.IgnoreTopFunction("github.com/shellgate/shellgate/adapters/spawner/internal/proc.spawnThread"))
}

func harness() contract.Harness {
	return contract.Shell(func(*testing.T) ports.Spawner { return pipe.New() }, false)
}

func TestPipeContract(t *testing.T) { contract.Run(t, harness()) }

func TestPipeChildLeadsItsOwnProcessGroup(t *testing.T) {
	p := contract.Start(t, harness(), contract.ShellSpec(`echo ready; read line`))
	p.WaitOutput("ready")

	pgid, err := unix.Getpgid(p.Pid())
	require.NoError(t, err)
	require.Equal(t, p.Pid(), pgid)
	require.NotEqual(t, unix.Getpgrp(), pgid, "the child is not in the daemon's group")

	require.NoError(t, p.CloseInput())
	require.Equal(t, terminal.ExitedWith(1), p.WaitExit(), "read at end of input fails")
}

func TestPipeStdoutAndStderrShareOneStream(t *testing.T) {
	p := contract.Start(t, harness(), contract.ShellSpec(`echo out; echo err >&2; echo out again`))

	require.Equal(t, "out\nerr\nout again\n", p.WaitEOF())
	require.Equal(t, terminal.ExitedWith(0), p.WaitExit())
}

func TestPipeBackgroundJobHoldingOutputDelaysEOF(t *testing.T) {
	// The job reads the shell's stdin through fd 3 (an async list's own stdin
	// is /dev/null), so it lives exactly until the test writes a line.
	p := contract.Start(t, harness(), contract.ShellSpec(`exec 3<&0; (read x <&3; echo "late $x") & echo early`))
	p.WaitOutput("early\n")

	require.Equal(t, terminal.ExitedWith(0), p.WaitExit(), "the shell exits at once")
	require.Equal(t, "early\n", p.Output(), "the job still holds the pipe, so no EOF yet")

	_, err := p.Write([]byte("now\n"))
	require.NoError(t, err)
	require.NoError(t, p.CloseInput())

	require.Equal(t, "early\nlate now\n", p.WaitEOF())
}

func TestPipeSIGKILLEndsTheWholeGroupIncludingGrandchildren(t *testing.T) {
	p := contract.Start(t, harness(), contract.ShellSpec(`sleep 1000 & echo "grandchild $!"; wait`))
	p.WaitOutput("\n")
	grandchild, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(p.Output(), "grandchild ")))
	require.NoError(t, err)
	pgid, err := unix.Getpgid(grandchild)
	require.NoError(t, err)
	require.Equal(t, p.Pid(), pgid, "the grandchild is in the child's group")

	require.NoError(t, p.Signal(syscall.SIGKILL))

	require.Equal(t, terminal.KilledBy("SIGKILL"), p.WaitExit())
	p.WaitEOF()
	contract.RequireProcessGone(t, grandchild, contract.DefaultTimeout)
}

func TestPipeWriteAfterCloseInputFails(t *testing.T) {
	p := contract.Start(t, harness(), ports.SpawnSpec{Program: "cat", Env: contract.ShellEnv()})

	require.NoError(t, p.CloseInput())
	require.NoError(t, p.CloseInput(), "CloseInput is idempotent")
	_, err := p.Write([]byte("too late\n"))
	require.Error(t, err)

	p.WaitEOF()
	require.Equal(t, terminal.ExitedWith(0), p.WaitExit())
}

func TestPipeResizeIsRecordedOnly(t *testing.T) {
	p := contract.Start(t, harness(), contract.ShellSpec(`read line; echo "lines=$LINES"`))

	require.NoError(t, p.Resize(132, 43))
	_, err := p.Write([]byte("\n"))
	require.NoError(t, err)

	require.Equal(t, "lines=\n", p.WaitEOF())
	require.Equal(t, terminal.ExitedWith(0), p.WaitExit())
}

func TestPipeRefusesAPTYSpec(t *testing.T) {
	spec := contract.ShellSpec(`echo must not run`)
	spec.PTY = true

	p, err := pipe.New().Spawn(context.Background(), spec)

	require.ErrorContains(t, err, "pty")
	require.Nil(t, p)
}

// A pipe nobody reads any more refuses input (EPIPE), in the core's terms.
func TestWriteToAnEndedChildIsProcessGone(t *testing.T) {
	p := contract.Start(t, harness(), contract.ShellSpec(`exit 0`))
	p.WaitEOF()
	p.WaitExit()

	_, err := p.Write([]byte("too late\n"))

	require.ErrorIs(t, err, ports.ErrProcessGone)
	require.ErrorIs(t, err, syscall.EPIPE, "the pipe's own error is kept")
}
