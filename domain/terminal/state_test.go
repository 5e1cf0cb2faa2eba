package terminal_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/domain/terminal"
)

func intp(v int) *int     { return &v }
func i64p(v int64) *int64 { return &v }
func unclassified(s string) terminal.Part {
	return terminal.Part{Kind: terminal.PartUnclassified, Text: s}
}

func command(id, line, out string, done bool, code *int, dur *int64) terminal.Part {
	return terminal.Part{Kind: terminal.PartCommand, Text: out, Command: &terminal.CommandInfo{
		ID: id, Line: line, Timestamp: 1000, Complete: done, ExitCode: code, DurationMs: dur,
	}}
}

func TestReducerAppliesEveryTerminalAction(t *testing.T) {
	tests := []struct {
		name    string
		actions []terminal.Action
		check   func(t *testing.T, s terminal.Snapshot)
		changed bool // whether the last action reports a change
	}{
		{
			name:    "data into empty content makes one unclassified part",
			actions: []terminal.Action{terminal.Data{Data: "hi\n"}},
			check: func(t *testing.T, s terminal.Snapshot) {
				require.Equal(t, []terminal.Part{unclassified("hi\n")}, s.Content)
			},
			changed: true,
		},
		{
			name:    "data appends to a trailing unclassified part",
			actions: []terminal.Action{terminal.Data{Data: "a"}, terminal.Data{Data: "b"}},
			check: func(t *testing.T, s terminal.Snapshot) {
				require.Equal(t, []terminal.Part{unclassified("ab")}, s.Content)
			},
			changed: true,
		},
		{
			name: "data appends to a running command part",
			actions: []terminal.Action{
				terminal.Data{Data: "$ "},
				terminal.CommandExecuted{CommandID: "c1", CommandLine: "ls", Timestamp: 1000},
				terminal.Data{Data: "a.txt\n"},
			},
			check: func(t *testing.T, s terminal.Snapshot) {
				require.Equal(t, []terminal.Part{unclassified("$ "), command("c1", "ls", "a.txt\n", false, nil, nil)}, s.Content)
				require.True(t, s.SupportsCommandDetection)
			},
			changed: true,
		},
		{
			name: "data after a finished command starts a new unclassified part",
			actions: []terminal.Action{
				terminal.CommandExecuted{CommandID: "c1", CommandLine: "false", Timestamp: 1000},
				terminal.CommandFinished{CommandID: "c1", ExitCode: intp(1), DurationMs: i64p(5)},
				terminal.Data{Data: "$ "},
			},
			check: func(t *testing.T, s terminal.Snapshot) {
				require.Equal(t, []terminal.Part{command("c1", "false", "", true, intp(1), i64p(5)), unclassified("$ ")}, s.Content)
			},
			changed: true,
		},
		{
			name: "commandFinished for an unknown id changes nothing",
			actions: []terminal.Action{
				terminal.CommandExecuted{CommandID: "c1", CommandLine: "sleep 1", Timestamp: 1000},
				terminal.CommandFinished{CommandID: "nope", ExitCode: intp(0)},
			},
			check: func(t *testing.T, s terminal.Snapshot) {
				require.Equal(t, []terminal.Part{command("c1", "sleep 1", "", false, nil, nil)}, s.Content)
			},
			changed: false,
		},
		{
			name:    "input changes no state",
			actions: []terminal.Action{terminal.Input{Data: "ls\n"}},
			check: func(t *testing.T, s terminal.Snapshot) {
				require.Empty(t, s.Content)
				require.NotNil(t, s.Content)
			},
			changed: false,
		},
		{
			name:    "resized sets the size",
			actions: []terminal.Action{terminal.Resized{Cols: 132, Rows: 50}},
			check: func(t *testing.T, s terminal.Snapshot) {
				require.Equal(t, 132, s.Cols)
				require.Equal(t, 50, s.Rows)
			},
			changed: true,
		},
		{
			name:    "claimed moves the claim",
			actions: []terminal.Action{terminal.Claimed{Claim: terminal.Claim{Kind: terminal.ClaimSession, Session: "s", Chat: "c"}}},
			check: func(t *testing.T, s terminal.Snapshot) {
				require.Equal(t, terminal.ClaimSession, s.Claim.Kind)
				require.Equal(t, "s", s.Claim.Session)
			},
			changed: true,
		},
		{
			name:    "the same title again is no change",
			actions: []terminal.Action{terminal.TitleChanged{Title: "sh"}},
			check: func(t *testing.T, s terminal.Snapshot) {
				require.Equal(t, "sh", s.Title)
			},
			changed: false,
		},
		{
			name:    "a new title is set",
			actions: []terminal.Action{terminal.TitleChanged{Title: "build"}},
			check: func(t *testing.T, s terminal.Snapshot) {
				require.Equal(t, "build", s.Title)
			},
			changed: true,
		},
		{
			name:    "cwdChanged sets the directory",
			actions: []terminal.Action{terminal.CwdChanged{CWD: "file:///tmp"}},
			check: func(t *testing.T, s terminal.Snapshot) {
				require.Equal(t, "file:///tmp", s.CWD)
			},
			changed: true,
		},
		{
			name:    "exited with a code",
			actions: []terminal.Action{terminal.Exited{ExitCode: intp(3)}},
			check: func(t *testing.T, s terminal.Snapshot) {
				require.True(t, s.Lifecycle.IsExited())
				require.Equal(t, intp(3), s.Lifecycle.ExitCode)
			},
			changed: true,
		},
		{
			name:    "exited without a code",
			actions: []terminal.Action{terminal.Exited{}},
			check: func(t *testing.T, s terminal.Snapshot) {
				require.Equal(t, terminal.StatusExited, s.Lifecycle.Status)
				require.Nil(t, s.Lifecycle.ExitCode)
			},
			changed: true,
		},
		{
			name: "cleared drops the content and keeps size, title and claim",
			actions: []terminal.Action{
				terminal.Resized{Cols: 100, Rows: 40},
				terminal.Data{Data: "secret\n"},
				terminal.Cleared{},
			},
			check: func(t *testing.T, s terminal.Snapshot) {
				require.Equal(t, []terminal.Part{}, s.Content)
				require.Equal(t, 100, s.Cols)
				require.Equal(t, 40, s.Rows)
				require.Equal(t, "sh", s.Title)
				require.Equal(t, terminal.ClientHolds("c1"), s.Claim)
			},
			changed: true,
		},
		{
			name:    "commandDetectionAvailable sets the flag once",
			actions: []terminal.Action{terminal.CommandDetectionAvailable{}, terminal.CommandDetectionAvailable{}},
			check: func(t *testing.T, s terminal.Snapshot) {
				require.True(t, s.SupportsCommandDetection)
			},
			changed: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := terminal.New(terminal.Options{Title: "sh", Claim: terminal.ClientHolds("c1")})
			var changed bool
			for _, a := range tt.actions {
				changed = s.Apply(a)
			}
			require.Equal(t, tt.changed, changed)
			tt.check(t, s.Snapshot())
		})
	}
}

func TestNewTerminalDefaultsTo80x24AndRunning(t *testing.T) {
	s := terminal.New(terminal.Options{Title: "sh"}).Snapshot()
	require.Equal(t, 80, s.Cols)
	require.Equal(t, 24, s.Rows)
	require.Equal(t, terminal.StatusRunning, s.Lifecycle.Status)
	require.Equal(t, []terminal.Part{}, s.Content)
}

func TestSnapshotSharesNothingWithTheState(t *testing.T) {
	s := terminal.New(terminal.Options{Title: "sh"})
	s.Apply(terminal.CommandExecuted{CommandID: "c1", CommandLine: "x"})
	snap := s.Snapshot()
	s.Apply(terminal.Data{Data: "more"})
	s.Apply(terminal.CommandFinished{CommandID: "c1", ExitCode: intp(0)})
	require.Equal(t, "", snap.Content[0].Text)
	require.False(t, snap.Content[0].Command.Complete)
}

func TestClaimValidation(t *testing.T) {
	tests := []struct {
		name  string
		claim terminal.Claim
		ok    bool
	}{
		{"client", terminal.ClientHolds("c1"), true},
		{"client without id", terminal.Claim{Kind: terminal.ClaimClient}, false},
		{"session with chat", terminal.Claim{Kind: terminal.ClaimSession, Session: "s", Chat: "c", TurnID: "t", ToolCallID: "x"}, true},
		{"session without chat", terminal.Claim{Kind: terminal.ClaimSession, Session: "s"}, false},
		{"unknown kind", terminal.Claim{Kind: "user", ClientID: "c"}, false},
		{"empty", terminal.Claim{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.claim.Validate()
			if tt.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, terminal.ErrNotAClaim)
			}
		})
	}
}

func TestExitStatusNamesTheSignal(t *testing.T) {
	require.Equal(t, "exit 3", terminal.ExitedWith(3).String())
	require.Equal(t, "exit 128 (SIGINT)", terminal.KilledBy("SIGINT").String())
	require.Equal(t, 127, terminal.CouldNotStart().Code)
}
