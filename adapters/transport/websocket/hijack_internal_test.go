package websocket

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hijackable is a ResponseWriter whose Hijack hands over sock with a
// net/http-sized reader that has already read ahead.
type hijackable struct {
	http.ResponseWriter
	sock  net.Conn
	ahead []byte
}

func (h *hijackable) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	br := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(h.ahead), h.sock), 4<<10)
	if len(h.ahead) > 0 {
		if _, err := br.Peek(len(h.ahead)); err != nil {
			return nil, nil, err
		}
	}
	return h.sock, bufio.NewReadWriter(br, bufio.NewWriterSize(h.sock, 4<<10)), nil
}

// TestHijackHandsOverSmallBuffersReadAheadBytesFirst: the buffers are the
// small ones; what net/http had read ahead is read first, then the socket;
// and writes reach the socket net/http hijacked (a gatherConn, on the
// daemon's listener), each buffered message in one write.
func TestHijackHandsOverSmallBuffersReadAheadBytesFirst(t *testing.T) {
	for _, ahead := range []int{0, 1, readBufferSize - 1, readBufferSize, 3 * readBufferSize} {
		client, server := net.Pipe()
		t.Cleanup(func() { _ = client.Close(); _ = server.Close() })
		// A lost byte fails the read at the deadline instead of hanging.
		require.NoError(t, client.SetDeadline(time.Now().Add(10*time.Second)))
		require.NoError(t, server.SetDeadline(time.Now().Add(10*time.Second)))
		sock := &countingConn{Conn: server}
		early := bytes.Repeat([]byte("e"), ahead)
		w := withSmallBuffers(&hijackable{ResponseWriter: httptest.NewRecorder(), sock: sock, ahead: early})
		hj, ok := w.(http.Hijacker)
		require.True(t, ok)

		nc, brw, err := hj.Hijack()
		require.NoError(t, err)
		require.Equal(t, readBufferSize, brw.Reader.Size())
		require.Equal(t, writeBufferSize, brw.Writer.Size())
		if ahead == 0 {
			require.Same(t, sock, nc, "nothing read ahead: the socket itself")
		}

		go func() { _, _ = client.Write([]byte("socket")) }()
		want := append(append([]byte(nil), early...), "socket"...)
		got := make([]byte, len(want))
		_, err = io.ReadFull(brw, got)
		require.NoError(t, err)
		require.Equal(t, want, got, "%d bytes read ahead", ahead)

		// The library re-sources its reader on the returned conn after
		// taking what the reader holds; that too reads ahead bytes first.
		if ahead > 0 {
			go func() { _, _ = client.Write([]byte("again")) }()
			nc2, _, err := withSmallBuffers(&hijackable{ResponseWriter: httptest.NewRecorder(), sock: sock, ahead: early}).(http.Hijacker).Hijack()
			require.NoError(t, err)
			got := make([]byte, ahead+len("again"))
			_, err = io.ReadFull(nc2, got)
			require.NoError(t, err)
			require.Equal(t, append(append([]byte(nil), early...), "again"...), got)
		}

		_, err = brw.Write(bytes.Repeat([]byte("w"), writeBufferSize))
		require.NoError(t, err)
		require.NoError(t, brw.Flush())
		sock.mu.Lock()
		require.Len(t, sock.writes, 1, "a buffer's worth is one write to the hijacked socket")
		require.Len(t, sock.writes[0], writeBufferSize)
		sock.writes = nil
		sock.mu.Unlock()
	}
}
