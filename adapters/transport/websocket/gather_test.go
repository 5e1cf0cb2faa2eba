package websocket

import (
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
