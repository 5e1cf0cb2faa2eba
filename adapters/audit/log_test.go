package audit_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shellgate/shellgate/adapters/audit"
	"github.com/shellgate/shellgate/ports"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2025, 10, 4, 12, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func openLog(t *testing.T) (*audit.Log, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := audit.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, l.Close()) })
	return l, path
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, len(b) == 0 || b[len(b)-1] == '\n', "the file ends on a whole line")
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func executed() ports.AuditEvent {
	return ports.AuditEvent{
		Time:       time.Date(2025, 10, 4, 12, 0, 0, 123_000_000, time.FixedZone("CEST", 2*3600)),
		Event:      ports.AuditExecute,
		SessionID:  "s1",
		AgentID:    "chat_agent_1",
		AgentRole:  "chat_agent",
		ApprovalID: "ap1",
		Command:    "mkdir /tmp/x && ls 2>&1 | grep '<a>'",
		Risk:       "moderate",
		Status:     "success",
		ApprovedBy: "user_123",
		Result:     &ports.AuditResult{ReturnCode: 0, ExecutionTime: 123 * time.Millisecond},
		Reasons:    []string{"Moderate-risk command: mkdir"},
		Detail:     map[string]string{"host": "main"},
	}
}

func TestRecordWritesOneSeedShapedLine(t *testing.T) {
	l, path := openLog(t)
	require.NoError(t, l.Record(context.Background(), executed()))
	require.Equal(t, []string{
		`{"timestamp":"2025-10-04T10:00:00.123Z","event":"execute","session_id":"s1","agent_id":"chat_agent_1",` +
			`"agent_role":"chat_agent","approval_id":"ap1","command":"mkdir /tmp/x && ls 2>&1 | grep '<a>'",` +
			`"risk":"moderate","status":"success","approved_by":"user_123",` +
			`"result":{"return_code":0,"execution_time":0.123},` +
			`"reasons":["Moderate-risk command: mkdir"],"detail":{"host":"main"}}`,
	}, lines(t, path))
}

func TestRecordLeavesOutEmptyFields(t *testing.T) {
	tests := []struct {
		name string
		e    ports.AuditEvent
		want string
	}{
		{
			name: "only time and kind",
			e:    ports.AuditEvent{Time: t0, Event: ports.AuditResume},
			want: `{"timestamp":"2025-10-04T12:00:00.000Z","event":"resume"}`,
		},
		{
			name: "empty reasons and detail",
			e:    ports.AuditEvent{Time: t0, Event: ports.AuditSessionCreated, Reasons: []string{}, Detail: map[string]string{}},
			want: `{"timestamp":"2025-10-04T12:00:00.000Z","event":"session_created"}`,
		},
		{
			name: "a killed command keeps code and names the signal",
			e: ports.AuditEvent{Time: t0, Event: ports.AuditExecute, Result: &ports.AuditResult{
				ReturnCode: 128, ExecutionTime: 2*time.Second + 500*time.Microsecond, Signal: "SIGKILL",
			}},
			want: `{"timestamp":"2025-10-04T12:00:00.000Z","event":"execute","result":{"return_code":128,"execution_time":2.0005,"signal":"SIGKILL"}}`,
		},
		{
			name: "a zero result still says return code 0",
			e:    ports.AuditEvent{Time: t0, Event: ports.AuditExecute, Result: &ports.AuditResult{}},
			want: `{"timestamp":"2025-10-04T12:00:00.000Z","event":"execute","result":{"return_code":0,"execution_time":0}}`,
		},
		{
			name: "a multi-line command stays on one line",
			e:    ports.AuditEvent{Time: t0, Event: ports.AuditBlocked, Command: "echo a\nrm -rf ~\r\x1b[2J"},
			want: `{"timestamp":"2025-10-04T12:00:00.000Z","event":"blocked","command":"echo a\nrm -rf ~\r\u001b[2J"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, path := openLog(t)
			require.NoError(t, l.Record(context.Background(), tt.e))
			require.Equal(t, []string{tt.want}, lines(t, path))
		})
	}
}

func TestRecordRefusesAnEventWithoutTimeOrKind(t *testing.T) {
	tests := []struct {
		name string
		e    ports.AuditEvent
		msg  string
	}{
		{"no time", ports.AuditEvent{Event: ports.AuditExecute}, "no time"},
		{"no kind", ports.AuditEvent{Time: t0}, "no kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, path := openLog(t)
			require.ErrorContains(t, l.Record(context.Background(), tt.e), tt.msg)
			require.Equal(t, []string{""}, lines(t, path), "nothing was written")
		})
	}
}

func TestRecordCutsLongFieldsToFitInsteadOfRefusingTheRecord(t *testing.T) {
	long := func(e ports.AuditEvent, set func(*ports.AuditEvent)) ports.AuditEvent {
		e.Detail = map[string]string{"host": "main", "description": "short"}
		set(&e)
		return e
	}
	const whole = "… [cut by the audit log: "
	tests := []struct {
		name  string
		e     ports.AuditEvent
		cut   string
		check func(t *testing.T, got ports.AuditEvent)
	}{
		{"a description near the request body's limit", long(executed(), func(e *ports.AuditEvent) {
			e.Detail["description"] = strings.Repeat("d", 1<<20)
		}), "detail.description", func(t *testing.T, got ports.AuditEvent) {
			require.True(t, strings.HasPrefix(got.Detail["description"], "ddd"))
			require.True(t, strings.HasSuffix(got.Detail["description"], whole+"1048576 bytes in all]"), got.Detail["description"][len(got.Detail["description"])-80:])
			require.Equal(t, executed().Command, got.Command, "the command is whole")
		}},
		{"control characters that escape six times over", long(executed(), func(e *ports.AuditEvent) {
			e.Detail["description"] = strings.Repeat("\x01", 400_000)
		}), "detail.description", func(t *testing.T, got ports.AuditEvent) {
			require.Contains(t, got.Detail["description"], whole+"400000 bytes in all]")
		}},
		{"a multi-byte character is never split", long(executed(), func(e *ports.AuditEvent) {
			e.Detail["description"] = "x" + strings.Repeat("é", 600_000)
		}), "detail.description", func(t *testing.T, got ports.AuditEvent) {
			require.True(t, utf8.ValidString(got.Detail["description"]))
			require.NotContains(t, got.Detail["description"], "\uFFFD")
		}},
		{"an agent id as long as a request body", long(executed(), func(e *ports.AuditEvent) {
			e.AgentID = strings.Repeat("a", 1<<20)
		}), "agent_id", func(t *testing.T, got ports.AuditEvent) {
			require.Contains(t, got.AgentID, whole)
		}},
		{"a command over the limit, cut last", long(executed(), func(e *ports.AuditEvent) {
			e.Command = strings.Repeat("x", 1<<20)
			e.Detail["description"] = strings.Repeat("d", 100_000)
		}), "command,detail.description", func(t *testing.T, got ports.AuditEvent) {
			require.Greater(t, len(got.Command), 200_000, "the command keeps as much as fits")
			require.Contains(t, got.Command, whole+"1048576 bytes in all]")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, path := openLog(t)
			require.NoError(t, l.Record(context.Background(), tt.e), "the record is written, not refused")

			raw, err := os.ReadFile(path)
			require.NoError(t, err)
			require.LessOrEqual(t, len(raw), 1<<20)
			var got []ports.AuditEvent
			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			require.NoError(t, audit.Read(f, audit.Filter{}, func(e ports.AuditEvent) error {
				got = append(got, e)
				return nil
			}), "the reader takes the line back")
			require.Len(t, got, 1)
			require.Equal(t, tt.cut, got[0].Detail[audit.CutFieldsKey])
			require.Equal(t, "main", got[0].Detail["host"], "short fields are kept whole")
			require.Equal(t, "success", got[0].Status)
			require.Equal(t, tt.e.Result.ReturnCode, got[0].Result.ReturnCode, "the outcome is recorded")
			tt.check(t, got[0])
		})
	}
}

func TestRecordWritesNothingForACancelledCaller(t *testing.T) {
	l, path := openLog(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("client went away")
	cancel(cause)
	err := l.Record(ctx, executed())
	require.ErrorIs(t, err, cause)
	require.Equal(t, []string{""}, lines(t, path))
}

func TestOpenCreatesTheLogOwnerOnly(t *testing.T) {
	_, path := openLog(t)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

func TestOpenRefusesALogOthersCanReadOrChange(t *testing.T) {
	tests := []struct {
		mode os.FileMode
		ok   bool
	}{
		{0o600, true},
		{0o640, true}, // a log shipper in the file's group may read it
		{0o644, false},
		{0o620, false},
		{0o602, false},
		{0o666, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%04o", tt.mode), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.log")
			require.NoError(t, os.WriteFile(path, nil, 0o600))
			require.NoError(t, os.Chmod(path, tt.mode))
			l, err := audit.Open(path)
			if tt.ok {
				require.NoError(t, err)
				require.NoError(t, l.Close())
				return
			}
			require.Error(t, err)
			require.Nil(t, l)
		})
	}
}

func TestOpenTellsHowToFixAWorldReadableLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	require.NoError(t, os.Chmod(path, 0o644))
	_, err := audit.Open(path)
	require.ErrorContains(t, err, "has mode 0644, so others can read or change it; run chmod 600 "+path)
}

func TestOpenRefusesSomethingThatIsNotAFile(t *testing.T) {
	_, err := audit.Open(t.TempDir())
	require.Error(t, err)
	_, err = audit.Open(filepath.Join(t.TempDir(), "missing", "audit.log"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestReopenAppendsAfterEarlierRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	for i := range 3 {
		l, err := audit.Open(path)
		require.NoError(t, err)
		require.NoError(t, l.Record(context.Background(), ports.AuditEvent{Time: at(i), Event: ports.AuditExecute, SessionID: fmt.Sprint(i)}))
		require.NoError(t, l.Close())
	}
	got := readAll(t, path, audit.Filter{})
	require.Len(t, got, 3)
	for i, e := range got {
		require.Equal(t, fmt.Sprint(i), e.SessionID)
	}
}

func TestReopenAfterATornLineStartsAFreshLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	whole := `{"timestamp":"2025-10-04T12:00:00.000Z","event":"resume"}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(whole+`{"timestamp":"2025-10-04T12:00`), 0o600))
	l, err := audit.Open(path)
	require.NoError(t, err)
	require.NoError(t, l.Record(context.Background(), ports.AuditEvent{Time: at(5), Event: ports.AuditInterrupt}))
	require.NoError(t, l.Close())

	var kinds []ports.AuditEventKind
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	err = audit.Read(f, audit.Filter{}, func(e ports.AuditEvent) error {
		kinds = append(kinds, e.Event)
		return nil
	})
	require.Equal(t, []ports.AuditEventKind{ports.AuditResume, ports.AuditInterrupt}, kinds, "the record after the tear is intact")
	var bad *audit.MalformedError
	require.ErrorAs(t, err, &bad)
	require.Equal(t, []int{2}, bad.Lines)
}

func TestConcurrentWritersProduceWholeLines(t *testing.T) {
	l, path := openLog(t)
	const writers, each = 8, 25
	// Long commands make a torn or interleaved write show up as bad JSON.
	long := strings.Repeat("y", 16<<10)
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				errs <- l.Record(context.Background(), ports.AuditEvent{
					Time: at(i), Event: ports.AuditExecute, SessionID: fmt.Sprintf("w%d", w),
					Command: fmt.Sprintf("echo %d %s", i, long),
				})
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	perWriter := map[string]int{}
	for _, s := range lines(t, path) {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(s), &m), "every line is one whole record")
		perWriter[m["session_id"].(string)]++
	}
	require.Len(t, perWriter, writers)
	for w, n := range perWriter {
		require.Equal(t, each, n, w)
	}
}

func TestRecordAfterCloseFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := audit.Open(path)
	require.NoError(t, err)
	require.NoError(t, l.Close())
	require.NoError(t, l.Close(), "closing twice is harmless")
	require.ErrorIs(t, l.Record(context.Background(), executed()), audit.ErrClosed)
}

func TestLogIsAnAuditSink(t *testing.T) {
	l, path := openLog(t)
	var sink ports.AuditSink = l
	require.NoError(t, sink.Record(context.Background(), executed()))
	require.Equal(t, path, l.Path())
}

func readAll(t *testing.T, path string, f audit.Filter) []ports.AuditEvent {
	t.Helper()
	file, err := os.Open(path)
	require.NoError(t, err)
	defer file.Close()
	var got []ports.AuditEvent
	require.NoError(t, audit.Read(file, f, func(e ports.AuditEvent) error {
		got = append(got, e)
		return nil
	}))
	return got
}

func TestRoundTripKeepsEveryField(t *testing.T) {
	l, path := openLog(t)
	want := executed()
	require.NoError(t, l.Record(context.Background(), want))
	got := readAll(t, path, audit.Filter{})
	require.Len(t, got, 1)
	require.True(t, want.Time.Equal(got[0].Time))
	require.Equal(t, time.UTC, got[0].Time.Location())
	want.Time = got[0].Time
	require.Equal(t, want, got[0])
}

func TestRoundTripRoundsTimesToWhatTheLineKeeps(t *testing.T) {
	l, path := openLog(t)
	e := ports.AuditEvent{
		Time: t0.Add(1234567 * time.Nanosecond), Event: ports.AuditExecute,
		Result: &ports.AuditResult{ExecutionTime: 1500 * time.Nanosecond, Signal: "SIGINT", ReturnCode: 128},
	}
	require.NoError(t, l.Record(context.Background(), e))
	got := readAll(t, path, audit.Filter{})
	require.Len(t, got, 1)
	require.Equal(t, t0.Add(time.Millisecond), got[0].Time, "timestamps keep milliseconds")
	require.Equal(t, &ports.AuditResult{ExecutionTime: 2 * time.Microsecond, Signal: "SIGINT", ReturnCode: 128}, got[0].Result)
}

func TestReadFilters(t *testing.T) {
	events := []ports.AuditEvent{
		{Time: at(0), Event: ports.AuditSessionCreated, SessionID: "s1", AgentID: "a1"},
		{Time: at(10), Event: ports.AuditExecute, SessionID: "s1", AgentID: "a1", Command: "ls"},
		{Time: at(20), Event: ports.AuditApprovalRequested, SessionID: "s2", AgentID: "a2", Command: "mkdir x"},
		{Time: at(30), Event: ports.AuditInterrupt, SessionID: "s2", AgentID: "a2"},
		{Time: at(40), Event: ports.AuditDenied, SessionID: "s2", AgentID: "a2", ApprovedBy: "ana"},
		{Time: at(50), Event: ports.AuditExecute, SessionID: "s3", AgentID: "a1", Command: "pwd"},
	}
	l, path := openLog(t)
	for _, e := range events {
		require.NoError(t, l.Record(context.Background(), e))
	}
	tests := []struct {
		name   string
		filter audit.Filter
		want   []int // indexes into events
	}{
		{"no filter keeps all", audit.Filter{}, []int{0, 1, 2, 3, 4, 5}},
		{"by session", audit.Filter{SessionID: "s2"}, []int{2, 3, 4}},
		{"by agent", audit.Filter{AgentID: "a1"}, []int{0, 1, 5}},
		{"by one event", audit.Filter{Events: []ports.AuditEventKind{ports.AuditExecute}}, []int{1, 5}},
		{"by several events", audit.Filter{Events: []ports.AuditEventKind{ports.AuditInterrupt, ports.AuditDenied}}, []int{3, 4}},
		{"since is inclusive", audit.Filter{Since: at(30)}, []int{3, 4, 5}},
		{"until is exclusive", audit.Filter{Until: at(30)}, []int{0, 1, 2}},
		{"a window", audit.Filter{Since: at(10), Until: at(40)}, []int{1, 2, 3}},
		{"filters combine", audit.Filter{AgentID: "a1", Events: []ports.AuditEventKind{ports.AuditExecute}, Since: at(20)}, []int{5}},
		{"nothing matches", audit.Filter{SessionID: "nope"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []ports.AuditEvent
			for _, i := range tt.want {
				want = append(want, events[i])
			}
			require.Equal(t, want, readAll(t, path, tt.filter))
		})
	}
}

func TestReadStopsAtTheCallbacksError(t *testing.T) {
	var buf bytes.Buffer
	for i := range 5 {
		fmt.Fprintf(&buf, `{"timestamp":"2025-10-04T12:00:00.00%dZ","event":"execute"}`+"\n", i)
	}
	stop := errors.New("enough")
	seen := 0
	err := audit.Read(&buf, audit.Filter{}, func(ports.AuditEvent) error {
		seen++
		if seen == 2 {
			return stop
		}
		return nil
	})
	require.ErrorIs(t, err, stop)
	require.Equal(t, 2, seen)
}

func TestReadSkipsAndReportsMalformedLines(t *testing.T) {
	good := `{"timestamp":"2025-10-04T12:00:00.000Z","event":"execute","command":"ls"}`
	input := strings.Join([]string{
		`not json`,
		good,
		`{}`,
		``,
		`{"event":"execute"}`,
		`{"timestamp":"yesterday","event":"execute"}`,
		`{"timestamp":"2025-10-04T12:00:00.000Z","event":"execute","result":{"execution_time":"soon"}}`,
		`{"timestamp":"2025-10-04T12:00:00.000Z","event":"execute","command":"` + strings.Repeat("z", 1<<20) + `"}`,
		good,
		`{"timestamp":"2025-10-04T12:00`,
	}, "\n")
	var got []string
	err := audit.Read(strings.NewReader(input), audit.Filter{}, func(e ports.AuditEvent) error {
		got = append(got, e.Command)
		return nil
	})
	require.Equal(t, []string{"ls", "ls"}, got, "good lines around bad ones are still read")
	var bad *audit.MalformedError
	require.ErrorAs(t, err, &bad)
	require.Equal(t, []int{1, 3, 5, 6, 7, 8, 10}, bad.Lines)
	require.Equal(t, 7, bad.Count)
	require.EqualError(t, err, "audit log has 7 malformed line(s), skipped: line 1, 3, 5, 6, 7, 8, 10")
}

func TestReadReportsManyMalformedLinesBriefly(t *testing.T) {
	input := strings.Repeat("junk\n", 30)
	err := audit.Read(strings.NewReader(input), audit.Filter{}, func(ports.AuditEvent) error { return nil })
	var bad *audit.MalformedError
	require.ErrorAs(t, err, &bad)
	require.Equal(t, 30, bad.Count)
	require.Len(t, bad.Lines, 20)
	require.ErrorContains(t, err, "and 10 more")
}

func TestReadOfAnEmptyLogIsClean(t *testing.T) {
	require.NoError(t, audit.Read(strings.NewReader(""), audit.Filter{}, func(ports.AuditEvent) error {
		t.Fatal("no records expected")
		return nil
	}))
}

func TestReadSurfacesTheReadersError(t *testing.T) {
	boom := errors.New("disk gone")
	r := bufio.NewReader(&failingReader{data: `{"timestamp":"2025-10-04T12:00:00.000Z","event":"execute"}` + "\n", err: boom})
	n := 0
	err := audit.Read(r, audit.Filter{}, func(ports.AuditEvent) error { n++; return nil })
	require.ErrorIs(t, err, boom)
	require.Equal(t, 1, n)
}

type failingReader struct {
	data string
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if r.data == "" {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}
