package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// config sets the sizes of a run.
type config struct {
	bin      string // shellgate binary; "" builds ./cmd/shellgate
	payload  int64  // throughput payload, bytes
	rounds   int    // throughput rounds per side; the median is reported
	echo     int    // keystroke round trips per side
	warmup   int    // round trips before those, not counted
	starts   int    // createTerminal → first byte runs per side
	exits    int    // print-and-exit runs per side
	idle     []int  // idle terminal counts, ascending
	timeout  time.Duration
	progress io.Writer // a line per step; nil for none
}

func fullConfig() config {
	return config{payload: 100_000_000, rounds: 5, echo: 2000, warmup: 50, starts: 100, exits: 50,
		idle: []int{1, 100, 500}, timeout: 5 * time.Minute}
}

func quickConfig() config {
	return config{payload: 10_000_000, rounds: 3, echo: 200, warmup: 20, starts: 20, exits: 10,
		idle: []int{1, 20, 50}, timeout: 2 * time.Minute}
}

// Sides of every figure.
const (
	sg = iota
	pl
)

// results are the raw measurements of a run, per side.
type results struct {
	cfg         config
	tput        [2][]float64 // MB/s per round
	stream      []float64    // MB/s per round through a minimal relay server (see stream.go)
	echo        [2][]time.Duration
	relay       []time.Duration  // a key through a minimal relay server (see echo.go)
	polledRelay []time.Duration  // the same relay waiting for cat in Go's poller
	ping        []time.Duration  // an AHP ping round trip to the daemon
	keyCPU      [3]time.Duration // CPU per timed key: the daemon, the relay, the polled relay
	start       [2][]time.Duration
	startsLost  [2]int // start runs whose "ready" never came (not timed)
	lost        [2]int // exit runs whose line never came
	rss         [2][]int64
	rssConn     []int64 // shellgate, each terminal on a connection of its own
	load        string  // the 1-minute load average when the run began
}

func (c config) say(format string, args ...any) {
	if c.progress != nil {
		fmt.Fprintf(c.progress, format+"\n", args...)
	}
}

// measure runs every measurement, shellgate and plain side by side. Only a
// failure to measure is an error; a missed target is a result.
func measure(ctx context.Context, cfg config) (res *results, err error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "shellgate-perf-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := cfg.bin
	if bin == "" {
		cfg.say("building ./cmd/shellgate")
		if bin, err = buildDaemon(ctx, dir); err != nil {
			return nil, err
		}
	}
	res = &results{cfg: cfg}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil && len(strings.Fields(string(b))) > 0 {
		res.load = strings.Fields(string(b))[0]
	}

	// Memory first, on a daemon of its own, so no earlier traffic has grown
	// (or freed) its heap.
	cfg.say("idle terminals %v: shellgate", cfg.idle)
	if res.rss[sg], err = withDaemon(ctx, bin, dir, func(d *daemon) ([]int64, error) {
		return sgIdleRSS(ctx, d, cfg.idle)
	}); err != nil {
		return nil, fmt.Errorf("idle terminals: %w", err)
	}
	cfg.say("idle terminals %v, a connection each: shellgate", cfg.idle)
	if res.rssConn, err = withDaemon(ctx, bin, dir, func(d *daemon) ([]int64, error) {
		return sgIdleRSSPerConn(ctx, d, cfg.idle)
	}); err != nil {
		return nil, fmt.Errorf("idle terminals, a connection each: %w", err)
	}
	cfg.say("idle terminals %v: plain", cfg.idle)
	if res.rss[pl], err = plainIdleRSS(ctx, cfg.idle); err != nil {
		return nil, fmt.Errorf("idle terminals (plain): %w", err)
	}

	_, err = withDaemon(ctx, bin, dir, func(d *daemon) (struct{}, error) {
		c, err := d.dial(ctx)
		if err != nil {
			return struct{}{}, err
		}
		defer c.close()
		return struct{}{}, timed(ctx, cfg, d, c, res)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// withDaemon runs f against a fresh daemon and stops it after.
func withDaemon[T any](ctx context.Context, bin, dir string, f func(*daemon) (T, error)) (T, error) {
	d, err := startDaemon(ctx, bin, dir)
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := f(d)
	return v, errors.Join(err, d.stop())
}

// timed runs the throughput, echo, start and exit measurements, alternating
// sides run by run so drift in the machine's load hits both alike.
func timed(ctx context.Context, cfg config, d *daemon, c *wsClient, res *results) (err error) {
	relay, err := openStream()
	if err != nil {
		return fmt.Errorf("throughput: %w", err)
	}
	defer func() { err = errors.Join(err, relay.close()) }()
	for i := range cfg.rounds {
		if err := throughputRound(ctx, cfg, d, c, relay, res, i); err != nil {
			return fmt.Errorf("throughput: %w", err)
		}
	}
	if err := echoes(ctx, cfg, d, c, res); err != nil {
		return fmt.Errorf("echo: %w", err)
	}
	cfg.say("createTerminal → first byte, %d runs per side", cfg.starts)
	for i := range cfg.starts {
		first, ok, err := sgRun(ctx, c, fmt.Sprintf("ahp-terminal:/perf-start-%d", i), startLine, startWant)
		if err != nil {
			return fmt.Errorf("start: %w", err)
		}
		res.addStart(sg, first, ok)
		if first, ok, err = plainStart(ctx, startLine, startWant); err != nil {
			return fmt.Errorf("start: %w", err)
		}
		res.addStart(pl, first, ok)
	}
	cfg.say("output at exit, %d runs per side", cfg.exits)
	for i := range cfg.exits {
		line, want := exitLine(i)
		_, ok, err := sgRun(ctx, c, fmt.Sprintf("ahp-terminal:/perf-exit-%d", i), line, want)
		if err != nil {
			return fmt.Errorf("exit: %w", err)
		}
		if !ok {
			res.lost[sg]++
		}
		if _, ok, err = plainStart(ctx, line, want); err != nil {
			return fmt.Errorf("exit: %w", err)
		}
		if !ok {
			res.lost[pl]++
		}
	}
	return nil
}

// throughputRound measures one round per side: shellgate, the plain loop,
// the minimal relay. The progress line adds what explains a figure:
// message, read and frame sizes, and the daemon's CPU per MB.
func throughputRound(ctx context.Context, cfg config, d *daemon, c *wsClient, relay *streamSide, res *results, i int) error {
	cpu0, err := cpuTime(d.pid())
	if err != nil {
		return err
	}
	v, msgs, err := sgThroughput(ctx, c, fmt.Sprintf("ahp-terminal:/perf-tput-%d", i), cfg.payload)
	if err != nil {
		return err
	}
	cpu1, err := cpuTime(d.pid())
	if err != nil {
		return err
	}
	p, reads, err := plainThroughput(ctx, cfg.payload)
	if err != nil {
		return err
	}
	r, frames, err := relay.throughput(ctx, cfg.payload)
	if err != nil {
		return err
	}
	res.tput[sg], res.tput[pl] = append(res.tput[sg], v), append(res.tput[pl], p)
	res.stream = append(res.stream, r)
	mb := float64(cfg.payload) / 1e6
	cfg.say("throughput round %d/%d: shellgate %.1f MB/s (%d messages of %.0f bytes; daemon CPU %.1f ms/MB), plain %.1f MB/s (%d reads of %.0f bytes), minimal relay %.1f MB/s (%d frames)",
		i+1, cfg.rounds, v, msgs, float64(cfg.payload)/float64(max(msgs, 1)), float64((cpu1-cpu0).Milliseconds())/mb,
		p, reads, float64(cfg.payload)/float64(max(reads, 1)), r, frames)
	return nil
}

// echoes measures the keystroke round trips, the sides interleaved in
// blocks.
func echoes(ctx context.Context, cfg config, d *daemon, c *wsClient, res *results) error {
	cfg.say("keystroke echo, %d round trips per side in blocks of %d: shellgate, plain, minimal relay, polled relay, ping", cfg.echo, echoBlock)
	e, err := measureEchoes(ctx, c, d.pid(), cfg.echo, cfg.warmup)
	if err != nil {
		return err
	}
	res.echo[sg], res.echo[pl], res.relay, res.polledRelay, res.ping = e.sg, e.plain, e.relay, e.polledRelay, e.ping
	res.keyCPU = [3]time.Duration{e.sgCPU, e.relayCPU, e.polledRelayCPU}
	cfg.say("  shellgate: the input's own echo came back after p50 %s, the output after p50 %s",
		micros(percentile(e.sgAck, 50)), micros(percentile(e.sg, 50)))
	return nil
}

// addStart keeps a start sample whose output arrived; one whose output
// was lost has no first byte to time.
func (r *results) addStart(side int, first time.Duration, ok bool) {
	if !ok || first < 0 {
		r.startsLost[side]++
		return
	}
	r.start[side] = append(r.start[side], first)
}
