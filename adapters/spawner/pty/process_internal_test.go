package pty

import (
	"context"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/ports"
)

func TestPTYSignalWithoutAPidIsRefused(t *testing.T) {
	// A process that never started must not turn into kill(0, sig), which
	// would hit the daemon's own process group.
	p := &process{}

	require.ErrorIs(t, p.Signal(syscall.SIGKILL), ports.ErrNoProcess)
}

func TestPTYMasterStaysNonBlocking(t *testing.T) {
	// Non-blocking is what lets Close interrupt a pending Read; creack/pty's
	// helpers (via Fd) would silently switch it back to blocking.
	proc, err := New().Spawn(context.Background(), ports.SpawnSpec{Program: "cat", PTY: true})
	require.NoError(t, err)
	p := proc.(*process)
	t.Cleanup(func() {
		_ = p.Kill()
		p.Wait()
		_ = p.Close()
	})

	_, err = p.Write([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, p.Resize(100, 40))
	require.NoError(t, p.CloseInput())

	raw, err := p.master.SyscallConn()
	require.NoError(t, err)
	var flags int
	var flagsErr error
	require.NoError(t, raw.Control(func(fd uintptr) { flags, flagsErr = unix.FcntlInt(fd, unix.F_GETFL, 0) }))
	require.NoError(t, flagsErr)
	require.NotZero(t, flags&unix.O_NONBLOCK, "the master must stay non-blocking")
}
