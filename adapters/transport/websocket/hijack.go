package websocket

import (
	"bufio"
	"net"
	"net/http"
)

// The buffers a connection keeps for its whole life. net/http hands over
// 4 KiB for reading and 4 KiB for writing with a hijacked socket, and the
// WebSocket library keeps both: 8 KiB held by every idle connection, the
// largest part of what one costs. These are sized by how the library uses
// them:
//
//   - It reads a frame's header byte by byte from the reader, so the first
//     byte fills the buffer with one read of whatever has arrived; the
//     payload is then copied out of the buffer, or read straight into the
//     message when the buffer is empty and the rest is at least as large as
//     the buffer. A keystroke's request (100–400 bytes with its 8-byte
//     masked header) is one read. A 1–4 KiB message (a paste) takes one read
//     for the first 512 bytes and then about one per step of the message's
//     growing buffer (io.ReadAll doubles it): 3–5 reads, where 4 KiB took 1–2.
//   - It writes a frame's header and payload to the writer and flushes.
//     While both fit, that is one write; a larger payload fills the buffer,
//     which goes out in one write, and the rest goes out in a second
//     (straight from the message). A message of up to 16 KiB is gathered
//     (conn.Write, gatherConn), so its pieces leave in one socket write
//     whatever this buffer's size; the buffer only has to hold what the
//     library writes on its own, a ping, a pong or a close frame (up to 127
//     bytes). A larger message is two writes, as it was with 4 KiB.
const (
	readBufferSize  = 512
	writeBufferSize = 128
)

// smallBuffers wraps a ResponseWriter so that the Hijack the library calls
// hands over buffers of the sizes above instead of net/http's.
type smallBuffers struct {
	http.ResponseWriter
}

// withSmallBuffers wraps w unless it cannot be hijacked at all (HTTP/2, a
// recorder): the library then finds no Hijacker and refuses the upgrade with
// 501 before answering 101, as it would without the wrapper. It looks for
// Hijack the way the library and http.ResponseController do.
func withSmallBuffers(w http.ResponseWriter) http.ResponseWriter {
	for rw := w; ; {
		switch t := rw.(type) {
		case http.Hijacker:
			return smallBuffers{w}
		case interface{ Unwrap() http.ResponseWriter }:
			rw = t.Unwrap()
		default:
			return w
		}
	}
}

// Unwrap lets http.ResponseController and the library find the writer's
// other methods.
func (w smallBuffers) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack takes the socket from net/http and returns it with new, smaller
// buffers. The bytes net/http had already read past the request (a client
// may send its first frame right behind the upgrade) are read first.
func (w smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	var rc net.Conn = nc
	if n := brw.Reader.Buffered(); n > 0 {
		// Copied out: net/http's 4 KiB buffer is let go, and the copy only
		// lives until the first reads take it.
		early, _ := brw.Reader.Peek(n)
		rc = &earlyConn{Conn: nc, early: append([]byte(nil), early...)}
	}
	// Writes go to the socket net/http hijacked (the gatherConn, on the
	// daemon's listener), not through earlyConn, which only reads.
	return rc, bufio.NewReadWriter(
		bufio.NewReaderSize(rc, readBufferSize),
		bufio.NewWriterSize(nc, writeBufferSize)), nil
}

// earlyConn is a hijacked socket whose first reads return the bytes
// net/http had read ahead. It is the net.Conn Hijack returns, not only the
// reader's source, because the library re-sources its reader on the
// returned conn (after taking what that reader buffered, which here is
// nothing yet); and more may have been read ahead than the buffer holds.
// Only the connection's one reader reads it.
type earlyConn struct {
	net.Conn
	early []byte
}

func (c *earlyConn) Read(p []byte) (int, error) {
	if len(c.early) == 0 {
		return c.Conn.Read(p)
	}
	n := copy(p, c.early)
	c.early = c.early[n:]
	if len(c.early) == 0 {
		c.early = nil // let the copy go
	}
	return n, nil
}
