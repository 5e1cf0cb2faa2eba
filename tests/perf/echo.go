package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"time"

	"github.com/coder/websocket"
)

// The keystroke figure has three sides, measured in interleaved blocks so a
// change in the machine's load hits them alike:
//
//   - shellgate: a key as terminal/input over the WebSocket, to cat under
//     the daemon's pty, back as terminal/data;
//   - plain: the key written to a pty master in this process, to cat and
//     back;
//   - relay: the key over a loopback WebSocket to another process that
//     writes it to cat under its own pty and sends the echo back, with no
//     protocol and one goroutine. It crosses the same processes as
//     shellgate's key (client, server, cat) and does nothing else: no
//     server on a socket can answer a key sooner. It waits for cat in a
//     blocking read, a thread asleep in the pty itself;
//   - polled relay: the same relay waiting for cat in Go's poller instead,
//     the way a server holding many terminals waits (a blocking read each
//     would pin an OS thread per terminal, and the daemon's terminals are
//     read that way). What it adds to the relay is what the poller's
//     sleep and wake-up cost a key on this machine.
const echoBlock = 50

// echoer times one round trip for key i.
type echoer interface {
	roundTrip(ctx context.Context, i int) (time.Duration, error)
	close(ctx context.Context) error
}

// echoSamples are the keystroke measurements of a run.
type echoSamples struct {
	sg, plain, relay []time.Duration
	polledRelay      []time.Duration // the relay, waiting for cat in Go's poller
	sgAck            []time.Duration // when shellgate's echo of the input action came
	ping             []time.Duration // an AHP ping to the daemon and its answer

	// The CPU time, all threads, that the server of a side spent on its
	// timed keys, divided by them: the daemon's for shellgate, each relay
	// process's for its side. On a machine where the client, the server
	// and cat share two cores, a key's CPU is most of its latency.
	sgCPU, relayCPU, polledRelayCPU time.Duration
}

// measureEchoes runs samples round trips per side after warmup ones, in
// blocks of echoBlock, one side after the other within each block.
func measureEchoes(ctx context.Context, c *wsClient, daemonPid, samples, warmup int) (echoSamples, error) {
	var res echoSamples
	sgSide, err := openSGEcho(ctx, c, "ahp-terminal:/perf-echo")
	if err != nil {
		return res, err
	}
	plainSide, err := openPlainEcho(ctx)
	if err != nil {
		return res, errors.Join(err, sgSide.close(ctx))
	}
	relaySide, err := openRelay(ctx, relayEnv)
	if err != nil {
		return res, errors.Join(err, sgSide.close(ctx), plainSide.close(ctx))
	}
	polledSide, err := openRelay(ctx, polledRelayEnv)
	if err != nil {
		return res, errors.Join(err, sgSide.close(ctx), plainSide.close(ctx), relaySide.close(ctx))
	}
	pingSide := &pinger{c: c}
	sides := []struct {
		e   echoer
		out *[]time.Duration
		pid int            // the server process whose CPU is counted; 0: none
		cpu *time.Duration // where its CPU per key goes
	}{
		{sgSide, &res.sg, daemonPid, &res.sgCPU},
		{plainSide, &res.plain, 0, nil},
		{relaySide, &res.relay, relaySide.cmd.Process.Pid, &res.relayCPU},
		{polledSide, &res.polledRelay, polledSide.cmd.Process.Pid, &res.polledRelayCPU},
		{pingSide, &res.ping, 0, nil},
	}

	err = func() error {
		for done := -warmup; done < samples; {
			n := min(echoBlock, samples-done)
			if done < 0 {
				n = -done
			}
			for _, s := range sides {
				timed := s.pid != 0 && done >= 0
				var cpu0 time.Duration
				if timed {
					var err error
					if cpu0, err = runTime(s.pid); err != nil {
						return err
					}
				}
				for i := done; i < done+n; i++ {
					d, err := s.e.roundTrip(ctx, i+warmup)
					if err != nil {
						return err
					}
					if i >= 0 {
						*s.out = append(*s.out, d)
					}
				}
				if timed {
					cpu1, err := runTime(s.pid)
					if err != nil {
						return err
					}
					*s.cpu += cpu1 - cpu0
				}
			}
			done += n
		}
		return nil
	}()
	res.sgAck = sgSide.acks[min(warmup, len(sgSide.acks)):]
	for _, s := range sides {
		if s.cpu != nil && len(*s.out) > 0 {
			*s.cpu /= time.Duration(len(*s.out))
		}
	}
	for _, s := range sides {
		err = errors.Join(err, s.e.close(ctx))
	}
	return res, err
}

// sgEcho is a terminal running cat in raw mode under the daemon's pty.
type sgEcho struct {
	c    *wsClient
	uri  string
	acks []time.Duration
}

func openSGEcho(ctx context.Context, c *wsClient, uri string) (*sgEcho, error) {
	snap, err := c.open(ctx, uri, echoLine, true)
	if err != nil {
		return nil, err
	}
	e := &sgEcho{c: c, uri: uri}
	seen := snap.text
	for !bytes.Contains(seen, []byte(echoReady)) {
		m, err := c.event(ctx, uri)
		if err != nil {
			return nil, errors.Join(err, e.close(ctx))
		}
		if m.typ == "terminal/exited" {
			return nil, errors.Join(fmt.Errorf("waiting for cat: %w (got %q)", errNoOutput, seen), e.close(ctx))
		}
		if m.typ == "terminal/data" {
			seen = append(seen, m.data...)
		}
	}
	return e, nil
}

// roundTrip sends key i as terminal/input and waits for it as output. It
// keeps, aside, when the host's echo of the input action itself arrived
// (the host has written the key to the pty by then): the way in.
func (e *sgEcho) roundTrip(ctx context.Context, i int) (time.Duration, error) {
	key := echoKey(i)
	t0 := time.Now()
	if err := e.c.dispatch(ctx, e.uri, map[string]string{"type": "terminal/input", "data": string(key)}); err != nil {
		return 0, err
	}
	var ack time.Duration
	for {
		m, err := e.c.event(ctx, e.uri)
		if err != nil {
			return 0, err
		}
		switch {
		case m.typ == "terminal/exited":
			return 0, fmt.Errorf("cat exited while waiting for the echo of %q", key)
		case m.typ == "terminal/input" && m.origin && ack == 0:
			ack = time.Since(t0)
		case m.typ == "terminal/data" && bytes.IndexByte(m.data, key) >= 0:
			d := time.Since(t0)
			e.acks = append(e.acks, ack)
			return d, nil
		}
	}
}

func (e *sgEcho) close(ctx context.Context) error { return e.c.dispose(ctx, e.uri) }

// plainEcho is cat in raw mode under a pty of this process.
type plainEcho struct {
	p   *plainTerm
	buf []byte
}

func openPlainEcho(ctx context.Context) (*plainEcho, error) {
	p, err := startPlain(ctx, echoLine)
	if err != nil {
		return nil, err
	}
	e := &plainEcho{p: p, buf: make([]byte, readSize)}
	var seen []byte
	for !bytes.Contains(seen, []byte(echoReady)) {
		n, err := p.read(e.buf)
		seen = append(seen, e.buf[:n]...)
		if err != nil {
			_ = p.close(ctx, true)
			return nil, fmt.Errorf("plain: waiting for cat: %w (got %q)", err, seen)
		}
	}
	return e, nil
}

func (e *plainEcho) roundTrip(_ context.Context, i int) (time.Duration, error) {
	key := echoKey(i)
	t0 := time.Now()
	if _, err := e.p.master.Write([]byte{key}); err != nil {
		return 0, fmt.Errorf("plain: write: %w", err)
	}
	for {
		n, err := e.p.read(e.buf)
		if err != nil {
			return 0, fmt.Errorf("plain: waiting for the echo of %q: %w", key, err)
		}
		if bytes.IndexByte(e.buf[:n], key) >= 0 {
			return time.Since(t0), nil
		}
	}
}

func (e *plainEcho) close(ctx context.Context) error { return e.p.close(ctx, true) }

// pinger times an AHP ping to the daemon: a WebSocket round trip through
// its router, with no terminal.
type pinger struct{ c *wsClient }

func (p *pinger) roundTrip(ctx context.Context, _ int) (time.Duration, error) {
	t0 := time.Now()
	if err := p.c.call(ctx, "ping", map[string]any{}, nil); err != nil {
		return 0, err
	}
	return time.Since(t0), nil
}

func (*pinger) close(context.Context) error { return nil }

// relayEnv, set to "1", makes this program the relay side's server: it
// runs cat in raw mode under a pty of its own, serves a WebSocket on
// loopback, and for each frame (one key, no JSON) writes the key to the pty
// and sends back what the pty gives until the key is among it. One
// goroutine, nothing else: the least a server can do for a key. It prints
// its address and ends when its stdin closes. polledRelayEnv makes it the
// same server reading its pty through Go's poller.
const (
	relayEnv       = "SHELLGATE_PERF_RELAY"
	polledRelayEnv = "SHELLGATE_PERF_POLLED_RELAY"
)

func serveRelay(in io.Reader, out io.Writer, polled bool) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cat, err := openPlainEcho(ctx)
	if err == nil && polled {
		if cat.p.master, err = pollable(cat.p.master); err != nil {
			_ = cat.close(ctx)
		}
	}
	if err != nil {
		fmt.Fprintf(out, "error: %v\n", err)
		return 1
	}
	defer cat.close(ctx)
	return serveLoopback(in, out, func(ctx context.Context, c *websocket.Conn) {
		for {
			_, key, err := c.Read(ctx)
			if err != nil || len(key) != 1 {
				return
			}
			if _, err := cat.p.master.Write(key); err != nil {
				return
			}
			for {
				n, err := cat.p.read(cat.buf)
				if err != nil {
					return
				}
				if err := c.Write(ctx, websocket.MessageBinary, cat.buf[:n]); err != nil {
					return
				}
				if bytes.IndexByte(cat.buf[:n], key[0]) >= 0 {
					break
				}
			}
		}
	})
}

// relayEcho is a WebSocket to a relay process.
type relayEcho struct {
	cmd   *exec.Cmd
	stdin io.Closer
	conn  *websocket.Conn
}

// openRelay starts the relay that env names and connects to it.
func openRelay(ctx context.Context, env string) (*relayEcho, error) {
	cmd, stdin, addr, err := startServer(env)
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	e := &relayEcho{cmd: cmd, stdin: stdin}
	tr := &http.Transport{DisableKeepAlives: true}
	conn, _, err := websocket.Dial(ctx, "ws://"+addr+"/", &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}})
	tr.CloseIdleConnections()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("relay: %w", err), e.close(ctx))
	}
	e.conn = conn
	return e, nil
}

func (e *relayEcho) roundTrip(ctx context.Context, i int) (time.Duration, error) {
	key := echoKey(i)
	t0 := time.Now()
	if err := e.conn.Write(ctx, websocket.MessageBinary, []byte{key}); err != nil {
		return 0, fmt.Errorf("relay: %w", err)
	}
	for {
		_, b, err := e.conn.Read(ctx)
		if err != nil {
			return 0, fmt.Errorf("relay: %w", err)
		}
		if bytes.IndexByte(b, key) >= 0 {
			return time.Since(t0), nil
		}
	}
}

func (e *relayEcho) close(context.Context) error {
	if e.conn != nil {
		_ = e.conn.Close(websocket.StatusNormalClosure, "")
	}
	_ = e.stdin.Close()
	return e.cmd.Wait()
}
