// Command perf measures shellgate against a plain pty read loop with no
// server, on this machine, in one run: output throughput, keystroke echo,
// time to first output, output lost at exit and memory per idle terminal.
// It prints a table with each figure, the ratio and the target; it exits
// non-zero only when it could not measure, never for a missed target.
//
//	go run ./tests/perf          # full run, about 35 s on 2 cores
//	go run ./tests/perf -quick   # small sizes, about 30 s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if code, ok := runHelper(); ok {
		os.Exit(code)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// runHelper runs this program in the helper role its environment names
// (startHelper), talking over stdin and stdout, and reports whether it had
// one: the test binary takes the same roles.
func runHelper() (code int, ok bool) {
	switch {
	case os.Getenv(holderEnv) == "1":
		return holdIdle(os.Stdin, os.Stdout), true
	case os.Getenv(relayEnv) == "1":
		return serveRelay(os.Stdin, os.Stdout, false), true
	case os.Getenv(polledRelayEnv) == "1":
		return serveRelay(os.Stdin, os.Stdout, true), true
	case os.Getenv(streamEnv) == "1":
		return serveStream(os.Stdin, os.Stdout), true
	}
	return 0, false
}

func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	cfg.progress = stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := measure(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "perf: could not measure:", err)
		return 1
	}
	fmt.Fprintf(stdout, "shellgate vs a plain pty read loop (creack/pty, no server) — %d CPUs, %s/%s, load average %s at the start, %s\n\n",
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, res.load, time.Now().Format("2006-01-02 15:04"))
	printTable(stdout, res.rows())
	return 0
}

// parseFlags reads the flags over the full or quick sizes.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("perf", flag.ContinueOnError)
	fs.SetOutput(stderr)
	quick := fs.Bool("quick", false, "small sizes, about 30 s (payload 10 MB, 3 rounds, 200 echoes, 20 starts, 10 exits, idle 1,20,50)")
	bin := fs.String("bin", "", "shellgate binary to measure (default: go build ./cmd/shellgate)")
	payload := fs.Int64("bytes", 0, "throughput payload in bytes (default 100000000)")
	rounds := fs.Int("rounds", 0, "throughput rounds per side; the median is reported (default 5)")
	echo := fs.Int("echo", 0, "keystroke round trips per side (default 2000)")
	starts := fs.Int("starts", 0, "createTerminal → first byte runs per side (default 100)")
	exits := fs.Int("exits", 0, "print-and-exit runs per side (default 50)")
	idle := fs.String("idle", "", "idle terminal counts, ascending (default 1,100,500)")
	timeout := fs.Duration("timeout", 0, "give up after this long (default 5m, quick 2m)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	cfg := fullConfig()
	if *quick {
		cfg = quickConfig()
	}
	cfg.bin = *bin
	for _, o := range []struct {
		v   int
		dst *int
	}{{*rounds, &cfg.rounds}, {*echo, &cfg.echo}, {*starts, &cfg.starts}, {*exits, &cfg.exits}} {
		if o.v > 0 {
			*o.dst = o.v
		}
	}
	if *payload > 0 {
		cfg.payload = *payload
	}
	if *timeout > 0 {
		cfg.timeout = *timeout
	}
	if *idle != "" {
		counts, err := parseCounts(*idle)
		if err != nil {
			fmt.Fprintln(stderr, "perf: -idle:", err)
			return config{}, err
		}
		cfg.idle = counts
	}
	return cfg, nil
}

// parseCounts reads "1,100,500": at least two counts, ascending, from 1.
func parseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		if n < 1 || (len(out) > 0 && n <= out[len(out)-1]) {
			return nil, fmt.Errorf("counts must start at 1 or more and ascend: %q", s)
		}
		out = append(out, n)
	}
	if len(out) < 2 {
		return nil, fmt.Errorf("need at least two counts: %q", s)
	}
	return out, nil
}
