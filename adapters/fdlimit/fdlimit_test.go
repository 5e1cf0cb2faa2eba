package fdlimit_test

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/fdlimit"
)

func TestFreeFallsByEachFileOpenedAndRisesWhenItCloses(t *testing.T) {
	// The first open may start the runtime's poller (its own files).
	warm, err := os.Open(os.DevNull)
	require.NoError(t, err)
	require.NoError(t, warm.Close())

	before, limit, err := fdlimit.New().Free()
	require.NoError(t, err)
	var rl syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl))
	require.Equal(t, int(rl.Cur), limit, "the soft limit")
	require.Less(t, before, limit)

	var files []*os.File
	for range 10 {
		f, err := os.Open(os.DevNull)
		require.NoError(t, err)
		files = append(files, f)
	}
	during, _, err := fdlimit.New().Free()
	require.NoError(t, err)
	require.Equal(t, before-10, during)

	for _, f := range files {
		require.NoError(t, f.Close())
	}
	after, _, err := fdlimit.New().Free()
	require.NoError(t, err)
	require.Equal(t, before, after)
}
