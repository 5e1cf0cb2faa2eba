package gone

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/ports"
)

func TestWrapMarksOnlyTheErrorsOfAnExitedChild(t *testing.T) {
	other := errors.New("permission denied")
	tests := []struct {
		name string
		err  error
		gone bool
	}{
		{"a write to a pipe nobody reads", &os.PathError{Op: "write", Path: "|1", Err: syscall.EPIPE}, true},
		{"a write to a pty whose child left", &os.PathError{Op: "write", Path: "/dev/ptmx", Err: syscall.EIO}, true},
		{"a signal to a group that is gone", fmt.Errorf("SIGINT to process group 7: %w", os.ErrProcessDone), true},
		{"kill(2) finding no one", syscall.ESRCH, true},
		{"a write after the input was closed", &os.PathError{Op: "write", Path: "|1", Err: os.ErrClosed}, true},
		{"any other error", other, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Wrap(tt.err)
			require.Equal(t, tt.gone, errors.Is(got, ports.ErrProcessGone))
			require.ErrorIs(t, got, tt.err, "the spawner's own error is kept")
			require.Equal(t, tt.err.Error(), got.Error())
		})
	}
	require.NoError(t, Wrap(nil))
}

func TestMarkMakesAnyErrorProcessGoneAndKeepsIt(t *testing.T) {
	eof := fmt.Errorf("ssh: write to the process: %w", io.EOF)
	got := Mark(eof)
	require.ErrorIs(t, got, ports.ErrProcessGone)
	require.ErrorIs(t, got, io.EOF)
	require.Equal(t, eof.Error(), got.Error())
	require.NoError(t, Mark(nil))
}
