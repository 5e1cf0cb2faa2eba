package main

import (
	"bytes"
	"context"
	"fmt"
	"time"
)

// The commands both sides run, as shell lines (`/bin/sh -c line`).
const (
	// echoLine makes cat the thing that echoes: with the line discipline in
	// raw mode and its echo off, each byte goes to cat and back, as a key
	// goes to a shell's line editor and back.
	echoLine  = "stty raw -echo; echo R; exec cat"
	echoReady = "R\n" // raw mode: no CR added
	startLine = "echo ready"
	startWant = "ready"
)

func throughputLine(n int64) string { return fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x", n) }

func exitLine(i int) (line, want string) {
	want = fmt.Sprintf("perf-exit-%d", i)
	return "echo " + want, want
}

// echoKey is the byte of round trip i: printable, and different from the
// previous one so a late echo is never taken for the current one.
func echoKey(i int) byte { return 'a' + byte(i%26) }

// sgThroughput times a terminal delivering n bytes to this client over
// the WebSocket, from createTerminal to the last byte, in MB/s; and counts
// the terminal/data messages that carried them.
func sgThroughput(ctx context.Context, c *wsClient, uri string, n int64) (float64, int, error) {
	t0 := time.Now()
	snap, err := c.open(ctx, uri, throughputLine(n), true)
	if err != nil {
		return 0, 0, err
	}
	msgs := 0
	got := int64(len(snap.text))
	var last time.Time
	if got >= n {
		last = time.Now()
	}
	for exited := snap.exited; !exited; {
		m, err := c.event(ctx, uri)
		if err != nil {
			return 0, 0, err
		}
		switch m.typ {
		case "terminal/data":
			msgs++
			got += int64(len(m.data))
			if got >= n && last.IsZero() {
				last = time.Now()
			}
		case "terminal/exited":
			exited = true
		}
	}
	if err := c.dispose(ctx, uri); err != nil {
		return 0, 0, err
	}
	if got != n {
		return 0, 0, fmt.Errorf("shellgate delivered %d of %d bytes", got, n)
	}
	return float64(n) / last.Sub(t0).Seconds() / 1e6, msgs, nil
}

// sgRun creates a terminal running line and follows it to its exit: the
// time from createTerminal to the first byte of output (-1 if none came),
// and whether want arrived.
func sgRun(ctx context.Context, c *wsClient, uri, line, want string) (time.Duration, bool, error) {
	t0 := time.Now()
	snap, err := c.open(ctx, uri, line, true)
	if err != nil {
		return 0, false, err
	}
	first := time.Duration(-1)
	text := snap.text
	if len(text) > 0 {
		first = time.Since(t0)
	}
	for exited := snap.exited; !exited; {
		m, err := c.event(ctx, uri)
		if err != nil {
			return 0, false, err
		}
		switch m.typ {
		case "terminal/data":
			if first < 0 && len(m.data) > 0 {
				first = time.Since(t0)
			}
			text = append(text, m.data...)
		case "terminal/exited":
			exited = true
		}
	}
	if err := c.dispose(ctx, uri); err != nil {
		return 0, false, err
	}
	return first, bytes.Contains(text, []byte(want)), nil
}

// sgIdleRSS opens interactive shells under ptys (one connection, not
// subscribed to them) and reads the daemon's settled RSS at each count.
func sgIdleRSS(ctx context.Context, d *daemon, counts []int) ([]int64, error) {
	c, err := d.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer c.close()
	uri := func(i int) string { return fmt.Sprintf("ahp-terminal:/perf-idle-%d", i) }
	var out []int64
	open := 0
	for _, n := range counts {
		for ; open < n; open++ {
			if err := c.call(ctx, "createTerminal", createParams(uri(open), "", true), nil); err != nil {
				return nil, err
			}
		}
		v, err := settledRSS(ctx, d.pid())
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	// Dispose in one go: every request first, then every answer.
	ids := make([]uint64, open)
	for i := range ids {
		if ids[i], err = c.request(ctx, "disposeTerminal", map[string]any{"channel": uri(i)}); err != nil {
			return nil, err
		}
	}
	for i, id := range ids {
		if err := c.await(ctx, id, "disposeTerminal "+uri(i), nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sgIdleRSSPerConn is sgIdleRSS as people use the daemon: each terminal
// created and watched over a connection of its own, all left open.
func sgIdleRSSPerConn(ctx context.Context, d *daemon, counts []int) ([]int64, error) {
	var conns []*wsClient
	defer func() {
		for _, c := range conns {
			c.close()
		}
	}()
	var out []int64
	for _, n := range counts {
		for len(conns) < n {
			c, err := d.dial(ctx)
			if err != nil {
				return nil, err
			}
			conns = append(conns, c)
			if _, err := c.open(ctx, fmt.Sprintf("ahp-terminal:/perf-conn-%d", len(conns)), "", true); err != nil {
				return nil, err
			}
		}
		v, err := settledRSS(ctx, d.pid())
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
