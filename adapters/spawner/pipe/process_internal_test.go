package pipe

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/ports"
)

func TestPipeSignalWithoutAPidIsRefused(t *testing.T) {
	// A process that never started must not turn into kill(0, sig), which
	// would hit the daemon's own process group.
	p := &process{}

	require.ErrorIs(t, p.Signal(syscall.SIGKILL), ports.ErrNoProcess)
}

func TestPipeSignalNamesAreNormalised(t *testing.T) {
	tests := []struct {
		sig  syscall.Signal
		want string
	}{
		{syscall.SIGINT, "SIGINT"},
		{syscall.SIGTERM, "SIGTERM"},
		{syscall.SIGKILL, "SIGKILL"},
		{syscall.Signal(40), "SIG40"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, signalName(tt.sig))
	}
}
