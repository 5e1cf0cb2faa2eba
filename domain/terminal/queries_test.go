package terminal_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/domain/terminal"
)

// queries are sequences a terminal answers; each must vanish.
var queries = []struct{ name, seq string }{
	{"ENQ", "\x05"},
	{"DECID", "\x1bZ"},
	{"DECID C1", "\u009a"},
	{"DA1", "\x1b[c"},
	{"DA1 0", "\x1b[0c"},
	{"DA1 C1", "\u009bc"},
	{"DA2", "\x1b[>c"},
	{"DA2 0", "\x1b[>0c"},
	{"DA3", "\x1b[=c"},
	{"DSR status", "\x1b[5n"},
	{"CPR", "\x1b[6n"},
	{"DECXCPR", "\x1b[?6n"},
	{"colour scheme", "\x1b[?996n"},
	{"DECRQM ANSI", "\x1b[4$p"},
	{"DECRQM DEC", "\x1b[?2004$p"},
	{"XTVERSION", "\x1b[>0q"},
	{"XTVERSION bare", "\x1b[>q"},
	{"window state", "\x1b[11t"},
	{"window position", "\x1b[13;2t"},
	{"text area pixels", "\x1b[14t"},
	{"cell size", "\x1b[16t"},
	{"text area chars", "\x1b[18t"},
	{"screen chars", "\x1b[19t"},
	{"icon label", "\x1b[20t"},
	{"title", "\x1b[21t"},
	{"XTSMGRAPHICS", "\x1b[?1;1;0S"},
	{"XTQMODKEYS", "\x1b[?4m"},
	{"DECREQTPARM", "\x1b[0x"},
	{"DECRQCRA", "\x1b[1;1;1;1;24;80*y"},
	{"DECRQTSR", "\x1b[1$u"},
	{"DECRQPSR", "\x1b[2$w"},
	{"DECRQUPSS", "\x1b[&u"},
	{"DECRQLP", "\x1b[1'|"},
	{"DECRQDE", "\x1b[\"v"},
	{"DECRQKT", "\x1b[1,w"},
	{"DECRQPKFM", "\x1b[+x"},
	{"XTREPORTCOLORS", "\x1b[#R"},
	{"kitty keyboard", "\x1b[?u"},
	{"DECRQSS SGR ST", "\x1bP$qm\x1b\\"},
	{"DECRQSS scroll region C1", "\u0090$qr\u009c"},
	{"XTGETTCAP", "\x1bP+q544e\x1b\\"},
	{"tmux passthrough", "\x1bPtmux;\x1b\x1b[c\x1b\\"},
	{"OSC 4 BEL", "\x1b]4;1;?\a"},
	{"OSC 4 among sets", "\x1b]4;1;rgb:00/00/00;2;?\x1b\\"},
	{"OSC 5", "\x1b]5;0;?\a"},
	{"OSC 10", "\x1b]10;?\a"},
	{"OSC 11", "\x1b]11;?\x1b\\"},
	{"OSC 11 C1", "\u009d11;?\u009c"},
	{"OSC 12", "\x1b]12;?\a"},
	{"OSC 10 and 11", "\x1b]10;?;?\a"},
	{"OSC 19", "\x1b]19;?\a"},
	{"OSC 50", "\x1b]50;?\a"},
	{"OSC 52 read", "\x1b]52;c;?\a"},
	{"XTQALLOWED", "\x1b]60\a"},
	{"XTQDISALLOWED", "\x1b]61\x1b\\"},
	{"iTerm2 cell size", "\x1b]1337;ReportCellSize\a"},
	{"APC kitty graphics query", "\x1b_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\x1b\\"},
	{"PM", "\x1b^private\x1b\\"},
	{"SOS C1", "\u0098anything\u009c"},
}

// kept are sequences that change what is shown; each must stay whole.
var kept = []struct{ name, seq string }{
	{"SGR", "\x1b[1;31;48;5;200m"},
	{"SGR colon", "\x1b[38:2::10:20:30m"},
	{"cursor position", "\x1b[12;40H"},
	{"scroll region", "\x1b[2;20r"},
	{"alternate screen", "\x1b[?1049h"},
	{"bracketed paste", "\x1b[?2004h"},
	{"mouse", "\x1b[?1000;1006h"},
	{"cursor style", "\x1b[2 q"},
	{"XTMODKEYS set", "\x1b[>4;1m"},
	{"XTMODKEYS disable", "\x1b[>4n"},
	{"window resize", "\x1b[8;24;80t"},
	{"title push", "\x1b[22;0t"},
	{"kitty keyboard push", "\x1b[>1u"},
	{"C1 CSI SGR", "\u009b0m"},
	{"charset", "\x1b(B"},
	{"DECALN", "\x1b#8"},
	{"save cursor", "\x1b7"},
	{"keypad", "\x1b="},
	{"index", "\x1bD"},
	{"OSC 0 title BEL", "\x1b]0;vim — main.go\a"},
	{"OSC 2 title ST", "\x1b]2;build\x1b\\"},
	{"OSC 8 link", "\x1b]8;;https://example.com/\x1b\\link\x1b]8;;\x1b\\"},
	{"OSC 4 set", "\x1b]4;1;rgb:ff/00/00\a"},
	{"OSC 11 set", "\x1b]11;#000000\a"},
	{"OSC 52 write", "\x1b]52;c;aGVsbG8=\a"},
	{"OSC 104 reset", "\x1b]104\a"},
	{"DCS sixel", "\x1bPq#0;2;0;0;0#0~~@@\x1b\\"},
	{"DCS synchronized update", "\x1bP=1s\x1b\\"},
}

// filterSplits feeds s cut into reads at every cut in cuts.
func filterSplits(s string, cuts ...int) string {
	var f terminal.QueryFilter
	var out strings.Builder
	prev := 0
	for _, c := range cuts {
		out.WriteString(f.FilterString(s[prev:c]))
		prev = c
	}
	out.WriteString(f.FilterString(s[prev:]))
	out.WriteString(f.Flush())
	return out.String()
}

func TestQueryFilterRemovesEveryQuerySplitAnywhere(t *testing.T) {
	for _, q := range queries {
		t.Run(q.name, func(t *testing.T) {
			in := "before\r\n" + q.seq + "after"
			for cut := 0; cut <= len(in); cut++ {
				require.Equal(t, "before\r\nafter", filterSplits(in, cut), "cut at byte %d", cut)
			}
			// One byte a read.
			cuts := make([]int, 0, len(in))
			for i := 1; i < len(in); i++ {
				cuts = append(cuts, i)
			}
			require.Equal(t, "before\r\nafter", filterSplits(in, cuts...))
		})
	}
}

func TestQueryFilterKeepsWhatIsShownSplitAnywhere(t *testing.T) {
	for _, k := range kept {
		t.Run(k.name, func(t *testing.T) {
			in := "a" + k.seq + "b"
			for cut := 0; cut <= len(in); cut++ {
				require.Equal(t, in, filterSplits(in, cut), "cut at byte %d", cut)
			}
		})
	}
}

func TestQueryFilterPassesPlainTextWithoutCopying(t *testing.T) {
	var f terminal.QueryFilter
	s := "plain text, ünïcode, and \x1b-free\r\n"
	require.Equal(t, s, f.FilterString(s))
}

func TestQueryFilterKeepsControlsInsideASequence(t *testing.T) {
	// A terminal executes C0 controls where they appear, also inside a
	// control sequence, and then reads the sequence on.
	require.Equal(t, "a\nb", filterSplits("a\x1b[6\nnb"))
	require.Equal(t, "a\n\x1b[1mb", filterSplits("a\x1b[1\nmb"))
}

func TestQueryFilterDropsCancelledAndCutSequences(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"CAN cancels a control sequence", "a\x1b[6\x18nb", "a\x18nb"},
		{"SUB cancels an OSC", "a\x1b]11;?\x1ab", "a\x1ab"},
		{"ESC cuts a control sequence short", "a\x1b[1\x1b[6nb", "ab"},
		{"ESC ESC", "a\x1b\x1b[cb", "ab"},
		{"C1 cuts an escape", "a\x1b\u009b6nb", "ab"},
		{"unfinished at the end", "a\x1b]11;?", "a"},
		{"unfinished CSI at the end", "a\x1b[6", "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, filterSplits(tt.in))
		})
	}
}

func TestQueryFilterEndsAStringWhereTheTerminalEndsIt(t *testing.T) {
	// A title cut short by ESC is given its own ST: otherwise the query's
	// tail after it would complete an OSC 11 query for whoever replays it.
	got := filterSplits("\x1b]11;\x1b[6n?\a")
	require.Equal(t, "\x1b]11;\x1b\\?\a", got)
	require.Equal(t, got, filterSplits(got), "the result holds no query")
}

func TestQueryFilterDecidesAnOverlongStringFromItsStart(t *testing.T) {
	long := strings.Repeat("x", 3000)
	title := "\x1b]2;" + long + "\a"
	require.Equal(t, "a"+title+"b", filterSplits("a"+title+"b", 10, 1500))
	clip := "\x1b]52;c;" + long + "\a"
	require.Equal(t, "ab", filterSplits("a"+clip+"b", 10, 1500))
	// An overlong title cut short by ESC still ends before the next query.
	require.Equal(t, "a\x1b]2;"+long+"\x1b\\b", filterSplits("a\x1b]2;"+long+"\x1b[cb", 1200))
}

func TestQueryFilterDropsAnOverlongControlSequence(t *testing.T) {
	in := "a\x1b[" + strings.Repeat("1;", 400) + "cb"
	require.Equal(t, "ab", filterSplits(in, 100))
}

func TestQueryFilterHoldsACharacterSplitAcrossReads(t *testing.T) {
	// U+009B (C2 9B) split across reads is still a CSI.
	require.Equal(t, "ab", filterSplits("a\u009b6nb", 2))
	require.Equal(t, "aéb", filterSplits("aéb", 2))
}

func TestQueryFilterKeepsGarbageStableAcrossSplits(t *testing.T) {
	garbage := []string{
		"\x1b\x1b\x1b[[[\x9b\xc2\x9b6n\xff\xfe\x1b]]]\a\a\x1bP\x1b\\\\",
		"\x1b[?\x7f\x7f6\x7fn text \x1b]11;\x07?\x07 \x1b_\x1b\x1b\\ tail",
		"\xc2\x1b[c\xc2\x9d11;?\xc2\x9c\xc2",
		strings.Repeat("\x1b[", 300) + "c",
	}
	for i, g := range garbage {
		whole := filterSplits(g)
		for cut := 0; cut <= len(g); cut++ {
			require.Equal(t, whole, filterSplits(g, cut), "garbage %d cut at %d", i, cut)
		}
		require.Equal(t, whole, filterSplits(whole), "garbage %d: the result holds no query", i)
	}
}

// FuzzQueryFilter checks, for any output cut anywhere, that how the reads
// were cut changes nothing, and that what comes out holds no query: filtering
// it again takes nothing away.
func FuzzQueryFilter(f *testing.F) {
	for _, q := range queries {
		f.Add([]byte("x"+q.seq+"y"), uint16(3))
	}
	for _, k := range kept {
		f.Add([]byte(k.seq), uint16(2))
	}
	f.Add([]byte("\x1b]11;\x1b[6n?\a"), uint16(4))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		// The pump filters decoded text, which is valid UTF-8.
		var dec terminal.Decoder
		s := dec.Decode(data) + dec.Flush()
		c := int(cut) % (len(s) + 1)
		whole := filterSplits(s)
		require.Equal(t, whole, filterSplits(s, c), "cut at %d", c)
		require.Equal(t, whole, filterSplits(whole), "the result holds a query")
		kept, switches := screenSplits(s)
		_, cutSwitches := screenSplits(s, c)
		require.Equal(t, switches, cutSwitches, "the same switches, cut at %d", c)
		for _, sw := range switches {
			require.Contains(t, []byte{0x1b, 0xc2}, kept[sw.At], "a switch is at the start of a sequence")
		}
	})
}

// screenSplits feeds s cut into reads at cuts and returns what is kept and
// where it switches screens, as offsets into all that is kept.
func screenSplits(s string, cuts ...int) (string, []terminal.ScreenSwitch) {
	var f terminal.QueryFilter
	var kept strings.Builder
	var got []terminal.ScreenSwitch
	prev := 0
	for _, c := range append(cuts, len(s)) {
		text, sw := f.FilterScreens(s[prev:c])
		for _, one := range sw {
			got = append(got, terminal.ScreenSwitch{At: kept.Len() + one.At, Alt: one.Alt})
		}
		kept.WriteString(text)
		prev = c
	}
	return kept.String(), got
}

func TestQueryFilterFindsScreenSwitchesSplitAnywhere(t *testing.T) {
	tests := []struct {
		name, seq string
		switches  bool // whether seq switches screens
		alt       bool // and to which
	}{
		{"enter 1049", "\x1b[?1049h", true, true},
		{"enter 1047", "\x1b[?1047h", true, true},
		{"enter 47", "\x1b[?47h", true, true},
		{"enter, C1 CSI", "\u009b?1049h", true, true},
		{"enter among other modes", "\x1b[?1;1049;2004h", true, true},
		{"leave 1049", "\x1b[?1049l", true, false},
		{"leave 1047", "\x1b[?1047l", true, false},
		{"leave 47", "\x1b[?47l", true, false},
		{"RIS leaves", "\x1bc", true, false},
		{"ANSI mode 1049 is no switch", "\x1b[1049h", false, false},
		{"mode 10490", "\x1b[?10490h", false, false},
		{"mode 1048 saves the cursor only", "\x1b[?1048h", false, false},
		{"bracketed paste", "\x1b[?2004h", false, false},
		{"a query of mode 1049 is dropped", "\x1b[?1049$p", false, false},
		{"cancelled", "\x1b[?10\x1849h", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A query before the switch shifts where it lands in what is kept.
			in := "a\x1b[6n" + tt.seq + "b"
			for cut := 0; cut <= len(in); cut++ {
				kept, got := screenSplits(in, cut)
				if !tt.switches {
					require.Empty(t, got, "cut at byte %d", cut)
					continue
				}
				require.Equal(t, []terminal.ScreenSwitch{{At: 1, Alt: tt.alt}}, got, "cut at byte %d", cut)
				require.True(t, strings.HasPrefix(kept[1:], tt.seq), "the switch is at its sequence in %q", kept)
			}
		})
	}
}
