package agents_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/app/agents"
	"github.com/shellgate/shellgate/ports"
)

// fakeSandbox is a ports.Sandbox that confines nothing itself (the fake
// spawner only records the Confinement it is given); it resolves paths
// lexically and keeps scopes in memory.
type fakeSandbox struct {
	available bool
	mu        sync.Mutex
	open      map[string]bool
}

func (s *fakeSandbox) Status() ports.SandboxStatus {
	if !s.available {
		return ports.SandboxStatus{Reason: "off in this test"}
	}
	return ports.SandboxStatus{Available: true}
}

func (s *fakeSandbox) ResolveDir(dir string) (string, error) {
	r, err := filepath.EvalSymlinks(dir)
	if err != nil || !filepath.IsAbs(dir) {
		return "", os.ErrNotExist
	}
	return r, nil
}

func (s *fakeSandbox) NewScope(name string) (ports.SandboxScope, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open == nil {
		s.open = map[string]bool{}
	}
	s.open["/tmp/scope-"+name] = true
	return fakeScope{s, "/tmp/scope-" + name}, nil
}

func (s *fakeSandbox) scopes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.open)
}

type fakeScope struct {
	s   *fakeSandbox
	dir string
}

func (f fakeScope) TempDir() string { return f.dir }
func (f fakeScope) Close() error {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	delete(f.s.open, f.dir)
	return nil
}

func sandboxFixture(t *testing.T, available bool) (*fixture, *fakeSandbox, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	sb := &fakeSandbox{available: available}
	return newFixtureWith(t, agents.Config{WorkspaceRoots: []string{root}}, sb), sb, root
}

func TestWorkspaceMustLieInsideARoot(t *testing.T) {
	f, _, root := sandboxFixture(t, true)
	inside := filepath.Join(root, "project")
	require.NoError(t, os.Mkdir(inside, 0o755))
	outside := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "link")))

	v, err := f.app.CreateSession.Handle(ctxT(t), chatBot, agents.CreateSessionRequest{AgentID: "c", AgentRole: "chat_agent", Workspace: inside})
	require.NoError(t, err)
	require.Equal(t, inside, v.Workspace)
	v, err = f.app.CreateSession.Handle(ctxT(t), chatBot, agents.CreateSessionRequest{AgentID: "c", AgentRole: "chat_agent"})
	require.NoError(t, err)
	require.Equal(t, root, v.Workspace, "no workspace means the first root")

	for _, ws := range []string{outside, filepath.Join(root, "link"), "project", filepath.Join(root, "missing"), root + "/../"} {
		_, err := f.app.CreateSession.Handle(ctxT(t), chatBot, agents.CreateSessionRequest{AgentID: "c", AgentRole: "chat_agent", Workspace: ws})
		require.ErrorIs(t, err, agents.ErrInvalidWorkspace, ws)
		require.Contains(t, err.Error(), root, "the message names the roots")
	}
}

func TestSandboxedModerateRunsForAChatAgentConfinedToItsWorkspace(t *testing.T) {
	f, sb, root := sandboxFixture(t, true)
	s := f.open(chatBot, "chat_agent")
	res, err := f.exec(chatBot, s.ID, "mkdir -p build")
	require.NoError(t, err)
	require.Equal(t, agents.Ran, res.Outcome, "R21: moderate is auto when contained")
	require.NotNil(t, res.Sandbox)
	require.Equal(t, root, res.Sandbox.Workspace)
	require.Equal(t, ports.SandboxWorkspaceWrite, res.Sandbox.Mode)
	require.False(t, res.Sandbox.Network)

	spec := f.sp.Processes()[len(f.sp.Processes())-1].Spec()
	require.NotNil(t, spec.Confine, "the terminal's process was spawned confined")
	require.Equal(t, root, spec.Dir)
	require.Equal(t, "/tmp/scope-"+s.ID, spec.Confine.TempDir)

	// Escalating is decided by the unconfined table and runs unconfined.
	res, err = f.app.ExecuteCommand.Handle(ctxT(t), chatBot, agents.ExecuteRequest{SessionID: s.ID, Command: "mkdir -p dist", Unconfined: true})
	require.NoError(t, err)
	require.Equal(t, agents.Held, res.Outcome)
	require.Nil(t, res.Sandbox)
	d, err := f.app.DecideApproval.Handle(ctxT(t), ana, agents.DecisionRequest{SessionID: s.ID, Approve: true})
	require.NoError(t, err)
	require.Nil(t, d.Sandbox, "approved as asked: unconfined")
	spec = f.sp.Processes()[len(f.sp.Processes())-1].Spec()
	require.Nil(t, spec.Confine)

	// High is decided as unconfined: blocked for a chat agent.
	_, err = f.exec(chatBot, s.ID, "sudo ls")
	var blocked *agents.CommandBlockedError
	require.ErrorAs(t, err, &blocked)
	require.NotNil(t, blocked.Sandbox)

	require.Equal(t, 1, sb.scopes())
	require.NoError(t, f.app.DeleteSession.Handle(ctxT(t), chatBot, s.ID))
	require.Equal(t, 0, sb.scopes(), "the session's temporary directory goes with it")
}

func TestWithoutTheSandboxModerateWaitsAndNothingClaimsConfinement(t *testing.T) {
	f, sb, _ := sandboxFixture(t, false)
	s := f.open(chatBot, "chat_agent")
	res, err := f.exec(chatBot, s.ID, "mkdir -p build")
	require.NoError(t, err)
	require.Equal(t, agents.Held, res.Outcome)
	require.Nil(t, res.Sandbox)
	require.Equal(t, 0, sb.scopes())
}
