package websocket

import (
	"net"
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
