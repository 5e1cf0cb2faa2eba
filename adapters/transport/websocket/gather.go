package websocket

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/adapters/internal/nbio"
)

// Listener wraps ln so that each connection it accepts can gather the
// frames of several messages into one socket write (ports.Gatherer): a
// keystroke's echo and the output it caused then reach the peer in one
// segment, one wake-up of the peer instead of two. Serve HTTP (or HTTPS:
// TLS goes on top, and gathers whole records) on the result, with
// ConnContext as the server's ConnContext.
func Listener(ln net.Listener) net.Listener { return gatherListener{ln} }

type gatherListener struct{ net.Listener }

// sendBuffer is what each accepted connection asks the kernel to keep for
// writes not yet taken by the peer (Linux grants twice that: 256 KiB).
// Left to autotuning, loopback grows it to about 4 MB, and a client that
// stopped reading goes on taking output into it all that while: it looks
// like a reader to flow control and to the total cap (max_client_memory),
// which then may shed a real reader first. 256 KiB is still more than a
// terminal's output needs in flight on a LAN (see docs/measured.md).
const sendBuffer = 128 << 10

func (l gatherListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(sendBuffer) // best effort: a refusal leaves the kernel's default
	}
	return newGatherConn(c), nil
}

type gatherKey struct{}

// ConnContext is http.Server's ConnContext for a Listener's connections: it
// lets the upgrade find the connection it may gather writes on.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if gc, ok := c.(*gatherConn); ok {
		return context.WithValue(ctx, gatherKey{}, gc)
	}
	return ctx
}

func gathererOf(ctx context.Context) *gatherConn {
	gc, _ := ctx.Value(gatherKey{}).(*gatherConn)
	return gc
}

// gatherConn holds writes back while gathering and sends them in one
// write at flush. mu is held across every socket write, so a ping frame
// written meanwhile (by another goroutine, through the library) is never
// cut into the gathered bytes: it joins them, in order.
type gatherConn struct {
	net.Conn
	mu        sync.Mutex
	gathering bool
	buf       *[]byte

	// rc is the socket's descriptor, read and written with raw system calls
	// where mode allows (package nbio): a keystroke's frame in and its echo
	// out are on every key's path. nil when Conn has no descriptor; its own
	// calls then.
	rc   syscall.RawConn
	mode nbio.Mode

	// The read and the write under way live here, not in closures made
	// per call, so that neither allocates: readMu keeps the read's (the
	// library reads from one goroutine, but net.Conn allows more), mu the
	// write's. readFd and writeFd are c.readOnce and c.writeOnce, made once.
	readMu   sync.Mutex
	readFd   func(fd uintptr) bool
	rp       []byte
	rn       int
	readErr  error
	writeFd  func(fd uintptr) bool
	wp       []byte
	written  int
	writeErr error
}

func newGatherConn(c net.Conn) *gatherConn {
	gc := &gatherConn{Conn: c}
	if sc, ok := c.(syscall.Conn); ok {
		if rc, mode, err := nbio.Of(sc); err == nil {
			gc.rc, gc.mode = rc, mode
			gc.readFd, gc.writeFd = gc.readOnce, gc.writeOnce
		}
	}
	return gc
}

// Read is Conn's Read, with the socket's read deadline and its errors'
// shape (a *net.OpError), made of raw reads.
func (c *gatherConn) Read(p []byte) (int, error) {
	if c.rc == nil {
		return c.Conn.Read(p)
	}
	if len(p) == 0 {
		return 0, nil
	}
	c.readMu.Lock()
	defer c.readMu.Unlock()
	c.rp = p
	err := c.rc.Read(c.readFd)
	n, readErr := c.rn, c.readErr
	c.rp, c.rn, c.readErr = nil, 0, nil
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case readErr != nil:
		return 0, c.opError("read", os.NewSyscallError("read", readErr))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// readOnce is the poller's read into c.rp: false waits in the poller for
// the socket to have something.
func (c *gatherConn) readOnce(fd uintptr) bool {
	for {
		c.rn, c.readErr = c.mode.Read(fd, c.rp)
		if c.readErr != unix.EINTR {
			return c.readErr != unix.EAGAIN
		}
	}
}

// write is Conn's Write, made of raw writes: all of p unless the deadline
// passes or the socket fails. c.mu is held.
func (c *gatherConn) write(p []byte) (int, error) {
	if c.rc == nil {
		return c.Conn.Write(p)
	}
	c.wp = p
	err := c.rc.Write(c.writeFd)
	written, writeErr := c.written, c.writeErr
	c.wp, c.written, c.writeErr = nil, 0, nil
	switch {
	case err != nil:
		return written, c.opError("write", err)
	case writeErr != nil:
		return written, c.opError("write", os.NewSyscallError("write", writeErr))
	}
	return written, nil
}

// writeOnce is the poller's write of c.wp: false, when the socket is full,
// waits in the poller for room.
func (c *gatherConn) writeOnce(fd uintptr) bool {
	var full bool
	c.written, full, c.writeErr = c.mode.WriteFrom(fd, c.wp, c.written)
	return !full
}

// opError shapes err as net's own calls would: a deadline that passed or
// a closed socket stays recognisable (os.ErrDeadlineExceeded, net.ErrClosed).
func (c *gatherConn) opError(op string, err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) {
		err = oe.Err // the raw call's own wrapping ("raw-read")
	}
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

var gatherPool = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// maxGathered bounds what is gathered: callers gather small batches only,
// and a pooled buffer that grew past this is let go.
const maxGathered = 64 << 10

func (c *gatherConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gathering {
		*c.buf = append(*c.buf, p...)
		return len(p), nil
	}
	return c.write(p)
}

// gather starts holding writes back; false when they already were (the
// flush that ends it is someone else's).
func (c *gatherConn) gather() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gathering {
		return false
	}
	c.gathering = true
	c.buf = gatherPool.Get().(*[]byte)
	return true
}

// holding reports whether writes are being gathered. Only the one writer
// that gathers and flushes asks, so the answer holds until it flushes.
func (c *gatherConn) holding() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gathering
}

// flush writes what was gathered in one write, by deadline (zero: none).
func (c *gatherConn) flush(deadline time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.gathering {
		return nil
	}
	c.gathering = false
	buf := c.buf
	c.buf = nil
	defer func() {
		if cap(*buf) <= maxGathered {
			*buf = (*buf)[:0]
			gatherPool.Put(buf)
		}
	}()
	if len(*buf) == 0 {
		return nil
	}
	if !deadline.IsZero() {
		_ = c.Conn.SetWriteDeadline(deadline)
		defer func() { _ = c.Conn.SetWriteDeadline(time.Time{}) }()
	}
	_, err := c.write(*buf)
	return err
}
