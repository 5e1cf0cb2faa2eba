package ahpclient_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/tests/ahpclient"
)

const termURI = "ahp-terminal:/t1"

func snapshot(t *testing.T, fromSeq uint64, content string) ahpclient.Snapshot {
	t.Helper()
	var s ahpclient.Snapshot
	raw := fmt.Sprintf(`{"resource":%q,"fromSeq":%d,"state":{"title":"bash","content":%s,"lifecycle":{"status":"running"},"claim":{"kind":"client","clientId":"c1"}}}`,
		termURI, fromSeq, content)
	require.NoError(t, json.Unmarshal([]byte(raw), &s))
	return s
}

func envelope(t *testing.T, channel string, seq uint64, action string) ahpclient.Envelope {
	t.Helper()
	var e ahpclient.Envelope
	raw := fmt.Sprintf(`{"channel":%q,"serverSeq":%d,"action":%s}`, channel, seq, action)
	require.NoError(t, json.Unmarshal([]byte(raw), &e))
	return e
}

func TestTerminalTextAppliesTheDataRule(t *testing.T) {
	tests := []struct {
		name    string
		content string
		actions []string
		want    string
		parts   int
	}{
		{
			name:    "data extends a trailing unclassified part",
			content: `[{"type":"unclassified","value":"$ "}]`,
			actions: []string{`{"type":"terminal/data","data":"ls"}`, `{"type":"terminal/data","data":"\r\n"}`},
			want:    "$ ls\r\n",
			parts:   1,
		},
		{
			name:    "data starts a part after a finished command",
			content: `[{"type":"command","commandId":"c1","commandLine":"ls","output":"a\r\n","timestamp":1,"isComplete":true}]`,
			actions: []string{`{"type":"terminal/data","data":"$ "}`},
			want:    "a\r\n$ ",
			parts:   2,
		},
		{
			name:    "running command collects output until it finishes",
			content: `[]`,
			actions: []string{
				`{"type":"terminal/commandExecuted","commandId":"c2","commandLine":"make","timestamp":5}`,
				`{"type":"terminal/data","data":"ok"}`,
				`{"type":"terminal/commandFinished","commandId":"c2","exitCode":0,"durationMs":3}`,
				`{"type":"terminal/data","data":"$ "}`,
			},
			want:  "ok$ ",
			parts: 2,
		},
		{
			name:    "cleared drops everything before it",
			content: `[{"type":"unclassified","value":"old"}]`,
			actions: []string{`{"type":"terminal/cleared"}`, `{"type":"terminal/data","data":"new"}`},
			want:    "new",
			parts:   1,
		},
		{
			name:    "input does not change the content",
			content: `[]`,
			actions: []string{`{"type":"terminal/input","data":"secret"}`},
			want:    "",
			parts:   0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			term, err := ahpclient.NewTerminal(snapshot(t, 10, tt.content))
			require.NoError(t, err)
			for i, a := range tt.actions {
				term.Apply(envelope(t, termURI, uint64(11+i), a))
			}
			require.Equal(t, tt.want, term.Text())
			require.Len(t, term.State().Content, tt.parts)
			require.Empty(t, term.Stale)
		})
	}
}

func TestTerminalSkipsStaleForeignAndRejectedEnvelopes(t *testing.T) {
	snap := snapshot(t, 20, `[{"type":"unclassified","value":"a"}]`)
	rejected := envelope(t, termURI, 21, `{"type":"terminal/data","data":"R"}`)
	reason := "no"
	rejected.RejectionReason = &reason
	envs := []ahpclient.Envelope{
		envelope(t, termURI, 19, `{"type":"terminal/data","data":"X"}`), // already in the snapshot
		envelope(t, termURI, 21, `{"type":"terminal/data","data":"b"}`),
		envelope(t, "ahp-terminal:/other", 22, `{"type":"terminal/data","data":"Y"}`),
		rejected,
		envelope(t, termURI, 21, `{"type":"terminal/data","data":"b"}`), // doubled
		envelope(t, termURI, 23, `{"type":"terminal/data","data":"c"}`),
	}

	text, err := ahpclient.TerminalText(snap, envs)
	require.NoError(t, err)
	require.Equal(t, "abc", text)

	term, err := ahpclient.NewTerminal(snap)
	require.NoError(t, err)
	term.Apply(envs...)
	require.Equal(t, uint64(23), term.LastSeq)
	require.Len(t, term.Stale, 2)
	require.Equal(t, uint64(19), term.Stale[0].ServerSeq)
	require.Equal(t, uint64(21), term.Stale[1].ServerSeq)
}

func TestTerminalTracksStateFields(t *testing.T) {
	term, err := ahpclient.NewTerminal(snapshot(t, 1, `[]`))
	require.NoError(t, err)
	term.Apply(
		envelope(t, termURI, 2, `{"type":"terminal/resized","cols":120,"rows":30}`),
		envelope(t, termURI, 3, `{"type":"terminal/titleChanged","title":"vim"}`),
		envelope(t, termURI, 4, `{"type":"terminal/cwdChanged","cwd":"file:///tmp"}`),
		envelope(t, termURI, 5, `{"type":"terminal/claimed","claim":{"kind":"client","clientId":"c2"}}`),
		envelope(t, termURI, 6, `{"type":"terminal/commandDetectionAvailable"}`),
		envelope(t, termURI, 7, `{"type":"terminal/exited"}`),
	)
	st := term.State()
	require.Equal(t, 120, *st.Cols)
	require.Equal(t, 30, *st.Rows)
	require.Equal(t, "vim", st.Title)
	require.Equal(t, "file:///tmp", *st.Cwd)
	require.Equal(t, ahpclient.ClientClaim("c2"), st.Claim)
	require.True(t, *st.SupportsCommandDetection)
	require.Equal(t, &ahpclient.Lifecycle{Status: "exited"}, st.Lifecycle)
	require.Nil(t, st.ExitCode)
}

func TestLooseDecodingKeepsWhatItCan(t *testing.T) {
	var e ahpclient.Envelope
	raw := `{"channel":"ahp-terminal:/t1","serverSeq":"seven","action":{"type":"terminal/data","data":"hi"},"x-new":{"a":1}}`
	require.NoError(t, json.Unmarshal([]byte(raw), &e))
	require.Equal(t, "ahp-terminal:/t1", e.Channel)
	require.Equal(t, "terminal/data", e.Type)
	require.Zero(t, e.ServerSeq)
	require.JSONEq(t, raw, string(e.Raw))
	require.True(t, ahpclient.HasField(e.Raw, "x-new"))
}
