package shellmarks

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func code(n int) *int { return &n }

// feedChunks feeds input in the given pieces, accumulating the output so
// mark offsets are positions in the whole cleaned stream, then flushes.
func feedChunks(r *Reader, chunks ...string) (string, []Mark) {
	var out []byte
	var marks []Mark
	for _, c := range chunks {
		out, marks = r.Feed([]byte(c), out, marks)
	}
	out = r.Flush(out)
	return string(out), marks
}

// splits yields the ways every test input is cut: whole, in two at every
// byte, byte by byte, and in random pieces.
func splits(s string) [][]string {
	all := [][]string{{s}}
	for i := 0; i <= len(s); i++ {
		all = append(all, []string{s[:i], s[i:]})
	}
	bytewise := make([]string, len(s))
	for i := range len(s) {
		bytewise[i] = s[i : i+1]
	}
	all = append(all, bytewise)
	rng := rand.New(rand.NewPCG(1, uint64(len(s))))
	for range 20 {
		var pieces []string
		for rest := s; len(rest) > 0; {
			n := min(1+rng.IntN(7), len(rest))
			pieces = append(pieces, rest[:n])
			rest = rest[n:]
		}
		all = append(all, pieces)
	}
	return all
}

// requireStream checks that input, however it is cut, cleans to want with
// the wanted marks.
func requireStream(t *testing.T, input, want string, wantMarks []Mark) {
	t.Helper()
	for _, chunks := range splits(input) {
		var r Reader
		out, marks := feedChunks(&r, chunks...)
		require.Equal(t, want, out, "cut as %q", chunks)
		if len(wantMarks) == 0 {
			require.Empty(t, marks, "cut as %q", chunks)
		} else {
			require.Equal(t, wantMarks, marks, "cut as %q", chunks)
		}
		require.Zero(t, r.Buffered())
	}
}

func TestReaderRemovesEachMarkWhereverTheReadsSplitIt(t *testing.T) {
	tests := []struct {
		name string
		body string // between ESC ] and the terminator
		want Mark
	}{
		{"133 prompt start", "133;A", Mark{Kind: PromptStart}},
		{"133 prompt start with options", "133;A;aid=7;cl=m", Mark{Kind: PromptStart}},
		{"133 prompt end", "133;B", Mark{Kind: PromptEnd}},
		{"133 command start", "133;C", Mark{Kind: CommandStart}},
		{"133 finished without code", "133;D", Mark{Kind: CommandFinished}},
		{"133 finished with code", "133;D;0", Mark{Kind: CommandFinished, ExitCode: code(0)}},
		{"133 finished with failure", "133;D;130", Mark{Kind: CommandFinished, ExitCode: code(130)}},
		{"133 finished with code and options", "133;D;2;aid=7", Mark{Kind: CommandFinished, ExitCode: code(2)}},
		{"133 finished with unreadable code", "133;D;x", Mark{Kind: CommandFinished}},
		{"633 prompt start", "633;A", Mark{Kind: PromptStart}},
		{"633 prompt end", "633;B", Mark{Kind: PromptEnd}},
		{"633 command start", "633;C", Mark{Kind: CommandStart}},
		{"633 finished", "633;D", Mark{Kind: CommandFinished}},
		{"633 finished with code", "633;D;1", Mark{Kind: CommandFinished, ExitCode: code(1)}},
		{"633 command line", "633;E;ls -la", Mark{Kind: CommandLine, CommandLine: "ls -la"}},
		{"633 command line escaped", `633;E;echo\x20a\x3b\x3B\\b\x0aecho c`, Mark{Kind: CommandLine, CommandLine: "echo a;;\\b\necho c"}},
		{"633 command line with nonce", `633;E;make\x20test;f00d`, Mark{Kind: CommandLine, CommandLine: "make test", Nonce: "f00d"}},
		{"633 empty command line", "633;E", Mark{Kind: CommandLine}},
		{"633 command line keeps a stray backslash", `633;E;a\qb\x4`, Mark{Kind: CommandLine, CommandLine: `a\qb\x4`}},
		{"633 cwd path", "633;P;Cwd=/home/dev/src", Mark{Kind: Cwd, Cwd: "/home/dev/src"}},
		{"633 cwd escaped", `633;P;Cwd=/tmp/a\x20b\\c`, Mark{Kind: Cwd, Cwd: `/tmp/a b\c`}},
		{"633 cwd as uri", "633;P;Cwd=file:///srv/x%20y", Mark{Kind: Cwd, Cwd: "/srv/x y"}},
		{"osc 7", "7;file://box/home/dev", Mark{Kind: Cwd, Cwd: "/home/dev"}},
		{"osc 7 without host", "7;file:///var/log", Mark{Kind: Cwd, Cwd: "/var/log"}},
		{"osc 7 with spaces", "7;file://box/tmp/my%20dir", Mark{Kind: Cwd, Cwd: "/tmp/my dir"}},
		{"osc 7 non-ascii encoded", "7;file://box/tmp/d%C3%ADr/%E6%97%A5", Mark{Kind: Cwd, Cwd: "/tmp/dír/日"}},
		{"osc 7 non-ascii raw", "7;file://box/tmp/dír", Mark{Kind: Cwd, Cwd: "/tmp/dír"}},
		{"osc 7 keeps a stray percent", "7;file://box/tmp/100%/x%zz", Mark{Kind: Cwd, Cwd: "/tmp/100%/x%zz"}},
		{"osc 7 scheme in capitals", "7;FILE://box/", Mark{Kind: Cwd, Cwd: "/"}},
	}
	for _, tt := range tests {
		for _, term := range []struct{ name, bytes string }{{"BEL", "\a"}, {"ST", "\x1b\\"}} {
			t.Run(tt.name+" "+term.name, func(t *testing.T) {
				input := "before\x1b]" + tt.body + term.bytes + "after"
				want := tt.want
				want.Offset = len("before")
				requireStream(t, input, "beforeafter", []Mark{want})
			})
		}
	}
}

func TestReaderPassesEverythingElseThroughByteIdentical(t *testing.T) {
	tests := []struct{ name, input string }{
		{"plain text", "hello, world\r\n"},
		{"utf-8 text", "naïve 日本語 ✓\r\n"},
		{"csi colours", "\x1b[1;32mok\x1b[0m \x1b[2K\x1b[?2004h"},
		{"title with BEL", "\x1b]0;user@box: ~\a$ "},
		{"title with ST", "\x1b]2;vim main.go\x1b\\"},
		{"hyperlink", "\x1b]8;;http://x.test/\x1b\\link\x1b]8;;\x1b\\"},
		{"iterm 1337 is not 133", "\x1b]1337;SetMark\a"},
		{"osc 13 is not 133", "\x1b]13;x\a"},
		{"osc 77 is not 7", "\x1b]77;file:///tmp\a"},
		{"osc 6330 is not 633", "\x1b]6330;A\a"},
		{"133 with unknown letter", "\x1b]133;Z\a"},
		{"133 letter run on", "\x1b]133;AB\a"},
		{"133 empty", "\x1b]133;\a"},
		{"133 without separator", "\x1b]133\a"},
		{"633 other property", "\x1b]633;P;IsWindows=False\a"},
		{"633 other letter", "\x1b]633;F\a"},
		{"633 empty", "\x1b]633;\a"},
		{"633 E run on", "\x1b]633;Ex\a"},
		{"633 relative cwd", "\x1b]633;P;Cwd=src\a"},
		{"osc 7 without separator", "\x1b]7\a"},
		{"osc 7 not a file url", "\x1b]7;kitty-shell-cwd://box/tmp\a"},
		{"osc 7 relative", "\x1b]7;tmp/x\a"},
		{"osc 7 without path", "\x1b]7;file://box\a"},
		{"osc 7 with encoded nul", "\x1b]7;file:///tmp/%00\a"},
		{"unterminated at end of stream", "text\x1b]133;A"},
		{"unterminated mark cut by newline", "\x1b]133;A\r\nmore output\r\n"},
		{"mark cancelled by CAN", "\x1b]133;C\x18x"},
		{"mark cancelled by another escape", "\x1b]7;file:///tmp\x1b[0m"},
		{"lone ESC at end", "abc\x1b"},
		{"ESC ] at end", "abc\x1b]"},
		{"ESC ] 13 at end", "abc\x1b]13"},
		{"two ESCs", "\x1b\x1b[A"},
		{"ESC then backslash outside a string", "\x1b\\"},
		{"8-bit OSC is not ours", "\xc2\x9d133;A\a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireStream(t, tt.input, tt.input, nil)
		})
	}
}

func TestReaderOrdersMarksAmongOrdinaryEscapes(t *testing.T) {
	input := "\x1b]133;D;0\a\x1b]7;file://box/tmp\a\x1b]0;box:/tmp\a\x1b]133;A\a\x1b[1m$\x1b[0m \x1b]133;B\a" +
		"\x1b]633;E;ls\x1b\\\x1b]133;C\aa.txt\r\n\x1b]133;D;0\x1b\\"
	want := "\x1b]0;box:/tmp\a\x1b[1m$\x1b[0m a.txt\r\n"
	title := len("\x1b]0;box:/tmp\a")
	prompt := title + len("\x1b[1m$\x1b[0m ")
	requireStream(t, input, want, []Mark{
		{Kind: CommandFinished, ExitCode: code(0), Offset: 0},
		{Kind: Cwd, Cwd: "/tmp", Offset: 0},
		{Kind: PromptStart, Offset: title},
		{Kind: PromptEnd, Offset: prompt},
		{Kind: CommandLine, CommandLine: "ls", Offset: prompt},
		{Kind: CommandStart, Offset: prompt},
		{Kind: CommandFinished, ExitCode: code(0), Offset: prompt + len("a.txt\r\n")},
	})
}

func TestReaderRecoversAfterAMalformedSequence(t *testing.T) {
	tests := []struct {
		name, input, want string
		marks             []Mark
	}{
		{
			name:  "ESC cancels a mark and starts the next one",
			input: "\x1b]133;\x1b]133;A\a$ ",
			want:  "\x1b]133;$ ",
			marks: []Mark{{Kind: PromptStart, Offset: len("\x1b]133;")}},
		},
		{
			name:  "double ESC inside a mark",
			input: "\x1b]133;A\x1b\x1b]133;B\a",
			want:  "\x1b]133;A\x1b",
			marks: []Mark{{Kind: PromptEnd, Offset: len("\x1b]133;A\x1b")}},
		},
		{
			name:  "a title right before a mark",
			input: "\x1b]0;t\a\x1b]133;C\a",
			want:  "\x1b]0;t\a",
			marks: []Mark{{Kind: CommandStart, Offset: len("\x1b]0;t\a")}},
		},
		{
			name:  "newline cuts an unterminated mark, the next one still counts",
			input: "\x1b]7;file:///a\nx\x1b]133;A\a",
			want:  "\x1b]7;file:///a\nx",
			marks: []Mark{{Kind: PromptStart, Offset: len("\x1b]7;file:///a\nx")}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireStream(t, tt.input, tt.want, tt.marks)
		})
	}
}

func TestReaderPassesOversizedSequenceThroughWithBoundedMemory(t *testing.T) {
	long := "\x1b]7;file:///" + strings.Repeat("a", 3*MaxSequence) + "\a"
	input := long + "\x1b]133;A\aok"

	var r Reader
	var out []byte
	var marks []Mark
	for i := range len(input) {
		out, marks = r.Feed([]byte{input[i]}, out, marks)
		require.LessOrEqual(t, r.Buffered(), MaxSequence+1)
		require.LessOrEqual(t, cap(r.buf), 2*(MaxSequence+1), "held buffer grew past its bound")
	}
	out = r.Flush(out)
	require.Equal(t, long+"ok", string(out))
	require.Equal(t, []Mark{{Kind: PromptStart, Offset: len(long)}}, marks)

	// Whole, too: the same bytes, the same answer.
	requireStreamWhole(t, input, long+"ok", []Mark{{Kind: PromptStart, Offset: len(long)}})
}

func TestReaderAcceptsAMarkOfExactlyMaxSequence(t *testing.T) {
	prefix := "\x1b]633;E;"
	line := strings.Repeat("x", MaxSequence-len(prefix))
	requireStreamWhole(t, "a"+prefix+line+"\ab", "ab", []Mark{{Kind: CommandLine, CommandLine: line, Offset: 1}})
	requireStreamWhole(t, prefix+line+"y\a", prefix+line+"y\a", nil)
}

func requireStreamWhole(t *testing.T, input, want string, wantMarks []Mark) {
	t.Helper()
	var r Reader
	out, marks := feedChunks(&r, input)
	require.Equal(t, want, out)
	require.Equal(t, wantMarks, marks)
}

func TestReaderHoldsAnIncompleteMarkUntilItsEnd(t *testing.T) {
	var r Reader
	out, marks := r.Feed([]byte("ls\r\n\x1b]133;"), nil, nil)
	require.Equal(t, "ls\r\n", string(out))
	require.Empty(t, marks)
	require.Equal(t, len("\x1b]133;"), r.Buffered())

	out, marks = r.Feed([]byte("C\afile\r\n"), out[:0], marks[:0])
	require.Equal(t, "file\r\n", string(out))
	require.Equal(t, []Mark{{Kind: CommandStart, Offset: 0}}, marks)
	require.Zero(t, r.Buffered())
}

func TestReaderOffsetsCountFromTheOutSliceGiven(t *testing.T) {
	var r Reader
	out, marks := r.Feed([]byte("x\x1b]133;A\a"), []byte("earlier"), nil)
	require.Equal(t, "earlierx", string(out))
	require.Equal(t, []Mark{{Kind: PromptStart, Offset: len("earlierx")}}, marks)
}

func TestFileURIPercentEncodesAllButUnreservedAndSlash(t *testing.T) {
	tests := []struct{ path, want string }{
		{"/", "file:///"},
		{"/home/dev/project-1/src_2.x~", "file:///home/dev/project-1/src_2.x~"},
		{"/tmp/my dir", "file:///tmp/my%20dir"},
		{"/tmp/dír", "file:///tmp/d%C3%ADr"},
		{"/a?b#c%d", "file:///a%3Fb%23c%25d"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			require.Equal(t, tt.want, FileURI(tt.path))
			p, ok := parseFileURL(FileURI(tt.path))
			require.True(t, ok)
			require.Equal(t, tt.path, p, "round trip")
		})
	}
}

func TestKindStringNamesEachKind(t *testing.T) {
	require.Equal(t, "PromptStart", PromptStart.String())
	require.Equal(t, "Cwd", Cwd.String())
	require.Equal(t, "Kind(?)", Kind(0).String())
}
