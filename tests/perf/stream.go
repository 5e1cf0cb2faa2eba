package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// The throughput figure has a third side beside shellgate and the plain
// loop, as the keystroke figure does: the least a server on a socket can
// do with a flood. A helper process runs the same line under a pty of its
// own, reads it through Go's poller as the daemon does, and sends what it
// read to a loopback WebSocket as binary frames (no JSON, no scrollback,
// no other viewer; a goroutine to read and one to send). Its bytes cross
// the same processes and sockets as shellgate's (the line, a server, this
// client), so the plain loop over it is what the socket alone costs, and
// it over shellgate is what shellgate costs on top.

// streamEnv, set to "1", makes this program that server: for each
// WebSocket it accepts, it reads one text frame with a byte count, runs
// throughputLine for it, streams the output and closes normally at its end.
// It prints its address and ends when its stdin closes.
const streamEnv = "SHELLGATE_PERF_STREAM"

func serveStream(in io.Reader, out io.Writer) int {
	// The daemon's rule for processors (cmd/shellgate/main.go), so the
	// floor runs the way shellgate does.
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(max(1, runtime.GOMAXPROCS(0)/2))
	}
	return serveLoopback(in, out, func(ctx context.Context, c *websocket.Conn) {
		if err := streamOnce(ctx, c); err != nil {
			_ = c.Close(websocket.StatusInternalError, err.Error())
			return
		}
		_ = c.Close(websocket.StatusNormalClosure, "")
	})
}

// streamOnce serves one request: the count, then the line's output.
func streamOnce(ctx context.Context, c *websocket.Conn) error {
	_, b, err := c.Read(ctx)
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("want a byte count, got %q", b)
	}
	p, err := startPlain(ctx, throughputLine(n))
	if err != nil {
		return err
	}
	if p.master, err = pollable(p.master); err != nil {
		_ = p.close(ctx, true)
		return err
	}
	// The pty is read on a goroutine of its own into a pending buffer, and
	// this one writes whatever is pending as one frame: the read never waits
	// for the socket, and a write takes all that came while the last was
	// sent. With one goroutine doing both, each read waited for a socket
	// write, and the relay was slower still (0.67× the plain loop in a run
	// where this one made 0.71–0.77×).
	var (
		mu      sync.Mutex
		ready   = sync.NewCond(&mu)
		pending []byte
		readErr error
	)
	go func() {
		buf := make([]byte, readSize)
		for {
			k, err := p.read(buf)
			mu.Lock()
			pending = append(pending, buf[:k]...)
			if err != nil {
				readErr = err
			}
			ready.Signal()
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	var frame []byte
	for {
		mu.Lock()
		for len(pending) == 0 && readErr == nil {
			ready.Wait()
		}
		frame, pending = pending, frame[:0]
		err := readErr
		mu.Unlock()
		if len(frame) > 0 {
			if werr := c.Write(ctx, websocket.MessageBinary, frame); werr != nil {
				_ = p.close(ctx, true)
				return werr
			}
		}
		if err == io.EOF {
			return p.close(ctx, false)
		}
		if err != nil {
			_ = p.close(ctx, true)
			return err
		}
	}
}

// streamSide is this client's end of the stream server.
type streamSide struct {
	cmd   *exec.Cmd
	stdin io.Closer
	addr  string
}

func openStream() (*streamSide, error) {
	cmd, stdin, addr, err := startServer(streamEnv)
	if err != nil {
		return nil, fmt.Errorf("stream: %w", err)
	}
	return &streamSide{cmd: cmd, stdin: stdin, addr: addr}, nil
}

// throughput times n bytes from the request to the last byte, in MB/s,
// and counts the frames. The connection is opened before the clock starts,
// as shellgate's is.
func (s *streamSide) throughput(ctx context.Context, n int64) (float64, int, error) {
	tr := &http.Transport{DisableKeepAlives: true}
	conn, _, err := websocket.Dial(ctx, "ws://"+s.addr+"/", &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}})
	tr.CloseIdleConnections()
	if err != nil {
		return 0, 0, fmt.Errorf("stream: %w", err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(64 << 20) // as the AHP client: a frame holds all that came during the last write
	buf := make([]byte, readSize)
	t0 := time.Now()
	if err := conn.Write(ctx, websocket.MessageText, []byte(strconv.FormatInt(n, 10))); err != nil {
		return 0, 0, fmt.Errorf("stream: %w", err)
	}
	var (
		got    int64
		frames int
		last   time.Time
	)
	for {
		_, r, err := conn.Reader(ctx)
		if websocket.CloseStatus(err) == websocket.StatusNormalClosure {
			break
		}
		if err != nil {
			return 0, 0, fmt.Errorf("stream: after %d of %d bytes: %w", got, n, err)
		}
		k, err := io.CopyBuffer(io.Discard, r, buf)
		if err != nil {
			return 0, 0, fmt.Errorf("stream: %w", err)
		}
		frames++
		got += k
		if got >= n && last.IsZero() {
			last = time.Now()
		}
	}
	if got != n {
		return 0, 0, fmt.Errorf("stream: the relay delivered %d of %d bytes", got, n)
	}
	return float64(n) / last.Sub(t0).Seconds() / 1e6, frames, nil
}

func (s *streamSide) close() error {
	_ = s.stdin.Close()
	return s.cmd.Wait()
}
