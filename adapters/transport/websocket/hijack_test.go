package websocket_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ws "github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/transport/websocket"
	"github.com/shellgate/shellgate/ports"
)

// startGathering serves a Server the way the daemon does: on a Listener,
// with ConnContext, so the connections it accepts can gather writes.
func startGathering(t *testing.T, opts websocket.Options) *fixture {
	t.Helper()
	srv, err := websocket.New(opts)
	require.NoError(t, err)
	hs := httptest.NewUnstartedServer(srv)
	hs.Listener = websocket.Listener(hs.Listener)
	hs.Config.ConnContext = websocket.ConnContext
	hs.Start()
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		hs.Close()
	})
	return &fixture{srv: srv, hs: hs, url: hs.URL, host: hs.Listener.Addr().String()}
}

// maskedFrame is one client frame (FIN set, masked, as RFC 6455 asks of a
// client) carrying payload.
func maskedFrame(opcode byte, payload []byte) []byte {
	b := []byte{0x80 | opcode}
	switch n := len(payload); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n <= 0xffff:
		b = append(b, 0x80|126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	key := [4]byte{0x37, 0xfa, 0x21, 0x3d}
	b = append(b, key[:]...)
	for i, c := range payload {
		b = append(b, c^key[i%4])
	}
	return b
}

// readServerFrame reads one unmasked, unfragmented server frame.
func readServerFrame(t *testing.T, r io.Reader) (opcode byte, payload []byte) {
	t.Helper()
	var h [2]byte
	_, err := io.ReadFull(r, h[:])
	require.NoError(t, err)
	require.Equal(t, byte(0x80), h[0]&0x80, "one frame per message")
	require.Zero(t, h[1]&0x80, "server frames are not masked")
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var l [2]byte
		_, err = io.ReadFull(r, l[:])
		n = uint64(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		_, err = io.ReadFull(r, l[:])
		n = binary.BigEndian.Uint64(l[:])
	}
	require.NoError(t, err)
	payload = make([]byte, n)
	_, err = io.ReadFull(r, payload)
	require.NoError(t, err)
	return h[0] & 0x0f, payload
}

// upgradeRequest is a bare WebSocket upgrade for host.
func upgradeRequest(host string) string {
	return "GET / HTTP/1.1\r\n" +
		"Host: " + host + "\r\n" +
		"Upgrade: websocket\r\n" +
		"Connection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" +
		"Sec-WebSocket-Version: 13\r\n\r\n"
}

// bothListeners starts a server on a plain listener and on the daemon's
// gathering one: the upgrade's buffers must work under both.
var bothListeners = map[string]func(*testing.T, websocket.Options) *fixture{
	"plain listener":     start,
	"gathering listener": startGathering,
}

// TestFramesSentRightBehindTheUpgradeArrive: a client that sends its first
// frames in the same write as the upgrade request (so net/http has read
// them ahead with the request) gets every one of them read, in order; more
// of them than the connection's read buffer holds, and then more that come
// later on the socket.
func TestFramesSentRightBehindTheUpgradeArrive(t *testing.T) {
	for name, startServer := range bothListeners {
		t.Run(name, func(t *testing.T) {
			ctx := waitCtx(t)
			f := startServer(t, websocket.Options{})
			sock, err := net.Dial("tcp", f.host)
			require.NoError(t, err)
			t.Cleanup(func() { _ = sock.Close() })
			require.NoError(t, sock.SetDeadline(time.Now().Add(10*time.Second)))

			var early []string
			pipelined := []byte(upgradeRequest(f.host))
			for i := range 6 { // about 2 KiB: well past the read buffer, within net/http's
				m := fmt.Sprintf(`{"jsonrpc":"2.0","method":"early","params":%d,"pad":%q}`, i, strings.Repeat("x", 300))
				early = append(early, m)
				pipelined = append(pipelined, maskedFrame(0x1, []byte(m))...)
			}
			_, err = sock.Write(pipelined) // one write: the kernel delivers it together
			require.NoError(t, err)

			br := bufio.NewReader(sock)
			resp, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)

			server, err := f.srv.Accept(ctx)
			require.NoError(t, err)
			t.Cleanup(func() {
				_ = sock.Close()
				_ = server.Close(ports.CloseNormal, "test over")
			})
			for _, want := range early {
				got, err := server.Read(ctx)
				require.NoError(t, err)
				require.Equal(t, want, string(got))
			}

			later := `{"jsonrpc":"2.0","method":"later"}`
			_, err = sock.Write(maskedFrame(0x1, []byte(later)))
			require.NoError(t, err)
			got, err := server.Read(ctx)
			require.NoError(t, err)
			require.Equal(t, later, string(got))

			require.NoError(t, server.Write(ctx, []byte(`{"jsonrpc":"2.0","id":1,"result":null}`)))
			op, payload := readServerFrame(t, br)
			require.Equal(t, byte(0x1), op)
			require.Equal(t, `{"jsonrpc":"2.0","id":1,"result":null}`, string(payload))
		})
	}
}

// TestSmallAndLargeMessagesRoundTripBothWays: messages smaller and far
// larger than the connection's buffers arrive whole in both directions,
// written one by one and gathered.
func TestSmallAndLargeMessagesRoundTripBothWays(t *testing.T) {
	sizes := []int{1, 100, 400, 509, 510, 511, 512, 513, 1017, 1020, 1024, 1025, 4 << 10, 64 << 10, 1 << 20}
	message := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a' + byte(i%26)
		}
		copy(b, fmt.Sprint(n)) // tells sizes apart
		return b
	}
	for name, startServer := range bothListeners {
		t.Run(name, func(t *testing.T) {
			ctx := waitCtx(t)
			f := startServer(t, websocket.Options{})
			client, server := f.connect(t, nil)
			client.SetReadLimit(2 << 20)

			for _, n := range sizes {
				require.NoError(t, client.Write(ctx, ws.MessageText, message(n)))
				got, err := server.Read(ctx)
				require.NoError(t, err)
				require.Equal(t, message(n), got, "client → server, %d bytes", n)

				// The server writes while the client reads, as with a real
				// peer: a megabyte is more than the kernel keeps for a peer
				// that is not reading.
				var wrote sync.WaitGroup
				var writeErr error
				wrote.Go(func() { writeErr = server.Write(ctx, message(n)) })
				_, got, err = client.Read(ctx)
				wrote.Wait()
				require.NoError(t, writeErr)
				require.NoError(t, err)
				require.Equal(t, message(n), got, "server → client, %d bytes", n)
			}

			// The client reads while the server flushes, as above.
			g := server.(ports.Gatherer)
			require.Equal(t, name == "gathering listener", g.Gather())
			for _, n := range sizes {
				require.NoError(t, server.Write(ctx, message(n)))
			}
			var read sync.WaitGroup
			var got [][]byte
			var readErr error
			read.Go(func() {
				for range sizes {
					_, b, err := client.Read(ctx)
					if err != nil {
						readErr = err
						return
					}
					got = append(got, b)
				}
			})
			require.NoError(t, g.Flush(ctx))
			read.Wait()
			require.NoError(t, readErr)
			require.Len(t, got, len(sizes))
			for i, n := range sizes {
				require.Equal(t, message(n), got[i], "gathered, %d bytes", n)
			}
		})
	}
}

// TestResponseWriterWithoutHijackRefusesUpgradeWith501: behind middleware
// that hides Hijack (as HTTP/2 has none), the upgrade is refused the way
// the library refuses it, not answered 101 on a socket nobody can take.
func TestResponseWriterWithoutHijackRefusesUpgradeWith501(t *testing.T) {
	srv, err := websocket.New(websocket.Options{})
	require.NoError(t, err)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeHTTP(struct{ http.ResponseWriter }{w}, r)
	}))
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		hs.Close()
	})
	code, _, _ := refusal(t, hs.URL, nil)
	require.Equal(t, http.StatusNotImplemented, code)
}

// unwrapping is middleware that hides Hijack but offers Unwrap, as
// http.ResponseController expects of wrappers.
type unwrapping struct{ w http.ResponseWriter }

func (u unwrapping) Header() http.Header         { return u.w.Header() }
func (u unwrapping) Write(p []byte) (int, error) { return u.w.Write(p) }
func (u unwrapping) WriteHeader(code int)        { u.w.WriteHeader(code) }
func (u unwrapping) Unwrap() http.ResponseWriter { return u.w }

// TestUpgradeWorksBehindMiddlewareThatUnwraps: a wrapped ResponseWriter
// is hijacked through its Unwrap, and the connection works both ways.
func TestUpgradeWorksBehindMiddlewareThatUnwraps(t *testing.T) {
	ctx := waitCtx(t)
	srv, err := websocket.New(websocket.Options{})
	require.NoError(t, err)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeHTTP(unwrapping{w}, r)
	}))
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		hs.Close()
	})
	f := &fixture{srv: srv, hs: hs, url: hs.URL}
	client, server := f.connect(t, nil)

	require.NoError(t, client.Write(ctx, ws.MessageText, []byte("up")))
	got, err := server.Read(ctx)
	require.NoError(t, err)
	require.Equal(t, "up", string(got))
	require.NoError(t, server.Write(ctx, bytes.Repeat([]byte("d"), 3000)))
	_, got, err = client.Read(ctx)
	require.NoError(t, err)
	require.Len(t, got, 3000)
}

// countingListener counts the writes to the sockets it accepts.
type countingListener struct {
	net.Listener
	writes atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countedConn{Conn: c, writes: &l.writes}, nil
}

type countedConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c *countedConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestAMessageUpTo16KiBLeavesInOneSocketWrite: on the daemon's listener a
// message's frame header and payload reach the socket together, however
// small the library's write buffer, so the peer wakes once for it; a
// larger one is written from the message itself, in two.
func TestAMessageUpTo16KiBLeavesInOneSocketWrite(t *testing.T) {
	srv, err := websocket.New(websocket.Options{})
	require.NoError(t, err)
	hs := httptest.NewUnstartedServer(srv)
	counted := &countingListener{Listener: hs.Listener}
	hs.Listener = websocket.Listener(counted)
	hs.Config.ConnContext = websocket.ConnContext
	hs.Start()
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		hs.Close()
	})
	f := &fixture{srv: srv, hs: hs, url: hs.URL, host: hs.Listener.Addr().String()}
	ctx := waitCtx(t)
	client, server := f.connect(t, nil)
	client.SetReadLimit(1 << 20)

	for _, tc := range []struct{ size, writes int }{{10, 1}, {200, 1}, {1000, 1}, {4 << 10, 1}, {16 << 10, 1}, {64 << 10, 2}} {
		msg := bytes.Repeat([]byte("m"), tc.size)
		before := counted.writes.Load()
		var wrote sync.WaitGroup
		var writeErr error
		wrote.Go(func() { writeErr = server.Write(ctx, msg) })
		_, got, err := client.Read(ctx)
		wrote.Wait()
		require.NoError(t, writeErr)
		require.NoError(t, err)
		require.Equal(t, msg, got)
		require.Equal(t, int64(tc.writes), counted.writes.Load()-before, "socket writes for a %d-byte message", tc.size)
	}
}

// watchedCtx counts the calls that tie something to it: Done, which the
// library's waits and every derived timeout's propagation call.
type watchedCtx struct {
	context.Context
	dones atomic.Int64
}

func (c *watchedCtx) Done() <-chan struct{} {
	c.dones.Add(1)
	return c.Context.Done()
}

// TestAGatheredWriteTiesNothingToTheCallersContext: a write that only
// copies into what is gathered, alone or in a batch, derives no timeout
// from the caller's context and leaves nothing waiting on it (the library
// keeps the last write's context until the next write).
func TestAGatheredWriteTiesNothingToTheCallersContext(t *testing.T) {
	f := startGathering(t, websocket.Options{})
	ctx := waitCtx(t)
	client, server := f.connect(t, nil)
	client.SetReadLimit(1 << 20)
	watched := &watchedCtx{Context: ctx}

	var read sync.WaitGroup
	var readErr error
	read.Go(func() {
		for range 3 {
			if _, _, err := client.Read(ctx); err != nil {
				readErr = err
				return
			}
		}
	})
	require.NoError(t, server.Write(watched, []byte(`{"alone":true}`)))
	g := server.(ports.Gatherer)
	require.True(t, g.Gather())
	require.NoError(t, server.Write(watched, []byte(`{"echo":true}`)))
	require.NoError(t, server.Write(watched, bytes.Repeat([]byte("o"), 64<<10)))
	require.NoError(t, g.Flush(ctx))
	read.Wait()
	require.NoError(t, readErr)
	require.Zero(t, watched.dones.Load(), "something was tied to the caller's context")
}
