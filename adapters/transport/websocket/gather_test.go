package websocket

import (
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// countingConn records each write that reaches it.
type countingConn struct {
	net.Conn
	mu     sync.Mutex
	writes [][]byte
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes = append(c.writes, append([]byte(nil), p...))
	return len(p), nil
}

func (c *countingConn) SetWriteDeadline(time.Time) error { return nil }

// TestGatheredWritesLeaveInOneWriteInOrder: what is written between gather
// and flush reaches the socket as one write, in order; outside a gather,
// each write goes straight through.
func TestGatheredWritesLeaveInOneWriteInOrder(t *testing.T) {
	sock := &countingConn{}
	gc := &gatherConn{Conn: sock}
	_, err := gc.Write([]byte("alone"))
	require.NoError(t, err)
	require.Len(t, sock.writes, 1, "no gather: straight through")

	gc.gather()
	for _, p := range []string{"echo|", "ping|", "output"} {
		_, err := gc.Write([]byte(p))
		require.NoError(t, err)
	}
	require.Len(t, sock.writes, 1, "nothing leaves while gathering")
	require.NoError(t, gc.flush(time.Now().Add(time.Second)))
	require.Len(t, sock.writes, 2)
	require.Equal(t, "echo|ping|output", string(sock.writes[1]))

	require.NoError(t, gc.flush(time.Time{}), "a flush with nothing gathered writes nothing")
	require.Len(t, sock.writes, 2)
}

// TestAcceptedConnectionsKeepTheKernelsSendBufferSmall: a peer that stops
// reading fills what the kernel keeps for it within a few hundred KiB, so
// the daemon's own count of what a client holds (flow control, the total
// cap) sees it stop. Left to autotuning, loopback takes about 4 MB first,
// and such a viewer looks like a reader all that while.
func TestAcceptedConnectionsKeepTheKernelsSendBufferSmall(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := Listener(raw)
	defer ln.Close()
	peer, err := net.Dial("tcp", raw.Addr().String()) // never reads
	require.NoError(t, err)
	defer peer.Close()
	c, err := ln.Accept()
	require.NoError(t, err)
	defer c.Close()
	sock := c.(*gatherConn).Conn

	// Write until the kernel takes no more: a write that has waited a
	// whole deadline found the buffers full.
	chunk := make([]byte, 64<<10)
	taken := 0
	for taken < 16<<20 {
		require.NoError(t, sock.SetWriteDeadline(time.Now().Add(time.Second)))
		n, err := sock.Write(chunk)
		taken += n
		if err != nil {
			require.ErrorIs(t, err, os.ErrDeadlineExceeded)
			break
		}
	}
	t.Logf("the kernel took %d KiB for a peer that does not read", taken>>10)
	require.LessOrEqual(t, taken, 1<<20, "what the kernel holds for a client that stopped stays small")
}

// acceptedPair is a connection the Listener accepted and its peer.
func acceptedPair(t *testing.T) (*gatherConn, net.Conn) {
	t.Helper()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := Listener(raw)
	t.Cleanup(func() { _ = ln.Close() })
	peer, err := net.Dial("tcp", raw.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = peer.Close() })
	c, err := ln.Accept()
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	gc := c.(*gatherConn)
	require.NotNil(t, gc.rc, "a TCP socket is read and written through its descriptor")
	return gc, peer
}

// TestAnAcceptedSocketReadsAndWritesAsNetDoes: the descriptor's own reads
// and writes keep what callers of a net.Conn rely on: all of a large write
// leaves, through a full socket; the peer's close reads as io.EOF.
func TestAnAcceptedSocketReadsAndWritesAsNetDoes(t *testing.T) {
	gc, peer := acceptedPair(t)
	big := make([]byte, 4<<20) // far more than the socket holds: the write waits in the poller
	for i := range big {
		big[i] = byte(i)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(peer, int64(len(big))))
		got <- b
	}()
	n, err := gc.Write(big)
	require.NoError(t, err)
	require.Equal(t, len(big), n)
	require.Equal(t, big, <-got)

	_, err = peer.Write([]byte("key"))
	require.NoError(t, err)
	buf := make([]byte, 16)
	n, err = io.ReadAtLeast(gc, buf, 3)
	require.NoError(t, err)
	require.Equal(t, "key", string(buf[:n]))

	n, err = gc.Read(nil)
	require.NoError(t, err, "an empty read is no error and no end")
	require.Zero(t, n)

	require.NoError(t, peer.Close())
	_, err = gc.Read(buf)
	require.ErrorIs(t, err, io.EOF)
}

// TestAnAcceptedSocketsErrorsKeepNetsShape: a passed deadline and a closed
// socket stay recognisable, as *net.OpError for the operation.
func TestAnAcceptedSocketsErrorsKeepNetsShape(t *testing.T) {
	gc, _ := acceptedPair(t)
	require.NoError(t, gc.SetReadDeadline(time.Now().Add(-time.Second)))
	_, err := gc.Read(make([]byte, 16))
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	require.True(t, ne.Timeout())
	var oe *net.OpError
	require.ErrorAs(t, err, &oe)
	require.Equal(t, "read", oe.Op)

	require.NoError(t, gc.Close())
	_, err = gc.Read(make([]byte, 16))
	require.ErrorIs(t, err, net.ErrClosed)
	_, err = gc.Write([]byte("late"))
	require.ErrorIs(t, err, net.ErrClosed)
	require.ErrorAs(t, err, &oe)
	require.Equal(t, "write", oe.Op)
}

// TestAWriteToAResetPeerFailsWithTheSocketsError: the kernel's refusal
// reaches the caller, not a hang or a short count without an error.
func TestAWriteToAResetPeerFailsWithTheSocketsError(t *testing.T) {
	gc, peer := acceptedPair(t)
	require.NoError(t, peer.(*net.TCPConn).SetLinger(0)) // close with a reset
	require.NoError(t, peer.Close())
	var err error
	for i := 0; i < 100 && err == nil; i++ { // the first write may still be taken
		_, err = gc.Write(make([]byte, 64<<10))
		if err == nil {
			_, err = gc.Read(make([]byte, 1))
		}
	}
	require.Error(t, err)
	var se *os.SyscallError
	require.ErrorAs(t, err, &se, "the socket's own errno: %v", err)
}

// TestAKeystrokesReadAndWriteAllocateNothing: a frame in and its echo out
// are on every key's path; neither makes garbage of its own.
func TestAKeystrokesReadAndWriteAllocateNothing(t *testing.T) {
	gc, peer := acceptedPair(t)
	key, buf := []byte("k"), make([]byte, 16)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := peer.Write(key); err != nil {
			panic(err)
		}
		if _, err := io.ReadFull(gc, buf[:1]); err != nil {
			panic(err)
		}
		if _, err := gc.Write(key); err != nil {
			panic(err)
		}
		if _, err := io.ReadFull(peer, buf[:1]); err != nil {
			panic(err)
		}
	})
	require.Zero(t, allocs, "allocations per key: the peer's own calls allocate nothing, so these are the connection's")
}
