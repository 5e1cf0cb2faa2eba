package proc

import (
	"io"
	"os"
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
		buf, n, err := ReadLent(pollable, lend, giveBack, nil)
		got <- result{buf, n, err}
	}()
	_, err = w.Write([]byte("hello"))
	require.NoError(t, err)
	res := <-got
	require.NoError(t, res.err)
	require.Equal(t, "hello", string(res.buf[:res.n]))
	require.Equal(t, lent.Load()-1, returned.Load(), "every buffer lent while waiting came back; one is out")

	require.NoError(t, w.Close())
	_, _, err = ReadLent(pollable, lend, giveBack, nil)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, lent.Load()-1, returned.Load(), "the end of output returns its buffer")
}

// TestReadLentReadsOnWhileMoreIsThere: a file that hands out a little per
// read (a pty gives at most 4 KiB; a packet socket one packet) is read on
// into the same buffer while the kernel has more, so a burst reaches the
// viewers as one batch and not as one per read; and a buffer is never
// overfilled.
func TestReadLentReadsOnWhileMoreIsThere(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET, 0)
	require.NoError(t, err)
	require.NoError(t, unix.SetNonblock(fds[0], true))
	reader := os.NewFile(uintptr(fds[0]), "reader")
	writer := os.NewFile(uintptr(fds[1]), "writer")
	defer reader.Close()
	defer writer.Close()
	for _, p := range []string{"one ", "two ", "three ", "four"} {
		_, err := writer.Write([]byte(p))
		require.NoError(t, err)
	}

	lend := func() []byte { return make([]byte, 14) }
	buf, n, err := ReadLent(reader, lend, func([]byte) {}, nil)
	require.NoError(t, err)
	require.Equal(t, "one two three ", string(buf[:n]), "three packets fill the buffer in one call")

	buf, n, err = ReadLent(reader, lend, func([]byte) {}, nil)
	require.NoError(t, err)
	require.Equal(t, "four", string(buf[:n]), "the rest comes next, and the call returns once nothing more is there")
}
