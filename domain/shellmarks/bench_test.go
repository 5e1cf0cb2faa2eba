package shellmarks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/domain/terminal"
)

// typicalOutput is n bytes of what a terminal mostly prints: listings, build
// and log lines, some of them UTF-8, and no escape sequences.
func typicalOutput(n int) []byte {
	lines := []string{
		"-rw-r--r--  1 dev  staff   14237 Mar  3 10:12 main.go\r\n",
		"drwxr-xr-x 12 dev  staff     384 Mar  3 10:12 internal\r\n",
		"ok  \tgithub.com/shellgate/shellgate/domain/terminal\t0.412s\r\n",
		"2026-03-03T10:12:44.123Z INFO  server listening addr=127.0.0.1:9187 pid=4242\r\n",
		"main.go:42:13: undefined: foo (typecheck) — see docs ✓\r\n",
		"    at Object.<anonymous> (/home/dev/app/src/index.js:17:9)\r\n",
		"Résumé: 3 fichiers modifiés, 128 insertions(+), 12 suppressions(-)\r\n",
	}
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%6d  %s", i, lines[i%len(lines)])
	}
	return b.Bytes()[:n]
}

// colouredOutput is n bytes of output with SGR colour escapes every line,
// the other common case: escapes that are not marks.
func colouredOutput(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "\x1b[32m%6d\x1b[0m \x1b[1mPASS\x1b[0m src/module_%d.test.ts (%d ms)\r\n", i, i%97, i%500)
	}
	return b.Bytes()[:n]
}

func TestBenchmarkInputsCarryNoMarks(t *testing.T) {
	for _, in := range [][]byte{typicalOutput(1 << 20), colouredOutput(1 << 20)} {
		var r Reader
		out, marks := r.Feed(in, nil, nil)
		require.Equal(t, in, r.Flush(out))
		require.Empty(t, marks)
	}
}

// The pair to compare: BenchmarkPlainCopy is the least any output path does
// with a read (copy it out), BenchmarkFeed does that through a Reader.
// Both run over 1 MiB, as one read and as pty-sized 4 KiB reads.

func BenchmarkPlainCopy(b *testing.B) {
	for _, size := range []int{1 << 20, 4 << 10} {
		b.Run(fmt.Sprintf("read=%d", size), func(b *testing.B) {
			in := typicalOutput(1 << 20)
			out := make([]byte, 0, len(in))
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				out = out[:0]
				for p := in; len(p) > 0; p = p[min(size, len(p)):] {
					out = append(out, p[:min(size, len(p))]...)
				}
			}
		})
	}
}

func BenchmarkFeed(b *testing.B) {
	inputs := []struct {
		name string
		in   []byte
	}{
		{"typical", typicalOutput(1 << 20)},
		{"coloured", colouredOutput(1 << 20)},
	}
	for _, input := range inputs {
		for _, size := range []int{1 << 20, 4 << 10} {
			b.Run(fmt.Sprintf("%s/read=%d", input.name, size), func(b *testing.B) {
				var r Reader
				out := make([]byte, 0, len(input.in))
				marks := make([]Mark, 0, 8)
				b.SetBytes(int64(len(input.in)))
				for b.Loop() {
					out, marks = out[:0], marks[:0]
					for p := input.in; len(p) > 0; p = p[min(size, len(p)):] {
						out, marks = r.Feed(p[:min(size, len(p))], out, marks)
					}
				}
			})
		}
	}
}

// BenchmarkFeedOverCopy times the two side by side, iteration by iteration
// and in alternating order, so a machine shared with other work skews both
// alike; it reports Feed's time as a multiple of the plain copy's (1.05 =
// 5% more).
func BenchmarkFeedOverCopy(b *testing.B) {
	for _, size := range []int{1 << 20, 4 << 10} {
		b.Run(fmt.Sprintf("read=%d", size), func(b *testing.B) {
			in := typicalOutput(1 << 20)
			out := make([]byte, 0, len(in))
			marks := make([]Mark, 0, 8)
			var r Reader
			plain := func() {
				out = out[:0]
				for p := in; len(p) > 0; p = p[min(size, len(p)):] {
					out = append(out, p[:min(size, len(p))]...)
				}
			}
			feed := func() {
				out, marks = out[:0], marks[:0]
				for p := in; len(p) > 0; p = p[min(size, len(p)):] {
					out, marks = r.Feed(p[:min(size, len(p))], out, marks)
				}
			}
			var copyT, feedT time.Duration
			odd := false
			for b.Loop() {
				first, second, ft, st := plain, feed, &copyT, &feedT
				if odd {
					first, second, ft, st = feed, plain, &feedT, &copyT
				}
				odd = !odd
				t0 := time.Now()
				first()
				t1 := time.Now()
				second()
				*ft += t1.Sub(t0)
				*st += time.Since(t1)
			}
			b.ReportMetric(float64(copyT.Nanoseconds())/float64(b.N), "copy-ns/op")
			b.ReportMetric(float64(feedT.Nanoseconds())/float64(b.N), "feed-ns/op")
			b.ReportMetric(float64(feedT)/float64(copyT), "feed/copy")
		})
	}
}

// BenchmarkOutputPathWithFeed puts Feed's cost beside the rest of what a pty
// read goes through before it is sent — UTF-8 decoding into a string and
// JSON encoding of the terminal/data action — over 1 MiB in 4 KiB reads, and
// reports the path with Feed as a multiple of the path without it.
func BenchmarkOutputPathWithFeed(b *testing.B) {
	const size = 4 << 10
	in := typicalOutput(1 << 20)
	clean := make([]byte, 0, size)
	marks := make([]Mark, 0, 8)
	var enc bytes.Buffer
	var r Reader
	var dec terminal.Decoder
	send := func(p []byte) {
		enc.Reset()
		_ = json.NewEncoder(&enc).Encode(struct {
			Type string `json:"type"`
			Data string `json:"data"`
		}{terminal.TypeData, dec.Decode(p)})
	}
	without := func() {
		for p := in; len(p) > 0; p = p[min(size, len(p)):] {
			send(p[:min(size, len(p))])
		}
	}
	with := func() {
		for p := in; len(p) > 0; p = p[min(size, len(p)):] {
			clean, marks = r.Feed(p[:min(size, len(p))], clean[:0], marks[:0])
			send(clean)
		}
	}
	var withoutT, withT time.Duration
	odd := false
	for b.Loop() {
		first, second, ft, st := without, with, &withoutT, &withT
		if odd {
			first, second, ft, st = with, without, &withT, &withoutT
		}
		odd = !odd
		t0 := time.Now()
		first()
		t1 := time.Now()
		second()
		*ft += t1.Sub(t0)
		*st += time.Since(t1)
	}
	b.ReportMetric(float64(withoutT.Nanoseconds())/float64(b.N), "path-ns/op")
	b.ReportMetric(float64(withT.Nanoseconds())/float64(b.N), "path+feed-ns/op")
	b.ReportMetric(float64(withT)/float64(withoutT), "with/without")
}

// FuzzReaderIgnoresHowReadsAreCut checks that any stream cleans the same
// whether read whole, byte by byte or cut in two, and that the held bytes stay
// bounded.
func FuzzReaderIgnoresHowReadsAreCut(f *testing.F) {
	for _, s := range []string{
		"\x1b]133;A\a$ ls\r\n\x1b]133;C\a\x1b]133;D;0\x1b\\",
		"\x1b]633;E;a\\x3bb;n\a\x1b]7;file://h/tmp/a%20b\a",
		"\x1b]0;title\a\x1b[1m\x1b]1337;x\a\x1b]133;\x1b]7;\n",
	} {
		f.Add(s, uint16(3))
	}
	f.Fuzz(func(t *testing.T, s string, cut uint16) {
		var whole Reader
		wantOut, wantMarks := feedChunks(&whole, s)

		i := int(cut) % (len(s) + 1)
		var two Reader
		out, marks := feedChunks(&two, s[:i], s[i:])
		require.Equal(t, wantOut, out)
		require.Equal(t, wantMarks, marks)

		var bytewise Reader
		var bout []byte
		var bmarks []Mark
		for j := range len(s) {
			bout, bmarks = bytewise.Feed([]byte{s[j]}, bout, bmarks)
			require.LessOrEqual(t, bytewise.Buffered(), MaxSequence+1)
		}
		bout = bytewise.Flush(bout)
		require.Equal(t, wantOut, string(bout))
		require.Equal(t, wantMarks, bmarks)
		require.LessOrEqual(t, len(wantOut), len(s), "marks only ever take bytes away")
	})
}
