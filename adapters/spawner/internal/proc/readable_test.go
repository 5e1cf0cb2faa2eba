package proc

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/ports"
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

// pollablePipe is a pipe whose read end is non-blocking, in Go's poller.
func pollablePipe(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	fd, err := unix.Dup(int(r.Fd()))
	require.NoError(t, err)
	require.NoError(t, r.Close())
	require.NoError(t, unix.SetNonblock(fd, true))
	pr := os.NewFile(uintptr(fd), "pipe")
	t.Cleanup(func() { _ = pr.Close(); _ = w.Close() })
	return pr, w
}

func waitReady(t *testing.T, ready <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ready:
	case <-time.After(20 * time.Second):
		t.Fatalf("ready was not called %s", what)
	}
}

// A quiet reader gives up holding no buffer, is told when output comes,
// and reads it; again and again, from one watch goroutine that ends once
// nothing is watched (the leak check in TestMain).
func TestReadLentQuietGivesUpAndAwaitOutputSaysWhenOutputCame(t *testing.T) {
	pr, w := pollablePipe(t)
	lr := NewLentReader(pr, nil)
	var lent, returned atomic.Int32
	lend := func() []byte { lent.Add(1); return make([]byte, 16) }
	giveBack := func([]byte) { returned.Add(1) }

	for i := range 3 {
		buf, n, err := lr.ReadLentQuiet(time.Millisecond, lend, giveBack)
		require.ErrorIs(t, err, ports.ErrQuiet)
		require.Nil(t, buf)
		require.Zero(t, n)
		require.Equal(t, lent.Load(), returned.Load(), "a quiet reader holds a buffer")

		ready := make(chan struct{})
		lr.AwaitOutput(func() { close(ready) })
		select {
		case <-ready:
			t.Fatal("ready came before any output")
		default:
		}
		word := fmt.Sprintf("out%d", i)
		_, err = w.Write([]byte(word))
		require.NoError(t, err)
		waitReady(t, ready, "after output")
		buf, n, err = lr.ReadLentQuiet(time.Minute, lend, giveBack)
		require.NoError(t, err)
		require.Equal(t, word, string(buf[:n]))
		giveBack(buf) // as the pump does, once the output is handed on
	}

	// The end of output wakes a watch too, and reads as the end.
	_, _, err := lr.ReadLentQuiet(time.Millisecond, lend, giveBack)
	require.ErrorIs(t, err, ports.ErrQuiet)
	ready := make(chan struct{})
	lr.AwaitOutput(func() { close(ready) })
	require.NoError(t, w.Close())
	waitReady(t, ready, "at the end of output")
	_, _, err = lr.ReadLentQuiet(time.Minute, lend, giveBack)
	require.ErrorIs(t, err, io.EOF)
}

// Closing ends a watch under way (its ready comes, so the reader reads and
// finds the file closed) and refuses new ones: a file closed while watched
// would otherwise leave its reader waiting for ever.
func TestClosingEndsAWatchAndRefusesNewOnes(t *testing.T) {
	pr, _ := pollablePipe(t)
	lr := NewLentReader(pr, nil)
	ready := make(chan struct{})
	lr.AwaitOutput(func() { close(ready) })
	// Another reader's output, so the watch is surely waiting when the
	// last watched reader closes: it must end then (the leak check).
	otherR, otherW := pollablePipe(t)
	other := NewLentReader(otherR, nil)
	otherReady := make(chan struct{})
	other.AwaitOutput(func() { close(otherReady) })
	_, err := otherW.Write([]byte("x"))
	require.NoError(t, err)
	waitReady(t, otherReady, "for the other reader")

	lr.Closing()
	waitReady(t, ready, "by Closing")
	require.NoError(t, pr.Close())

	again := make(chan struct{})
	lr.AwaitOutput(func() { close(again) })
	waitReady(t, again, "at once after Closing")
}

// Many readers share the one watch: each is told about its own output
// only.
func TestEachWatchedReaderIsToldOfItsOwnOutput(t *testing.T) {
	const readers = 20
	type side struct {
		lr    *LentReader
		w     *os.File
		ready chan struct{}
	}
	var sides []side
	for range readers {
		pr, w := pollablePipe(t)
		s := side{NewLentReader(pr, nil), w, make(chan struct{})}
		s.lr.AwaitOutput(func() { close(s.ready) })
		sides = append(sides, s)
	}
	for i, s := range sides {
		_, err := s.w.Write([]byte("x"))
		require.NoError(t, err)
		waitReady(t, s.ready, fmt.Sprintf("for reader %d", i))
		for _, later := range sides[i+1:] {
			select {
			case <-later.ready:
				t.Fatalf("a reader was woken by reader %d's output", i)
			default:
			}
		}
	}
}
