package shellmarks

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/domain/terminal"
)

func ms(n int64) *int64 { return &n }

// step is one thing that happens to a tracker: typed input or a mark at a time.
type step struct {
	input string
	mark  *Mark
	at    int64
}

func typed(s string) step            { return step{input: s} }
func mark(m Mark, at int64) step     { return step{mark: &m, at: at} }
func kind(k Kind, at int64) step     { return mark(Mark{Kind: k}, at) }
func finished(c int, at int64) step  { return mark(Mark{Kind: CommandFinished, ExitCode: code(c)}, at) }
func cwd(path string, at int64) step { return mark(Mark{Kind: Cwd, Cwd: path}, at) }

func run(tr *Tracker, steps ...step) []terminal.Action {
	var acts []terminal.Action
	for _, s := range steps {
		if s.mark == nil {
			tr.Input([]byte(s.input))
			continue
		}
		acts = tr.Mark(*s.mark, time.UnixMilli(s.at), acts)
	}
	return acts
}

func TestTrackerTurnsABashSessionIntoCommandActions(t *testing.T) {
	tr := NewTracker("file:///home/dev", "")
	acts := run(tr,
		// The first prompt: bash reports D for "nothing ran" and its cwd.
		finished(0, 1000), cwd("/home/dev", 1000), kind(PromptStart, 1000), kind(PromptEnd, 1000),
		typed("cd /tmp\r"), kind(CommandStart, 2000), finished(0, 2005),
		cwd("/tmp", 2006), kind(PromptStart, 2006),
		typed("false\r"), kind(CommandStart, 3000), finished(1, 3250),
		cwd("/tmp", 3251), kind(PromptStart, 3251),
	)
	require.Equal(t, []terminal.Action{
		terminal.CommandDetectionAvailable{},
		terminal.CommandExecuted{CommandID: "cmd-1", CommandLine: "cd /tmp", Timestamp: 2000},
		terminal.CommandFinished{CommandID: "cmd-1", ExitCode: code(0), DurationMs: ms(5)},
		terminal.CwdChanged{CWD: "file:///tmp"},
		terminal.CommandExecuted{CommandID: "cmd-2", CommandLine: "false", Timestamp: 3000},
		terminal.CommandFinished{CommandID: "cmd-2", ExitCode: code(1), DurationMs: ms(250)},
	}, acts)
}

func TestTrackerAnnouncesDetectionOnceAtTheFirstMark(t *testing.T) {
	tr := NewTracker("", "")
	require.Equal(t, []terminal.Action{terminal.CommandDetectionAvailable{}}, run(tr, kind(PromptStart, 1)))
	require.Empty(t, run(tr, kind(PromptEnd, 2), kind(PromptStart, 3)))
}

func TestTrackerPrefersTheShellsCommandLine(t *testing.T) {
	tests := []struct {
		name, trackerNonce string
		e                  Mark
		want               string
	}{
		{"reported line wins over typed", "", Mark{Kind: CommandLine, CommandLine: "git log --oneline"}, "git log --oneline"},
		{"nonce required and matching", "n1", Mark{Kind: CommandLine, CommandLine: "make", Nonce: "n1"}, "make"},
		{"nonce required and wrong: typed line", "n1", Mark{Kind: CommandLine, CommandLine: "rm -rf /", Nonce: "n2"}, "gl"},
		{"nonce required and missing: typed line", "n1", Mark{Kind: CommandLine, CommandLine: "rm -rf /"}, "gl"},
		{"an empty reported line is still the shell's word", "", Mark{Kind: CommandLine}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := NewTracker("", tt.trackerNonce)
			acts := run(tr, kind(PromptStart, 1), typed("gl\r"), mark(tt.e, 2), kind(CommandStart, 3))
			require.Equal(t, terminal.CommandExecuted{CommandID: "cmd-1", CommandLine: tt.want, Timestamp: 3}, acts[len(acts)-1])
		})
	}
}

func TestTrackerForgetsAReportedLineAtTheNextPrompt(t *testing.T) {
	tr := NewTracker("", "")
	acts := run(tr,
		kind(PromptStart, 1), mark(Mark{Kind: CommandLine, CommandLine: "stale"}, 2),
		kind(PromptStart, 3), typed("fresh\r"), kind(CommandStart, 4),
	)
	require.Equal(t, terminal.CommandExecuted{CommandID: "cmd-1", CommandLine: "fresh", Timestamp: 4}, acts[len(acts)-1])
}

func TestTrackerReadsTheTypedLineBack(t *testing.T) {
	tests := []struct{ name, input, want string }{
		{"plain", "ls -la\r", "ls -la"},
		{"LF ends the line too", "ls\n", "ls"},
		{"CRLF is one Enter", "ls\r\n", "ls"},
		{"backspace", "lss\bx\x08\r", "ls"},
		{"DEL", "lsx\x7f\r", "ls"},
		{"DEL removes a whole multi-byte rune", "echo é\x7fe\r", "echo e"},
		{"ctrl-u kills the line", "rm -rf /\x15ls\r", "ls"},
		{"ctrl-w kills the last word", "git push --force\x17\r", "git push"},
		{"ctrl-w with trailing spaces", "git push   \x17\x17ls\r", "ls"},
		{"ctrl-c starts over", "sleep 100\x03ls\r", "ls"},
		{"arrow keys are skipped", "ls\x1b[D\x1b[C\x1bOA -l\r", "ls -l"},
		{"alt-key is skipped", "ls\x1bb -a\r", "ls -a"},
		{"bracketed paste keeps the text", "\x1b[200~echo hi\x1b[201~\r", "echo hi"},
		{"continuation lines join", "for i in 1 2\rdo echo $i\rdone\r", "for i in 1 2\ndo echo $i\ndone"},
		{"tab and other controls are dropped", "gi\tt\x04 st\r", "git st"},
		{"spaces trimmed", "   make   \r", "make"},
		{"no Enter seen: the line so far", "make", "make"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := NewTracker("", "")
			// Input split byte by byte must read the same as whole.
			for _, cut := range []bool{false, true} {
				steps := []step{kind(PromptStart, 1)}
				if cut {
					for i := range len(tt.input) {
						steps = append(steps, typed(tt.input[i:i+1]))
					}
				} else {
					steps = append(steps, typed(tt.input))
				}
				acts := run(tr, append(steps, kind(CommandStart, 2))...)
				exec := acts[len(acts)-1].(terminal.CommandExecuted)
				require.Equal(t, tt.want, exec.CommandLine, "byte by byte: %v", cut)
			}
		})
	}
}

func TestTrackerDropsWhatWasTypedIntoACommandAtTheNextPrompt(t *testing.T) {
	tr := NewTracker("", "")
	acts := run(tr,
		kind(PromptStart, 1), typed("read x\r"), kind(CommandStart, 2),
		typed("answer\r"), finished(0, 3),
		kind(PromptStart, 4), typed("pwd\r"), kind(CommandStart, 5),
	)
	require.Equal(t, terminal.CommandExecuted{CommandID: "cmd-2", CommandLine: "pwd", Timestamp: 5}, acts[len(acts)-1])
}

func TestTrackerFinishesOnlyAnOpenCommand(t *testing.T) {
	tr := NewTracker("", "")
	acts := run(tr, kind(PromptStart, 1), finished(130, 2), finished(0, 3))
	require.Equal(t, []terminal.Action{terminal.CommandDetectionAvailable{}}, acts)

	acts = run(tr, typed("x\r"), kind(CommandStart, 10), finished(0, 15), finished(0, 16))
	require.Equal(t, []terminal.Action{
		terminal.CommandExecuted{CommandID: "cmd-1", CommandLine: "x", Timestamp: 10},
		terminal.CommandFinished{CommandID: "cmd-1", ExitCode: code(0), DurationMs: ms(5)},
	}, acts)
}

func TestTrackerClosesACommandWhoseFinishNeverCame(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
		want  []terminal.Action
	}{
		{
			name:  "a new prompt",
			steps: []step{typed("a\r"), kind(CommandStart, 10), kind(PromptStart, 40)},
			want: []terminal.Action{
				terminal.CommandExecuted{CommandID: "cmd-1", CommandLine: "a", Timestamp: 10},
				terminal.CommandFinished{CommandID: "cmd-1", DurationMs: ms(30)},
			},
		},
		{
			name:  "a second start",
			steps: []step{typed("a\r"), kind(CommandStart, 10), typed("b\r"), kind(CommandStart, 20)},
			want: []terminal.Action{
				terminal.CommandExecuted{CommandID: "cmd-1", CommandLine: "a", Timestamp: 10},
				terminal.CommandFinished{CommandID: "cmd-1", DurationMs: ms(10)},
				terminal.CommandExecuted{CommandID: "cmd-2", CommandLine: "b", Timestamp: 20},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := NewTracker("", "")
			run(tr, kind(PromptStart, 0))
			require.Equal(t, tt.want, run(tr, tt.steps...))
		})
	}
}

func TestTrackerEndFinishesTheRunningCommandWithTheProcessCode(t *testing.T) {
	tr := NewTracker("", "")
	run(tr, kind(PromptStart, 0), typed("exit 3\r"), kind(CommandStart, 100))
	require.Equal(t, []terminal.Action{
		terminal.CommandFinished{CommandID: "cmd-1", ExitCode: code(3), DurationMs: ms(7)},
	}, tr.End(code(3), time.UnixMilli(107), nil))
	require.Empty(t, tr.End(code(3), time.UnixMilli(108), nil), "nothing left to finish")
}

func TestTrackerNeverReportsANegativeDuration(t *testing.T) {
	tr := NewTracker("", "")
	acts := run(tr, kind(PromptStart, 0), kind(CommandStart, 100), finished(0, 90))
	require.Equal(t, terminal.CommandFinished{CommandID: "cmd-1", ExitCode: code(0), DurationMs: ms(0)}, acts[len(acts)-1])
}

func TestTrackerReportsTheDirectoryOnlyWhenItChanges(t *testing.T) {
	tr := NewTracker("file:///home/dev", "")
	acts := run(tr,
		cwd("/home/dev", 1), cwd("/tmp/a b", 2), cwd("/tmp/a b", 3), cwd("/tmp/dír", 4), cwd("/home/dev", 5),
	)
	require.Equal(t, []terminal.Action{
		terminal.CommandDetectionAvailable{},
		terminal.CwdChanged{CWD: "file:///tmp/a%20b"},
		terminal.CwdChanged{CWD: "file:///tmp/d%C3%ADr"},
		terminal.CwdChanged{CWD: "file:///home/dev"},
	}, acts)
}

func TestTrackerBoundsAHugeTypedLine(t *testing.T) {
	tr := NewTracker("", "")
	big := make([]byte, 3*maxLine)
	for i := range big {
		big[i] = 'x'
	}
	tr.Input(big)
	tr.Input([]byte("\r"))
	tr.Input(big)
	tr.Input([]byte("\r"))
	require.LessOrEqual(t, len(tr.line.done), maxLine)
	require.LessOrEqual(t, len(tr.line.cur), maxLine)
}
