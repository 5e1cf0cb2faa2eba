package proc

import (
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestReadLentBorrowsOnlyWhenThereIsOutput(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	// A non-blocking copy of the read end, so it goes through the poller.
	fd, err := unix.Dup(int(r.Fd()))
	require.NoError(t, err)
	require.NoError(t, unix.SetNonblock(fd, true))
	pollable := os.NewFile(uintptr(fd), "pipe")
	defer pollable.Close()
	lr := NewLentReader(pollable, nil)

	var lent, returned atomic.Int32
	lend := func() []byte { lent.Add(1); return make([]byte, 16) }
	giveBack := func([]byte) { returned.Add(1) }

	type result struct {
		buf []byte
		n   int
		err error
	}
	got := make(chan result, 1)
	go func() {
		buf, n, err := lr.ReadLent(lend, giveBack)
		got <- result{buf, n, err}
	}()
	_, err = w.Write([]byte("hello"))
	require.NoError(t, err)
	res := <-got
	require.NoError(t, res.err)
	require.Equal(t, "hello", string(res.buf[:res.n]))
	require.Equal(t, lent.Load()-1, returned.Load(), "every buffer lent while waiting came back; one is out")

	require.NoError(t, w.Close())
	_, _, err = lr.ReadLent(lend, giveBack)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, lent.Load()-1, returned.Load(), "the end of output returns its buffer")
}

// TestReadLentReadsOnWhileReadsComeBackFull: a file that hands out a
// little per read (a pty gives at most 4 KiB; a packet socket one packet)
// is read on into the same buffer while its reads come back full, so a
// flood reaches the viewers as one batch and not as one per read; a short
// read (a keystroke's echo) ends the call; and a buffer is never overfilled.
func TestReadLentReadsOnWhileReadsComeBackFull(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET, 0)
	require.NoError(t, err)
	require.NoError(t, unix.SetNonblock(fds[0], true))
	reader := os.NewFile(uintptr(fds[0]), "reader")
	writer := os.NewFile(uintptr(fds[1]), "writer")
	defer reader.Close()
	defer writer.Close()
	full := strings.Repeat("x", readOnMin)
	packets := []string{full, full, "short", "after"}
	for _, p := range packets {
		_, err := writer.Write([]byte(p))
		require.NoError(t, err)
	}

	lr := NewLentReader(reader, nil)
	lend := func() []byte { return make([]byte, 3*readOnMin) }
	buf, n, err := lr.ReadLent(lend, func([]byte) {})
	require.NoError(t, err)
	require.Equal(t, full+full+"short", string(buf[:n]), "full reads are read on; the short one ends the call")

	buf, n, err = lr.ReadLent(lend, func([]byte) {})
	require.NoError(t, err)
	require.Equal(t, "after", string(buf[:n]), "the rest comes next")

	lend = func() []byte { return make([]byte, readOnMin+10) }
	for range 2 {
		_, err := writer.Write([]byte(full))
		require.NoError(t, err)
	}
	buf, n, err = lr.ReadLent(lend, func([]byte) {})
	require.NoError(t, err)
	require.Equal(t, readOnMin+10, n, "reading on stops when the buffer is full")
	require.Equal(t, full+full[:10], string(buf[:n]))
}

// streamPair is a connected pair of non-blocking stream sockets, closed
// when the test ends.
func streamPair(t *testing.T) (a, b *os.File) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	a, b = os.NewFile(uintptr(fds[0]), "a"), os.NewFile(uintptr(fds[1]), "b")
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	return a, b
}

// TestReadLentAllocatesNothingOfItsOwn: a read is on every key's path
// (the echo), so it makes no garbage: the buffer comes from lend.
func TestReadLentAllocatesNothingOfItsOwn(t *testing.T) {
	out, in := streamPair(t)
	lr := NewLentReader(out, nil)
	buf, echo := make([]byte, 16), []byte("k")
	lend := func() []byte { return buf }
	giveBack := func([]byte) {}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := in.Write(echo); err != nil {
			panic(err)
		}
		if _, n, err := lr.ReadLent(lend, giveBack); err != nil || n != 1 {
			panic(err)
		}
	})
	require.Zero(t, allocs)
}

// TestTryWriteAllocatesNothingOfItsOwn: a keystroke's input is a TryWrite.
func TestTryWriteAllocatesNothingOfItsOwn(t *testing.T) {
	in, child := streamPair(t)
	tw := NewTryWriter(in)
	key, buf := []byte("k"), make([]byte, 16)
	allocs := testing.AllocsPerRun(100, func() {
		if n, err := tw.TryWrite(key); err != nil || n != 1 {
			panic(err)
		}
		if _, err := child.Read(buf); err != nil {
			panic(err)
		}
	})
	require.Zero(t, allocs)
}
