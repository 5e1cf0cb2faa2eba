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
