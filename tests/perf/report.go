package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// row is one line of the table.
type row struct {
	figure, sg, plain, ratio, target, verdict string
}

// percentile is the nearest-rank p-th percentile (0 < p ≤ 100) of xs.
func percentile(xs []time.Duration, p float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	k := int(float64(len(s))*p/100+0.999999) - 1
	return s[min(max(k, 0), len(s)-1)]
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// perTerminal is the RSS growth per terminal from the first count to the i-th.
func (r *results) perTerminal(side, i int) float64 {
	n := r.cfg.idle
	return float64(r.rss[side][i]-r.rss[side][0]) / float64(n[i]-n[0])
}

func verdict(ok bool) string {
	if ok {
		return "pass"
	}
	return "FAIL"
}

func ratio(a, b float64) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func micros(d time.Duration) string { return fmt.Sprintf("%d µs", d.Microseconds()) }
func millis(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}
func kib(b float64) string { return fmt.Sprintf("%.1f KiB", b/1024) }
func mib(b int64) string   { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// rows turns the measurements into the table, judging each against its
// target.
func (r *results) rows() []row {
	c := r.cfg
	var out []row

	tp := [2]float64{median(r.tput[sg]), median(r.tput[pl])}
	out = append(out, row{
		fmt.Sprintf("output throughput, %s under a pty → one WebSocket client (median of %d)", bytesLabel(c.payload), c.rounds),
		fmt.Sprintf("%.1f MB/s", tp[sg]), fmt.Sprintf("%.1f MB/s", tp[pl]), ratio(tp[sg], tp[pl]),
		"≥ 0.9× plain", verdict(tp[pl] > 0 && tp[sg]/tp[pl] >= 0.9),
	})
	// What any server on a socket costs a flood: its bytes cross a server
	// and a socket to this client, where the plain loop's stay in one
	// process. The minimal relay does that and nothing else (see stream.go).
	rs := median(r.stream)
	out = append(out,
		row{"  the least a server can do: the same line under a pty, read on one goroutine, sent by another as binary WebSocket frames (no protocol)",
			fmt.Sprintf("%.1f MB/s", rs), fmt.Sprintf("%.1f MB/s", tp[pl]), ratio(rs, tp[pl]), "", ""},
		row{"  output throughput against that minimal relay",
			fmt.Sprintf("%.1f MB/s", tp[sg]), fmt.Sprintf("%.1f MB/s", rs), ratio(tp[sg], rs),
			"≥ 0.9× relay", verdict(rs > 0 && tp[sg]/rs >= 0.9)},
	)

	e50 := [2]time.Duration{percentile(r.echo[sg], 50), percentile(r.echo[pl], 50)}
	e99 := [2]time.Duration{percentile(r.echo[sg], 99), percentile(r.echo[pl], 99)}
	out = append(out,
		row{fmt.Sprintf("keystroke echo through cat in raw mode, p50 (%d samples)", len(r.echo[sg])),
			micros(e50[sg]), micros(e50[pl]), ratio(float64(e50[sg]), float64(e50[pl])),
			"≤ 1.5× plain", verdict(e50[pl] > 0 && float64(e50[sg]) <= 1.5*float64(e50[pl]))},
		row{"keystroke echo through cat in raw mode, p99",
			micros(e99[sg]), micros(e99[pl]), ratio(float64(e99[sg]), float64(e99[pl])),
			"< 1 ms", verdict(e99[sg] < time.Millisecond)},
	)
	// What any server on a socket costs: a key crosses the client, the
	// server and cat, where the plain loop crosses only itself and cat. The
	// minimal relay does that and nothing else (see echo.go).
	r50, r99, p50 := percentile(r.relay, 50), percentile(r.relay, 99), percentile(r.ping, 50)
	out = append(out,
		row{"  the least a server can do: a key over a WebSocket to a one-goroutine relay, cat under its pty, back (no protocol), p50",
			micros(r50), micros(e50[pl]), ratio(float64(r50), float64(e50[pl])),
			"≤ 1.5× plain", verdict(e50[pl] > 0 && float64(r50) <= 1.5*float64(e50[pl]))},
		row{"  keystroke echo against that minimal relay, p50",
			micros(e50[sg]), micros(r50), ratio(float64(e50[sg]), float64(r50)),
			"≤ 1.3× relay", verdict(r50 > 0 && float64(e50[sg]) <= 1.3*float64(r50))},
		row{"  keystroke echo against that minimal relay, p99",
			micros(e99[sg]), micros(r99), ratio(float64(e99[sg]), float64(r99)),
			"≤ 1.5× relay", verdict(r99 > 0 && float64(e99[sg]) <= 1.5*float64(r99))},
	)
	// The relay waits for cat in a blocking read; a server that holds many
	// terminals waits in Go's poller, which costs a key a sleep and a
	// wake-up more. The polled relay shows how much on this machine.
	q50, q99 := percentile(r.polledRelay, 50), percentile(r.polledRelay, 99)
	out = append(out,
		row{"  the same relay waiting for cat in Go's poller, as a server of many terminals does, p50",
			micros(q50), micros(r50), ratio(float64(q50), float64(r50)), "", ""},
		row{"  keystroke echo against the polled relay, p50 / p99",
			micros(e50[sg]) + " / " + micros(e99[sg]), micros(q50) + " / " + micros(q99),
			ratio(float64(e50[sg]), float64(q50)) + " / " + ratio(float64(e99[sg]), float64(q99)), "", ""},
		row{"  AHP ping to the daemon (no terminal), p50", micros(p50), "—", "", "", ""},
		row{"  server CPU per key, all threads: the daemon against the relay (polled relay)",
			micros(r.keyCPU[0]), micros(r.keyCPU[1]) + " (" + micros(r.keyCPU[2]) + ")",
			ratio(float64(r.keyCPU[0]), float64(r.keyCPU[1])) + " (" + ratio(float64(r.keyCPU[0]), float64(r.keyCPU[2])) + ")", "", ""},
	)

	s50 := [2]time.Duration{percentile(r.start[sg], 50), percentile(r.start[pl], 50)}
	s99 := [2]time.Duration{percentile(r.start[sg], 99), percentile(r.start[pl], 99)}
	out = append(out,
		row{fmt.Sprintf("createTerminal → first byte of `echo ready`, p50 (%d runs)", c.starts),
			millis(s50[sg]), millis(s50[pl]), ratio(float64(s50[sg]), float64(s50[pl])),
			"< 8 ms", verdict(len(r.start[sg]) > 0 && s50[sg] < 8*time.Millisecond)},
		row{"createTerminal → first byte of `echo ready`, p99",
			millis(s99[sg]), millis(s99[pl]), ratio(float64(s99[sg]), float64(s99[pl])), "", ""},
		row{fmt.Sprintf("output lost at exit: runs of %d whose line never arrived", c.exits),
			fmt.Sprint(r.lost[sg]), fmt.Sprint(r.lost[pl]), "", "0", verdict(r.lost[sg] == 0)},
	)
	if r.startsLost != [2]int{} {
		out = append(out, row{fmt.Sprintf("`echo ready` runs with no output (of %d, not timed)", c.starts),
			fmt.Sprint(r.startsLost[sg]), fmt.Sprint(r.startsLost[pl]), "", "0", verdict(r.startsLost[sg] == 0)})
	}

	for i, n := range c.idle {
		out = append(out, row{fmt.Sprintf("RSS (VmRSS) with %d idle %s (sh under a pty)", n, plural(n, "terminal")),
			mib(r.rss[sg][i]), mib(r.rss[pl][i]), ratio(float64(r.rss[sg][i]), float64(r.rss[pl][i])), "", ""})
	}
	for i := 1; i < len(c.idle); i++ {
		a, b := r.perTerminal(sg, i), r.perTerminal(pl, i)
		out = append(out, row{fmt.Sprintf("RSS per idle terminal, one connection for all, (RSS(%d) − RSS(%d)) / %d", c.idle[i], c.idle[0], c.idle[i]-c.idle[0]),
			kib(a), kib(b), ratio(a, b), "< 32 KiB", verdict(a < 32<<10)})
	}
	// As people use it: each terminal watched over a connection of its own
	// (the plain loop has no connections; its figures are the same holder's).
	for i, n := range c.idle {
		out = append(out, row{fmt.Sprintf("RSS (VmRSS) with %d idle %s, a connection each, subscribed", n, plural(n, "terminal")),
			mib(r.rssConn[i]), mib(r.rss[pl][i]), ratio(float64(r.rssConn[i]), float64(r.rss[pl][i])), "", ""})
	}
	for i := 1; i < len(c.idle); i++ {
		a := float64(r.rssConn[i]-r.rssConn[0]) / float64(c.idle[i]-c.idle[0])
		b := r.perTerminal(pl, i)
		out = append(out, row{fmt.Sprintf("RSS per idle terminal with its own connection, (RSS(%d) − RSS(%d)) / %d", c.idle[i], c.idle[0], c.idle[i]-c.idle[0]),
			kib(a), kib(b), ratio(a, b), "≤ 16 KiB", verdict(a <= 16<<10)})
	}
	return out
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func bytesLabel(n int64) string {
	if n%1_000_000 == 0 {
		return fmt.Sprintf("%d MB", n/1_000_000)
	}
	return fmt.Sprintf("%d bytes", n)
}

// printTable writes rows as a Markdown table padded to line up in a
// terminal too.
func printTable(w io.Writer, rows []row) {
	head := row{"figure", "shellgate", "plain", "ratio", "target", "pass/fail"}
	all := append([]row{head}, rows...)
	cells := func(r row) []string {
		cs := []string{r.figure, r.sg, r.plain, r.ratio, r.target, r.verdict}
		for i, s := range cs {
			if s == "" {
				cs[i] = "—"
			}
		}
		return cs
	}
	width := make([]int, 6)
	for _, r := range all {
		for i, s := range cells(r) {
			width[i] = max(width[i], len([]rune(s)))
		}
	}
	line := func(cs []string) {
		var b strings.Builder
		b.WriteString("|")
		for i, s := range cs {
			b.WriteString(" " + s + strings.Repeat(" ", width[i]-len([]rune(s))) + " |")
		}
		fmt.Fprintln(w, b.String())
	}
	line(cells(head))
	sep := make([]string, 6)
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i])
	}
	line(sep)
	for _, r := range rows {
		line(cells(r))
	}
}
