package audit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/ports"
)

var ev = ports.AuditEvent{Time: time.Date(2025, 10, 4, 12, 0, 0, 0, time.UTC), Event: ports.AuditExecute, Command: "ls"}

// scripted is a file whose next writes and syncs fail as told.
type scripted struct {
	strings.Builder
	short   []int // bytes each failing write gets through before failing
	syncErr error
}

func (f *scripted) Write(p []byte) (int, error) {
	if len(f.short) > 0 {
		n := min(f.short[0], len(p))
		f.short = f.short[1:]
		f.Builder.Write(p[:n])
		return n, errors.New("no space left on device")
	}
	return f.Builder.Write(p)
}
func (f *scripted) Sync() error  { return f.syncErr }
func (f *scripted) Close() error { return nil }

func TestRecordSurfacesAFailedWriteOnARealDescriptor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	ro, err := os.Open(path) // read-only: every write fails with EBADF
	require.NoError(t, err)
	l := &Log{path: path, f: ro}
	defer l.Close()
	err = l.Record(context.Background(), ev)
	require.ErrorContains(t, err, "write audit log "+path)
	require.ErrorContains(t, err, "bad file descriptor")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Empty(t, b)
}

func TestRecordAfterAPartialWriteStartsAFreshLine(t *testing.T) {
	f := &scripted{short: []int{10}}
	l := &Log{path: "mem", f: f}
	require.ErrorContains(t, l.Record(context.Background(), ev), "no space left on device")
	require.NoError(t, l.Record(context.Background(), ev))

	out := f.String()
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, got, 2)
	require.Len(t, got[0], 10, "the torn fragment stands alone")
	var n int
	err := Read(strings.NewReader(out), Filter{}, func(ports.AuditEvent) error { n++; return nil })
	require.Equal(t, 1, n, "the record after the failure is whole")
	var bad *MalformedError
	require.ErrorAs(t, err, &bad)
	require.Equal(t, []int{1}, bad.Lines)
}

func TestRecordAfterAWriteThatWroteNothingNeedsNoNewline(t *testing.T) {
	f := &scripted{short: []int{0}}
	l := &Log{path: "mem", f: f}
	require.Error(t, l.Record(context.Background(), ev))
	require.NoError(t, l.Record(context.Background(), ev))
	require.Equal(t, 1, strings.Count(f.String(), "\n"))
	require.False(t, strings.HasPrefix(f.String(), "\n"))
}

func TestAFailedSyncMakesTheLogRefuseEverythingAfter(t *testing.T) {
	eio := errors.New("input/output error")
	f := &scripted{syncErr: eio}
	l := &Log{path: "mem", f: f}
	err := l.Record(context.Background(), ev)
	require.ErrorIs(t, err, eio)
	require.ErrorContains(t, err, "sync audit log mem")

	f.syncErr = nil // even once the disk says it is fine again
	err = l.Record(context.Background(), ev)
	require.ErrorIs(t, err, eio)
	require.ErrorContains(t, err, "unusable since a sync failed")
	require.Equal(t, 1, strings.Count(f.String(), "\n"), "nothing more was written")
}
