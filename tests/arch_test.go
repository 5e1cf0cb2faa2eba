package tests

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
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

// adapterOf names the adapter a package under adapters/ belongs to: its
// folder below adapters/, or below adapters/spawner/ for the spawners,
// which are adapters each.
func adapterOf(rel string) string {
	parts := strings.Split(strings.TrimPrefix(rel, "adapters/"), "/")
	if parts[0] == "spawner" && len(parts) > 1 {
		return "spawner/" + parts[1]
	}
	return parts[0]
}

// TestAdaptersDoNotImportEachOther: an adapter implements a port or drives
// the app; it reaches another adapter only through a port, so that each
// can be swapped alone. The composition that needs several (the shellgate
// package at the module root, and cmd/) is outside adapters/ and exempt.
// Within the spawners, the router (local) and the sandbox decorator are
// made of the pipe and pty spawners, and every spawner may use the code
// they share under adapters/spawner/internal. Test files are not checked.
func TestAdaptersDoNotImportEachOther(t *testing.T) {
	t.Parallel()
	composes := map[string][]string{
		"spawner/local":   {"spawner/pipe", "spawner/pty"},
		"spawner/sandbox": {"spawner/pipe", "spawner/pty"},
	}
	for _, p := range listPackages(t, "../adapters/...") {
		rel := strings.TrimPrefix(p.ImportPath, module)
		self := adapterOf(rel)
		for _, imp := range p.Imports {
			dep, ok := strings.CutPrefix(imp, module+"adapters/")
			if !ok {
				continue
			}
			other := adapterOf("adapters/" + dep)
			switch {
			case other == self:
			case other == "spawner/internal" && strings.HasPrefix(self, "spawner/"):
			case slices.Contains(composes[self], other):
			default:
				require.Failf(t, "an adapter imports another", "%s imports %s: reach it through a port, or wire them together in the shellgate package", rel, "adapters/"+dep)
			}
		}
	}
}

// TestOnlyModulesAndCmdImportFx: each package says how it joins the
// daemon's graph in its module.go and is plain Go everywhere else; cmd/
// and the shellgate package's module.go wire the graph. The fakespawner
// example imports fx to show the one-line swap of the spawner. Test files
// are not checked (they reach into the graph with fx.Populate).
func TestOnlyModulesAndCmdImportFx(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-json=ImportPath,Dir,GoFiles", "../...").Output()
	require.NoError(t, err)
	dec := json.NewDecoder(strings.NewReader(string(out)))
	checked := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Dir        string
			GoFiles    []string
		}
		require.NoError(t, dec.Decode(&p))
		rel := strings.TrimPrefix(p.ImportPath, module)
		if strings.HasPrefix(rel, "cmd/") || rel == "examples/fakespawner" {
			continue
		}
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(p.Dir, name), nil, parser.ImportsOnly)
			require.NoError(t, err)
			checked++
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if path == "go.uber.org/fx" || strings.HasPrefix(path, "go.uber.org/fx/") {
					require.Equal(t, "module.go", name, "%s/%s imports %s: keep fx in the package's module.go", rel, name, path)
				}
			}
		}
	}
	require.NotZero(t, checked)
}
