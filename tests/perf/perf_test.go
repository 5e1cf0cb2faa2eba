package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The figures re-run this binary as their helpers (an idle-terminal
	// holder, the relays).
	if code, ok := runHelper(); ok {
		os.Exit(code)
	}
	goleak.VerifyTestMain(m,
		// The thread children are forked on lives as long as the process.
		goleak.IgnoreTopFunction("github.com/shellgate/shellgate/adapters/spawner/internal/proc.spawnThread"))
}

// TestQuickRunMeasuresEveryFigure runs the tool on small sizes against the
// real daemon. It checks that every figure was measured and that no output
// was lost at exit; timings are the tool's business, not the test's.
func TestQuickRunMeasuresEveryFigure(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the daemon and spawns about a hundred processes")
	}
	cfg := quickConfig()
	cfg.payload, cfg.rounds = 2_000_000, 1
	cfg.echo, cfg.warmup = 50, 5
	cfg.starts, cfg.exits = 5, 5
	cfg.idle = []int{1, 10, 40}

	res, err := measure(context.Background(), cfg)
	require.NoError(t, err)

	for side, name := range []string{"shellgate", "plain"} {
		require.Len(t, res.tput[side], cfg.rounds, name)
		for _, v := range res.tput[side] {
			require.Positive(t, v, "%s throughput", name)
		}
		require.Len(t, res.echo[side], cfg.echo, name)
		require.Len(t, res.relay, cfg.echo, "relay")
		require.Len(t, res.polledRelay, cfg.echo, "polled relay")
		require.Len(t, res.stream, cfg.rounds, "relay throughput")
		require.Len(t, res.ping, cfg.echo, "ping")
		for _, d := range res.echo[side] {
			require.Positive(t, d, "%s echo", name)
		}
		require.NotEmpty(t, res.start[side], "%s start", name)
		for _, d := range res.start[side] {
			require.Positive(t, d, "%s start", name)
		}
		require.Len(t, res.rss[side], len(cfg.idle), name)
		if side == sg {
			require.Len(t, res.rssConn, len(cfg.idle), "shellgate, a connection each")
		}
		for _, v := range res.rss[side] {
			require.Positive(t, v, "%s RSS", name)
		}
		// The growth per terminal is a difference of two readings: with few
		// terminals, and a daemon that holds next to nothing for each, the
		// heap's own movement can make it negative. It must be a number.
		per := res.perTerminal(side, len(cfg.idle)-1)
		require.False(t, math.IsNaN(per) || math.IsInf(per, 0), "%s RSS per terminal is %v", name, per)
	}
	require.Zero(t, res.lost[sg], "shellgate lost the line of a command that printed it and exited")
	require.Zero(t, res.startsLost[sg], "shellgate lost the output of `echo ready`")
	t.Logf("plain runs that lost their line at exit: %d of %d", res.lost[pl], cfg.exits)

	var table bytes.Buffer
	printTable(&table, res.rows())
	require.Contains(t, table.String(), "| figure")
	t.Log("\n" + table.String())
}

// TestParseMessageReadsDataFramesFastAndEverythingElseInFull: the fast path
// must agree with encoding/json on every frame it accepts, and leave any
// other shape to encoding/json.
func TestParseMessageReadsDataFramesFastAndEverythingElseInFull(t *testing.T) {
	for _, tc := range []struct {
		name, frame string
		fast        bool
		want        msg
	}{
		{"plain text", `{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-terminal:/a","action":{"type":"terminal/data","data":"xxx"},"serverSeq":7}}`,
			true, msg{method: "action", channel: "ahp-terminal:/a", typ: "terminal/data", data: []byte("xxx")}},
		{"escapes", `{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-terminal:/a","action":{"type":"terminal/data","data":"a\"b\\\r\n\u001b[0m\\"},"serverSeq":8}}`,
			true, msg{method: "action", channel: "ahp-terminal:/a", typ: "terminal/data", data: []byte("a\"b\\\r\n\x1b[0m\\")}},
		{"other key order", `{"jsonrpc":"2.0","method":"action","params":{"action":{"data":"hi","type":"terminal/data"},"channel":"ahp-terminal:/a","serverSeq":9}}`,
			false, msg{method: "action", channel: "ahp-terminal:/a", typ: "terminal/data", data: []byte("hi")}},
		{"rejected echo", `{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-terminal:/a","action":{"type":"terminal/data","data":"hi"},"serverSeq":10,"origin":{"clientId":"c","clientSeq":1},"rejectionReason":"no"}}`,
			false, msg{method: "action", channel: "ahp-terminal:/a", typ: "terminal/data", data: []byte("hi"), origin: true, rejection: "no"}},
		{"answer", `{"jsonrpc":"2.0","id":3,"result":null}`,
			false, msg{id: 3, response: true, result: []byte("null")}},
		{"error", `{"jsonrpc":"2.0","id":4,"error":{"code":-32008,"message":"No terminal at x"}}`,
			false, msg{id: 4, response: true, err: &rpcError{Code: -32008, Message: "No terminal at x"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, fast := fastData([]byte(tc.frame))
			require.Equal(t, tc.fast, fast)
			got, err := parseMessage([]byte(tc.frame))
			require.NoError(t, err)
			if len(got.result) == 0 {
				got.result = nil
			}
			require.Equal(t, tc.want, *got)
		})
	}
}
