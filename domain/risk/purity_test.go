package risk

import (
	"go/build"
	"testing"

	"github.com/stretchr/testify/require"
)

// domain/ is pure (docs/architecture.md): no processes, network, clocks or fx,
// and no shell interpreter that could touch the file system.
func TestPackageImportsOnlyPureDependencies(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	require.NoError(t, err)
	forbidden := []string{"os", "os/exec", "os/user", "net", "net/http", "net/url", "syscall", "time", "unsafe",
		"go.uber.org/fx", "github.com/creack/pty", "github.com/coder/websocket", "mvdan.cc/sh/v3/interp", "mvdan.cc/sh/v3/expand"}
	for _, imp := range pkg.Imports {
		require.NotContains(t, forbidden, imp)
	}
}
