package tests

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/spawner/contract"
	"github.com/shellgate/shellgate/adapters/userstore"
)

// Secrets the sandbox must keep from agent commands. Each is planted where
// the daemon keeps (or inherits) it; no answer may ever contain one.
const (
	credentialsSecret = "SECRET-CREDENTIALS-7f3a"
	sshSecret         = "SECRET-SSH-KEY-91c2"
	envSecret         = "SECRET-DAEMON-TOKEN-55d0"
)

// sandboxed is a daemon whose agents run confined, in a temporary HOME and
// data directory holding canaries, with one workspace root.
type sandboxed struct {
	*gateDaemon
	home, root, workspace string
}

func startSandboxed(t testing.TB, config string, env ...string) *sandboxed {
	t.Helper()
	home, dataDir, root := t.TempDir(), t.TempDir(), t.TempDir()
	workspace := filepath.Join(root, "project")
	require.NoError(t, os.Mkdir(workspace, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".ssh", "id_canary"), []byte(sshSecret), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dataDir, "credentials.json"), []byte(`{"token":"`+credentialsSecret+`"}`), 0o600))

	store, err := userstore.Open(filepath.Join(dataDir, "users.yaml"))
	require.NoError(t, err)
	tokens := map[string]string{}
	for _, u := range []struct{ id, role string }{
		{"ana", "member"}, {"chatbot", "chat_agent"}, {"autobot", "automation_agent"}, {"rootbot", "admin_agent"},
	} {
		tokens[u.id], err = store.Add(u.id, u.role)
		require.NoError(t, err)
	}
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	yaml := fmt.Sprintf("agent_terminal:\n  workspace_roots: [%q]\n  max_pids: 64\n%s", root, config)
	require.NoError(t, os.WriteFile(cfg, []byte(yaml), 0o600))
	env = append([]string{"HOME=" + home, "SHELLGATE_TOKEN=" + envSecret}, env...)
	d := startDaemonWith(t, dataDir, env, "--config", cfg)
	return &sandboxed{gateDaemon: &gateDaemon{daemon: d, tokens: tokens}, home: home, root: root, workspace: workspace}
}

// session opens a session of role for who in the workspace.
func (s *sandboxed) session(t testing.TB, who, role string) string {
	t.Helper()
	status, created := s.api(t, who, "POST", "/api/agent-terminal/sessions", map[string]any{
		"agent_id": who, "agent_role": role, "workspace": s.workspace,
	})
	require.Equal(t, http.StatusCreated, status, created)
	require.Equal(t, s.workspace, created["workspace"])
	return created["session_id"].(string)
}

// exec submits command and, when it is held, has a person approve it, so
// that what stops a probe is the sandbox and not the gate.
func (s *sandboxed) exec(t *testing.T, who, session string, body map[string]any) map[string]any {
	t.Helper()
	status, res := s.api(t, who, "POST", "/api/agent-terminal/execute?session_id="+session, body)
	require.Equal(t, http.StatusOK, status, "%v", res)
	if res["status"] == "pending_approval" {
		status, res = s.api(t, "ana", "POST", "/api/agent-terminal/sessions/"+session+"/approve",
			map[string]any{"approved": true, "approval_id": res["approval_id"]})
		require.Equal(t, http.StatusOK, status, "%v", res)
		require.Equal(t, "approved", res["status"])
		res = res["result"].(map[string]any)
	}
	return res
}

// probe runs script through a file in the workspace (`sh probe-N.sh`), which
// the classifier cannot see into, so an admin agent's approval lets it run.
func (s *sandboxed) probe(t *testing.T, session, script string) map[string]any {
	t.Helper()
	name := fmt.Sprintf("probe-%d.sh", time.Now().UnixNano())
	require.NoError(t, os.WriteFile(filepath.Join(s.workspace, name), []byte(script), 0o644))
	res := s.exec(t, "rootbot", session, map[string]any{"command": "sh " + name})
	require.Equal(t, true, res["security"].(map[string]any)["sandboxed"], "%v", res)
	return res
}

func (s *sandboxed) requireNoSecret(t *testing.T, what string, res map[string]any) {
	t.Helper()
	text := fmt.Sprint(res)
	for _, secret := range []string{credentialsSecret, sshSecret, envSecret} {
		require.NotContains(t, text, secret, "%s leaked a secret", what)
	}
}

func TestSandboxedCommandsCannotReachOutsideTheirWorkspace(t *testing.T) {
	t.Parallel()
	s := startSandboxed(t, "")
	outside, err := os.MkdirTemp("/var/tmp", "shellgate-canary-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(outside) })
	canary := filepath.Join(outside, "canary")
	require.NoError(t, os.WriteFile(canary, []byte("keep"), 0o644))

	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	var accepted sync.WaitGroup
	var reached bool
	accepted.Go(func() {
		if c, err := ln.Accept(); err == nil {
			reached = true
			c.Close()
		}
	})
	victim := exec.Command("sleep", "300")
	require.NoError(t, victim.Start())
	t.Cleanup(func() { _ = victim.Process.Kill(); _ = victim.Wait() })

	session := s.session(t, "rootbot", "admin_agent")
	dataDir := s.dataDir
	port := ln.Addr().(*net.TCPAddr).Port
	probes := map[string]string{
		"write outside":          "echo bad > " + outside + "/new",
		"delete outside":         "rm -f " + canary,
		"read credentials":       "cat " + dataDir + "/credentials.json",
		"read a denied path":     "cat " + s.home + "/.ssh/id_canary; ls -A " + s.home + "/.ssh",
		"connect to the host":    fmt.Sprintf("bash -c 'echo hi > /dev/tcp/127.0.0.1/%d'", port),
		"kill a process outside": "kill -9 " + strconv.Itoa(victim.Process.Pid),
	}
	for what, script := range probes {
		res := s.probe(t, session, script+"\n")
		require.NotEqualValues(t, 0, res["return_code"], "%s succeeded: %v", what, res)
		s.requireNoSecret(t, what, res)
	}
	b, err := os.ReadFile(canary)
	require.NoError(t, err, "the canary outside the workspace was deleted")
	require.Equal(t, "keep", string(b))
	require.NoFileExists(t, filepath.Join(outside, "new"))
	require.NoError(t, victim.Process.Signal(syscall.Signal(0)), "the process outside was killed")
	_ = ln.Close()
	accepted.Wait()
	require.False(t, reached, "a sandboxed command reached a listener on the host's 127.0.0.1")
}

func TestSandboxedEverydayWorkRunsWithoutApprovalForAChatAgent(t *testing.T) {
	t.Parallel()
	s := startSandboxed(t, "")
	session := s.session(t, "chatbot", "chat_agent")
	for _, line := range []string{
		"mkdir -p build && echo x > build/a && rm -rf build",
		"go version",
		"cat > main.go <<'EOF'\npackage main\n\nfunc main() {}\nEOF",
		"git init -q && git add . && git -c user.name=Agent -c user.email=agent@example.com commit -q -m first",
	} {
		status, res := s.api(t, "chatbot", "POST", "/api/agent-terminal/execute?session_id="+session, map[string]any{"command": line})
		require.Equal(t, http.StatusOK, status, "%s: %v", line, res)
		require.Equal(t, "success", res["status"], "%s was not run at once: %v", line, res)
		require.EqualValues(t, 0, res["return_code"], "%s: %v", line, res)
		sec := res["security"].(map[string]any)
		require.Equal(t, true, sec["sandboxed"])
		require.Equal(t, map[string]any{"mode": "workspace-write", "network": "off", "workspace": s.workspace}, sec["sandbox"])
	}
	require.FileExists(t, filepath.Join(s.workspace, "main.go"))
	require.DirExists(t, filepath.Join(s.workspace, ".git"))
	require.NoDirExists(t, filepath.Join(s.workspace, "build"))
	out, err := exec.Command("git", "-C", s.workspace, "log", "--format=%s").Output()
	require.NoError(t, err)
	require.Equal(t, "first\n", string(out))
}

func TestSandboxStopsTheEscapesThatPassedTheClassifier(t *testing.T) {
	t.Parallel()
	s := startSandboxed(t, "")
	session := s.session(t, "chatbot", "chat_agent")
	for _, line := range []string{
		"cat /proc/self/root" + s.dataDir + "/credentials.json",
		"find " + s.dataDir + " -name credentials.json -exec cat {} \\;",
		"cat /proc/$PPID/environ",
		"cat /proc/1/environ; ls /proc",
	} {
		_, res := s.api(t, "chatbot", "POST", "/api/agent-terminal/execute?session_id="+session, map[string]any{"command": line})
		s.requireNoSecret(t, line, res)
	}

	// A detached process ends with its command.
	marker := "301." + strconv.Itoa(os.Getpid())
	res := s.exec(t, "chatbot", session, map[string]any{"command": "setsid sleep " + marker + " </dev/null >/dev/null 2>&1 &"})
	require.EqualValues(t, 0, res["return_code"], "%v", res)
	contract.RequireNoProcessMatching(t, "sleep "+marker, patience)

	// And with its session, while the command still runs.
	marker = "302." + strconv.Itoa(os.Getpid())
	done := make(chan error, 1)
	go func() {
		// Not s.api: a goroutine other than the test's must not fail it.
		body := strings.NewReader(`{"command": "setsid sleep ` + marker + ` </dev/null >/dev/null 2>&1 & sleep 1000"}`)
		req, _ := http.NewRequest("POST", "http://"+s.addr+"/api/agent-terminal/execute?session_id="+session, body)
		req.Header.Set("Authorization", "Bearer "+s.tokens["chatbot"])
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	require.Eventually(t, func() bool { return len(contract.ProcessesMatching("sleep "+marker)) > 0 }, patience, 20*time.Millisecond)
	status, del := s.api(t, "chatbot", "DELETE", "/api/agent-terminal/sessions/"+session, nil)
	require.Equal(t, http.StatusOK, status, "%v", del)
	contract.RequireNoProcessMatching(t, "sleep "+marker, patience)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(patience):
		t.Fatal("the command of a deleted session did not answer")
	}
}

func TestSandboxedForkBombStopsAtThePidsLimit(t *testing.T) {
	t.Parallel()
	s := startSandboxed(t, "")
	session := s.session(t, "rootbot", "admin_agent")
	res := s.probe(t, session, `perl -e 'my $n = 0; for (1..500) { my $p = fork(); last unless defined $p; if (!$p) { sleep 60; exit 0 } $n++ } print "$n\n"'`+"\n")
	n, err := strconv.Atoi(strings.TrimSpace(res["stdout"].(string)))
	require.NoError(t, err, "%v", res)
	require.Less(t, n, 64, "more processes than the pids limit: %v", res)
	resp, err := http.Get("http://" + s.addr + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the daemon keeps answering")
}

func TestEscalatingOutOfTheSandboxIsDecidedByTheUnconfinedTable(t *testing.T) {
	t.Parallel()
	s := startSandboxed(t, "")
	scratch, err := os.MkdirTemp("/tmp", "shellgate-escalate-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(scratch) })

	chat := s.session(t, "chatbot", "chat_agent")
	status, held := s.api(t, "chatbot", "POST", "/api/agent-terminal/execute?session_id="+chat,
		map[string]any{"command": "mkdir " + filepath.Join(scratch, "a"), "sandbox": false})
	require.Equal(t, http.StatusOK, status, "%v", held)
	require.Equal(t, "pending_approval", held["status"], "%v", held)
	require.Equal(t, false, held["security"].(map[string]any)["sandboxed"])
	_, got := s.api(t, "ana", "GET", "/api/agent-terminal/sessions/"+chat, nil)
	require.Equal(t, false, got["pending_approval"].(map[string]any)["sandboxed"], "the approver sees it would run unconfined")
	require.Equal(t, s.workspace, got["workspace"])
	res := cli(t, nil, "approvals", "--url", "http://"+s.addr, "--token", s.tokens["ana"])
	require.Zero(t, res.code, res.stderr)
	require.Contains(t, res.stdout, "unconfined in "+s.workspace)

	auto := s.session(t, "autobot", "automation_agent")
	status, ran := s.api(t, "autobot", "POST", "/api/agent-terminal/execute?session_id="+auto,
		map[string]any{"command": "mkdir " + filepath.Join(scratch, "b"), "sandbox": false})
	require.Equal(t, http.StatusOK, status, "%v", ran)
	require.Equal(t, "success", ran["status"], "%v", ran)
	require.Equal(t, false, ran["security"].(map[string]any)["sandboxed"])
	require.DirExists(t, filepath.Join(scratch, "b"), "an unconfined command writes where it says")
}

func TestWithoutASandboxTheGateSaysSoAndUsesTheUnconfinedTable(t *testing.T) {
	t.Parallel()
	s := startSandboxed(t, "", "SHELLGATE_SANDBOX_UNAVAILABLE=1")
	resp, err := http.Get("http://" + s.addr + "/healthz")
	require.NoError(t, err)
	var health struct {
		Sandbox struct {
			Available bool   `json:"available"`
			Reason    string `json:"reason"`
		} `json:"sandbox"`
	}
	require.NoError(t, decodeJSON(resp, &health))
	require.False(t, health.Sandbox.Available)
	require.Contains(t, health.Sandbox.Reason, "SHELLGATE_SANDBOX_UNAVAILABLE")
	_, logs := s.output()
	require.Contains(t, logs, "agent commands run unconfined")

	session := s.session(t, "chatbot", "chat_agent")
	status, ran := s.api(t, "chatbot", "POST", "/api/agent-terminal/execute?session_id="+session, map[string]any{"command": "echo hi"})
	require.Equal(t, http.StatusOK, status, "%v", ran)
	require.Equal(t, map[string]any{"risk": "safe", "reasons": ran["security"].(map[string]any)["reasons"], "sandboxed": false, "approved": false}, ran["security"])
	_, held := s.api(t, "chatbot", "POST", "/api/agent-terminal/execute?session_id="+session, map[string]any{"command": "mkdir -p build"})
	require.Equal(t, "pending_approval", held["status"], "a moderate command waits without the sandbox: %v", held)
}

func TestAWorkspaceOutsideTheRootsIsRefused(t *testing.T) {
	t.Parallel()
	s := startSandboxed(t, "")
	outside := t.TempDir()
	link := filepath.Join(s.root, "escape")
	require.NoError(t, os.Symlink(outside, link))
	for _, ws := range []string{outside, link, "relative/dir", filepath.Join(s.root, "missing")} {
		status, res := s.api(t, "chatbot", "POST", "/api/agent-terminal/sessions", map[string]any{
			"agent_id": "chatbot", "agent_role": "chat_agent", "workspace": ws,
		})
		require.Equal(t, http.StatusBadRequest, status, "%s: %v", ws, res)
		require.Equal(t, "invalid_workspace", res["code"], "%s: %v", ws, res)
	}
	status, res := s.api(t, "chatbot", "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": "chatbot", "agent_role": "chat_agent"})
	require.Equal(t, http.StatusCreated, status, "%v", res)
	require.Equal(t, s.root, res["workspace"], "the first root is the default")
}

func decodeJSON(resp *http.Response, v any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}
