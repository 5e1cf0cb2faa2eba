package nbio_test

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/adapters/internal/nbio"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pipe is a pipe whose ends are in non-blocking mode, or not.
func pipe(t *testing.T, nonBlocking bool) (r, w *os.File) {
	t.Helper()
	flags := unix.O_CLOEXEC
	if nonBlocking {
		flags |= unix.O_NONBLOCK
	}
	var fds [2]int
	require.NoError(t, unix.Pipe2(fds[:], flags))
	r, w = os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	t.Cleanup(func() { _ = r.Close(); _ = w.Close() })
	return r, w
}

func modeOf(t *testing.T, f *os.File) (nbio.Mode, syscall.RawConn) {
	t.Helper()
	rc, m, err := nbio.Of(f)
	require.NoError(t, err)
	return m, rc
}

func TestAClosedFileHasNoDescriptorToLookAt(t *testing.T) {
	r, _ := pipe(t, true)
	require.NoError(t, r.Close())
	rc, m, err := nbio.Of(r)
	require.ErrorContains(t, err, "closed", "the poller's own error, so the caller can say why")
	require.Nil(t, rc)
	require.False(t, m.Raw(), "no descriptor, no raw calls")
}

func TestANonBlockingDescriptorGetsRawCallsWhereTheBuildAllows(t *testing.T) {
	r, _ := pipe(t, true)
	m, _ := modeOf(t, r)
	require.Equal(t, nbio.RawCalls, m.Raw(), "raw calls on linux without the race detector, guarded ones elsewhere")
}

func TestABlockingDescriptorKeepsTheGuardedCalls(t *testing.T) {
	r, _ := pipe(t, false)
	m, _ := modeOf(t, r)
	require.False(t, m.Raw(), "a raw call that blocks would hold its processor")
}

// call runs one read or write of f's descriptor through m.
func call(t *testing.T, rc syscall.RawConn, do func(fd uintptr) (int, error)) (int, error) {
	t.Helper()
	var (
		n   int
		err error
	)
	require.NoError(t, rc.Control(func(fd uintptr) { n, err = do(fd) }))
	return n, err
}

func TestReadsAndWritesOfANonBlockingPipe(t *testing.T) {
	r, w := pipe(t, true)
	rm, rrc := modeOf(t, r)
	wm, wrc := modeOf(t, w)
	buf := make([]byte, 16)

	_, err := call(t, rrc, func(fd uintptr) (int, error) { return rm.Read(fd, buf) })
	require.ErrorIs(t, err, unix.EAGAIN, "an empty pipe says so at once")

	n, err := call(t, wrc, func(fd uintptr) (int, error) { return wm.Write(fd, []byte("key")) })
	require.NoError(t, err)
	require.Equal(t, 3, n)
	n, err = call(t, rrc, func(fd uintptr) (int, error) { return rm.Read(fd, buf) })
	require.NoError(t, err)
	require.Equal(t, "key", string(buf[:n]))

	require.NoError(t, w.Close())
	n, err = call(t, rrc, func(fd uintptr) (int, error) { return rm.Read(fd, buf) })
	require.NoError(t, err)
	require.Zero(t, n, "a closed writer reads as the end")
}

func TestAWriteToAFullPipeReturnsEAGAINInsteadOfWaiting(t *testing.T) {
	_, w := pipe(t, true)
	wm, wrc := modeOf(t, w)
	chunk := make([]byte, 64<<10)
	total := 0
	for range 1024 { // a pipe holds 64 KiB by default, at most 1 MiB unprivileged
		n, err := call(t, wrc, func(fd uintptr) (int, error) { return wm.Write(fd, chunk) })
		total += n
		if err != nil {
			require.ErrorIs(t, err, unix.EAGAIN)
			require.Positive(t, total)
			return
		}
	}
	t.Fatalf("the pipe took %d bytes and never said it was full", total)
}

func TestWriteFromWritesOnUntilTheDescriptorIsFullThenGoesOnFromThere(t *testing.T) {
	r, w := pipe(t, true)
	wm, wrc := modeOf(t, w)
	p := make([]byte, 4<<20) // more than a pipe holds
	var written int
	var full bool
	var err error
	require.NoError(t, wrc.Write(func(fd uintptr) bool {
		written, full, err = wm.WriteFrom(fd, p, 0)
		return true
	}))
	require.NoError(t, err)
	require.True(t, full, "a full pipe says so instead of failing")
	require.Positive(t, written)
	require.Less(t, written, len(p))

	// Drain a little; the next write goes on from where the last stopped.
	buf := make([]byte, 64<<10)
	_, err = r.Read(buf)
	require.NoError(t, err)
	before := written
	require.NoError(t, wrc.Write(func(fd uintptr) bool {
		written, full, err = wm.WriteFrom(fd, p, before)
		return true
	}))
	require.NoError(t, err)
	require.Greater(t, written, before, "the write went on from before")

	require.NoError(t, r.Close())
	require.NoError(t, wrc.Write(func(fd uintptr) bool {
		_, full, err = wm.WriteFrom(fd, p, written)
		return true
	}))
	require.ErrorIs(t, err, unix.EPIPE, "a failed write is the call's errno")
	require.False(t, full)

	written, full, err = wm.WriteFrom(0, p, len(p))
	require.Equal(t, len(p), written, "nothing left to write writes nothing")
	require.False(t, full)
	require.NoError(t, err)
}

func TestAnEmptyBufferReadsNothingAndIsNoError(t *testing.T) {
	r, w := pipe(t, true)
	rm, rrc := modeOf(t, r)
	_, err := w.Write([]byte("x"))
	require.NoError(t, err)
	n, err := call(t, rrc, func(fd uintptr) (int, error) { return rm.Read(fd, nil) })
	require.NoError(t, err)
	require.Zero(t, n)
}
