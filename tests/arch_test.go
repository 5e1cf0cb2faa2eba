package tests

import (
	"encoding/json"
	"fmt"
	"go/ast"
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

// goFile is one non-test source file: its package, name, imports, and the
// package-qualified names it uses (pkg.Name).
type goFile struct {
	Rel, Name string
	Imports   []string
	Selectors []string
}

// listFiles parses every non-test file of the module.
func listFiles(t *testing.T) []goFile {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Dir,GoFiles", "../...").Output()
	require.NoError(t, err)
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var files []goFile
	for dec.More() {
		var p struct {
			ImportPath string
			Dir        string
			GoFiles    []string
		}
		require.NoError(t, dec.Decode(&p))
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			require.NoError(t, err)
			gf := goFile{Rel: strings.TrimPrefix(p.ImportPath, module), Name: name}
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				gf.Imports = append(gf.Imports, path)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok {
						gf.Selectors = append(gf.Selectors, id.Name+"."+sel.Sel.Name)
					}
				}
				return true
			})
			files = append(files, gf)
		}
	}
	require.NotEmpty(t, files)
	return files
}

// Each rule below is a function from what go list says to the
// violations it finds, so that TestEveryRuleCanFail can show each one
// catching a package made to break it.

// domainViolations: domain/ does no I/O and knows no adapter, fx or
// network, directly or through any dependency. The risk classifier's word
// expansion comes through the domain/shellword port for that reason.
func domainViolations(pkgs []pkgInfo) []string {
	forbiddenDirect := map[string]bool{
		"os": true, "os/exec": true, "os/user": true, "os/signal": true, "syscall": true,
		"net": true, "net/http": true, "io/fs": true, "io/ioutil": true,
		"mvdan.cc/sh/v3/interp": true, "mvdan.cc/sh/v3/expand": true,
	}
	forbiddenAnywhere := []string{"os/exec", "net", "net/http", "github.com/creack/pty", "github.com/coder/websocket",
		"go.uber.org/fx", "mvdan.cc/sh/v3/interp", "mvdan.cc/sh/v3/expand"}
	var out []string
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			if forbiddenDirect[imp] {
				out = append(out, fmt.Sprintf("%s imports %s", p.ImportPath, imp))
			}
			if strings.HasPrefix(imp, module) && !strings.HasPrefix(imp, module+"domain/") {
				out = append(out, fmt.Sprintf("%s imports %s outside domain/", p.ImportPath, imp))
			}
		}
		for _, dep := range p.Deps {
			if slices.Contains(forbiddenAnywhere, dep) {
				out = append(out, fmt.Sprintf("%s depends on %s", p.ImportPath, dep))
			}
		}
	}
	return out
}

// TestDomainStaysPure holds domain/ to domainViolations.
func TestDomainStaysPure(t *testing.T) {
	t.Parallel()
	require.Empty(t, domainViolations(listPackages(t, "../domain/...")))
}

// layerViolations: app/ knows domain and ports only; ports knows only
// domain; adapters never import cmd.
func layerViolations(pkgs []pkgInfo) []string {
	var out []string
	for _, p := range pkgs {
		rel := strings.TrimPrefix(p.ImportPath, module)
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(imp, module)
			switch {
			case strings.HasPrefix(rel, "app/"):
				if !strings.HasPrefix(dep, "app/") && !strings.HasPrefix(dep, "domain/") && dep != "ports" {
					out = append(out, fmt.Sprintf("%s (app) imports %s", rel, dep))
				}
			case rel == "ports":
				if !strings.HasPrefix(dep, "domain/") {
					out = append(out, fmt.Sprintf("ports imports %s", dep))
				}
			case strings.HasPrefix(rel, "adapters/"):
				if strings.HasPrefix(dep, "cmd/") {
					out = append(out, fmt.Sprintf("%s imports %s", rel, dep))
				}
			}
		}
	}
	return out
}

// TestLayersPointInward holds every package to layerViolations.
func TestLayersPointInward(t *testing.T) {
	t.Parallel()
	require.Empty(t, layerViolations(listPackages(t, "../...")))
}

// unixViolations: app/ says what it means to a process (Interrupt,
// Terminate, Kill, ports.ErrProcessGone) and leaves signals and errno
// values to the spawners in adapters/. Test files may use syscall to
// check what a fake process received.
func unixViolations(pkgs []pkgInfo) []string {
	var out []string
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			if imp == "syscall" || imp == "golang.org/x/sys/unix" {
				out = append(out, fmt.Sprintf("%s imports %s", p.ImportPath, imp))
			}
		}
	}
	return out
}

// TestAppSpeaksNoUnix holds app/ to unixViolations.
func TestAppSpeaksNoUnix(t *testing.T) {
	t.Parallel()
	require.Empty(t, unixViolations(listPackages(t, "../app/...")))
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

// adapterViolations: an adapter implements a port or drives the app; it
// reaches another adapter only through a port, so that each can be
// swapped alone. The composition that needs several (the shellgate
// package at the module root, and cmd/) is outside adapters/ and exempt.
// Within the spawners, the router (local) and the sandbox decorator are
// made of the pipe and pty spawners, and every spawner may use the code
// they share under adapters/spawner/internal. adapters/internal is not an
// adapter: it holds system-level helpers with no state and no port (the
// raw reads and writes of package nbio), which any adapter may use. An
// adapter that drives the
// terminals does so through their use cases (terminals.App), never the
// fan-out hub under them: app/hub is not an adapter's to import. Test
// files are not checked.
func adapterViolations(pkgs []pkgInfo) []string {
	composes := map[string][]string{
		"spawner/local":   {"spawner/pipe", "spawner/pty"},
		"spawner/sandbox": {"spawner/pipe", "spawner/pty"},
	}
	var out []string
	for _, p := range pkgs {
		rel := strings.TrimPrefix(p.ImportPath, module)
		if !strings.HasPrefix(rel, "adapters/") {
			continue
		}
		self := adapterOf(rel)
		for _, imp := range p.Imports {
			if imp == module+"app/hub" {
				out = append(out, fmt.Sprintf("%s imports app/hub: reach terminals through terminals.App's use cases", rel))
			}
			dep, ok := strings.CutPrefix(imp, module+"adapters/")
			if !ok {
				continue
			}
			other := adapterOf("adapters/" + dep)
			switch {
			case other == self:
			case other == "internal":
			case other == "spawner/internal" && strings.HasPrefix(self, "spawner/"):
			case slices.Contains(composes[self], other):
			default:
				out = append(out, fmt.Sprintf("%s imports %s: reach it through a port, or wire them together in the shellgate package", rel, "adapters/"+dep))
			}
		}
	}
	return out
}

// TestAdaptersDoNotImportEachOther holds adapters/ to adapterViolations.
func TestAdaptersDoNotImportEachOther(t *testing.T) {
	t.Parallel()
	require.Empty(t, adapterViolations(listPackages(t, "../adapters/...")))
}

// hostViolations: no adapter names the terminal host (terminals.Host, or
// terminals.New that makes one): it reaches terminals through
// terminals.App, whose use cases check the caller; the host is what they,
// and the agent gate in app/, stand on.
func hostViolations(files []goFile) []string {
	var out []string
	for _, f := range files {
		if !strings.HasPrefix(f.Rel, "adapters/") {
			continue
		}
		for _, sel := range f.Selectors {
			if sel == "terminals.Host" || sel == "terminals.New" {
				out = append(out, fmt.Sprintf("%s/%s names %s: call a use case of terminals.App", f.Rel, f.Name, sel))
			}
		}
	}
	return out
}

// TestAdaptersReachTerminalsThroughUseCases holds adapters/ to
// hostViolations.
func TestAdaptersReachTerminalsThroughUseCases(t *testing.T) {
	t.Parallel()
	require.Empty(t, hostViolations(listFiles(t)))
}

// fxViolations: each package says how it joins the daemon's graph in its
// module.go and is plain Go everywhere else; cmd/ and the shellgate
// package's module.go wire the graph. The fakespawner example imports fx
// to show the one-line swap of the spawner. Test files are not checked
// (they reach into the graph with fx.Populate).
func fxViolations(files []goFile) []string {
	var out []string
	for _, f := range files {
		if strings.HasPrefix(f.Rel, "cmd/") || f.Rel == "examples/fakespawner" || f.Name == "module.go" {
			continue
		}
		for _, path := range f.Imports {
			if path == "go.uber.org/fx" || strings.HasPrefix(path, "go.uber.org/fx/") {
				out = append(out, fmt.Sprintf("%s/%s imports %s: keep fx in the package's module.go", f.Rel, f.Name, path))
			}
		}
	}
	return out
}

// TestOnlyModulesAndCmdImportFx holds every file to fxViolations.
func TestOnlyModulesAndCmdImportFx(t *testing.T) {
	t.Parallel()
	require.Empty(t, fxViolations(listFiles(t)))
}

// TestEveryRuleCanFail shows each rule above catching a package, or a
// file, made to break it, beside one that keeps it: a rule that could not
// fail would prove nothing by passing.
func TestEveryRuleCanFail(t *testing.T) {
	t.Parallel()
	pkg := func(path string, imports ...string) pkgInfo {
		return pkgInfo{ImportPath: module + path, Imports: imports}
	}
	pkgRules := []struct {
		name      string
		rule      func([]pkgInfo) []string
		breaks    pkgInfo
		keeps     pkgInfo
		wantInMsg string
	}{
		{"domain imports os/exec", domainViolations, pkg("domain/x", "os/exec"), pkg("domain/x", "strings"), "os/exec"},
		{"domain imports app", domainViolations, pkg("domain/x", module+"app/terminals"), pkg("domain/x", module+"domain/terminal"), "outside domain/"},
		{"domain depends on fx", domainViolations, pkgInfo{ImportPath: module + "domain/x", Deps: []string{"go.uber.org/fx"}}, pkg("domain/x"), "go.uber.org/fx"},
		{"app imports an adapter", layerViolations, pkg("app/x", module+"adapters/ahp"), pkg("app/x", module+"ports"), "adapters/ahp"},
		{"ports imports app", layerViolations, pkg("ports", module+"app/hub"), pkg("ports", module+"domain/terminal"), "app/hub"},
		{"an adapter imports cmd", layerViolations, pkg("adapters/x", module+"cmd/shellgate"), pkg("adapters/x", module+"app/terminals"), "cmd/shellgate"},
		{"app imports syscall", unixViolations, pkg("app/x", "syscall"), pkg("app/x", "errors"), "syscall"},
		{"an adapter imports another", adapterViolations, pkg("adapters/ahp", module+"adapters/restapi"), pkg("adapters/spawner/local", module+"adapters/spawner/pty"), "adapters/restapi"},
		{"an adapter imports another, not the shared helpers", adapterViolations, pkg("adapters/userstore", module+"adapters/internal/nbio", module+"adapters/audit"), pkg("adapters/userstore", module+"adapters/internal/nbio"), "adapters/audit"},
		{"an adapter imports app/hub", adapterViolations, pkg("adapters/ahp", module+"app/hub"), pkg("adapters/ahp", module+"app/terminals"), "app/hub"},
	}
	for _, r := range pkgRules {
		t.Run(r.name, func(t *testing.T) {
			got := r.rule([]pkgInfo{r.breaks})
			require.Len(t, got, 1, "the rule misses %v", r.breaks)
			require.Contains(t, got[0], r.wantInMsg)
			require.Empty(t, r.rule([]pkgInfo{r.keeps}))
		})
	}
	fileRules := []struct {
		name      string
		rule      func([]goFile) []string
		breaks    goFile
		keeps     goFile
		wantInMsg string
	}{
		{"fx outside module.go", fxViolations, goFile{Rel: "adapters/x", Name: "x.go", Imports: []string{"go.uber.org/fx"}},
			goFile{Rel: "adapters/x", Name: "module.go", Imports: []string{"go.uber.org/fx"}}, "keep fx"},
		{"an adapter names the terminal host", hostViolations, goFile{Rel: "adapters/x", Name: "x.go", Selectors: []string{"terminals.Host"}},
			goFile{Rel: "app/agents", Name: "core.go", Selectors: []string{"terminals.Host"}}, "terminals.Host"},
		{"an adapter makes a terminal host", hostViolations, goFile{Rel: "adapters/x", Name: "x.go", Selectors: []string{"terminals.New"}},
			goFile{Rel: "adapters/x", Name: "x.go", Selectors: []string{"terminals.NewApp"}}, "terminals.New"},
	}
	for _, r := range fileRules {
		t.Run(r.name, func(t *testing.T) {
			got := r.rule([]goFile{r.breaks})
			require.Len(t, got, 1, "the rule misses %v", r.breaks)
			require.Contains(t, got[0], r.wantInMsg)
			require.Empty(t, r.rule([]goFile{r.keeps}))
		})
	}
}
