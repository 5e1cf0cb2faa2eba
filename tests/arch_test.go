package tests

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/shellgate/shellgate/"

type pkgInfo struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// listPackages runs go list over pattern.
func listPackages(t *testing.T, pattern string) []pkgInfo {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", pattern).Output()
	require.NoError(t, err)
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []pkgInfo
	for dec.More() {
		var p pkgInfo
		require.NoError(t, dec.Decode(&p))
		pkgs = append(pkgs, p)
	}
	require.NotEmpty(t, pkgs)
	return pkgs
}

// TestDomainStaysPure: domain/ does no I/O and knows no adapter, fx or
// network, directly or through any dependency. The risk classifier's word
// expansion comes through the domain/shellword port for that reason.
func TestDomainStaysPure(t *testing.T) {
	t.Parallel()
	forbiddenDirect := map[string]bool{
		"os": true, "os/exec": true, "os/user": true, "os/signal": true, "syscall": true,
		"net": true, "net/http": true, "io/fs": true, "io/ioutil": true,
		"mvdan.cc/sh/v3/interp": true, "mvdan.cc/sh/v3/expand": true,
	}
	forbiddenAnywhere := []string{"os/exec", "net", "net/http", "github.com/creack/pty", "github.com/coder/websocket",
		"go.uber.org/fx", "mvdan.cc/sh/v3/interp", "mvdan.cc/sh/v3/expand"}
	for _, p := range listPackages(t, "../domain/...") {
		for _, imp := range p.Imports {
			require.False(t, forbiddenDirect[imp], "%s imports %s", p.ImportPath, imp)
			if strings.HasPrefix(imp, module) {
				require.True(t, strings.HasPrefix(imp, module+"domain/"), "%s imports %s outside domain/", p.ImportPath, imp)
			}
		}
		for _, dep := range p.Deps {
			for _, bad := range forbiddenAnywhere {
				require.NotEqual(t, bad, dep, "%s depends on %s", p.ImportPath, dep)
			}
		}
	}
}

// TestLayersPointInward: app/ knows domain and ports only; ports knows only
// domain; adapters never import cmd.
func TestLayersPointInward(t *testing.T) {
	t.Parallel()
	for _, p := range listPackages(t, "../...") {
		rel := strings.TrimPrefix(p.ImportPath, module)
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(imp, module)
			switch {
			case strings.HasPrefix(rel, "app/"):
				require.True(t, strings.HasPrefix(dep, "app/") || strings.HasPrefix(dep, "domain/") || dep == "ports",
					"%s (app) imports %s", rel, dep)
			case rel == "ports":
				require.True(t, strings.HasPrefix(dep, "domain/"), "ports imports %s", dep)
			case strings.HasPrefix(rel, "adapters/"):
				require.False(t, strings.HasPrefix(dep, "cmd/"), "%s imports %s", rel, dep)
			}
		}
	}
}

// TestAppSpeaksNoUnix: app/ says what it means to a process (Interrupt,
// Terminate, Kill, ports.ErrProcessGone) and leaves signals and errno
// values to the spawners in adapters/. Test files may use syscall to
// check what a fake process received.
func TestAppSpeaksNoUnix(t *testing.T) {
	t.Parallel()
	for _, p := range listPackages(t, "../app/...") {
		for _, imp := range p.Imports {
			require.NotContains(t, []string{"syscall", "golang.org/x/sys/unix"}, imp, "%s imports %s", p.ImportPath, imp)
		}
	}
}
