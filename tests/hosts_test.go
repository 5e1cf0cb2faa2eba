package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/spawner/ssh/sshtest"
	"github.com/shellgate/shellgate/tests/ahpclient"
)

// startHostsDaemon starts sshd and a daemon whose `hosts:` names it
// frontend; the sandbox stays on, so that a remote command shows it is not.
func startHostsDaemon(t *testing.T) (*gateDaemon, *sshtest.Server) {
	t.Helper()
	s := sshtest.Start(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`hosts:
  frontend:
    ssh: %s@%s
    identity_file: %s
    known_hosts: %s
    shell: /bin/sh
  bashbox:
    ssh: %[1]s@%[2]s
    identity_file: %[3]s
    known_hosts: %[4]s
    shell: /bin/bash
`, s.User, s.Addr, s.IdentityFile, s.KnownHosts)), 0o600))
	// Started after sshd, the daemon stops (closing its connection) first.
	return startGateDaemon(t, "--config", cfg), s
}

func (g *gateDaemon) healthz(t *testing.T) map[string]any {
	t.Helper()
	resp, err := http.Get("http://" + g.addr + "/healthz")
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out
}

func hostHealth(t *testing.T, health map[string]any, name string) map[string]any {
	t.Helper()
	for _, h := range health["hosts"].([]any) {
		if h := h.(map[string]any); h["name"] == name {
			return h
		}
	}
	t.Fatalf("no host %s in /healthz: %v", name, health)
	return nil
}

func TestAgentSessionOnAnSSHHostRunsItsCommandsThere(t *testing.T) {
	t.Parallel()
	g, _ := startHostsDaemon(t)
	status, created := g.api(t, "autobot", "POST", "/api/agent-terminal/sessions", map[string]any{
		"agent_id": "auto_1", "agent_role": "automation_agent", "host": "frontend",
	})
	require.Equal(t, http.StatusCreated, status, created)
	execPath := "/api/agent-terminal/execute?session_id=" + created["session_id"].(string)

	status, ran := g.api(t, "autobot", "POST", execPath, map[string]any{
		"command": `echo "at $SSH_CONNECTION"; echo oops >&2; exit 3`,
	})

	require.Equal(t, http.StatusOK, status, ran)
	require.Regexp(t, `^at 127\.0\.0\.1 \d+ 127\.0\.0\.1 \d+\n$`, ran["stdout"], "SSH_CONNECTION is set: the command ran over SSH")
	require.Equal(t, "oops\n", ran["stderr"])
	require.EqualValues(t, 3, ran["return_code"])
	require.Equal(t, false, ran["security"].(map[string]any)["sandboxed"], "the sandbox is this machine's")

	health := g.healthz(t)
	require.Equal(t, true, hostHealth(t, health, "frontend")["connected"])
	require.Equal(t, true, hostHealth(t, health, "main")["connected"])
}

func TestUnknownHostIsRefusedWithTheConfiguredNames(t *testing.T) {
	t.Parallel()
	g, _ := startHostsDaemon(t)

	status, body := g.api(t, "autobot", "POST", "/api/agent-terminal/sessions", map[string]any{
		"agent_id": "auto_1", "agent_role": "automation_agent", "host": "redis",
	})

	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "invalid_host", body["code"])
	require.Contains(t, body["error"], "frontend")
	require.Contains(t, body["error"], "main")

	c := g.dial(t, ahpclient.DialOptions{Token: g.tokens["ana"]})
	initialize(t, c, "ana")
	rpcErr, err := c.CreateTerminal(ctxT(t), ahpclient.CreateParams{
		Channel: "ahp-terminal:/nowhere",
		Meta:    map[string]any{"shellgate/spawn": map[string]any{"command": "true", "host": "redis"}},
	})
	require.NoError(t, err)
	require.NotNil(t, rpcErr)
	require.Equal(t, -32602, rpcErr.Code)
	require.Contains(t, rpcErr.Message, "frontend")
}

func TestServerGoneMidCommandEndsItWithAReasonAndTheHostRecovers(t *testing.T) {
	t.Parallel()
	g, s := startHostsDaemon(t)
	_, created := g.api(t, "autobot", "POST", "/api/agent-terminal/sessions", map[string]any{
		"agent_id": "auto_1", "agent_role": "automation_agent", "host": "frontend",
	})
	id := created["session_id"].(string)
	execPath := "/api/agent-terminal/execute?session_id=" + id

	// A person watches the command's output; once it shows, the server dies.
	watcher := g.dial(t, ahpclient.DialOptions{Token: g.tokens["ana"]})
	initialize(t, watcher, "ana", ahpclient.RootChannel)
	done := make(chan map[string]any, 1)
	go func() {
		// Not g.api: require must not stop the test from this goroutine.
		raw, _ := json.Marshal(map[string]any{"command": "echo started; sleep 1000"})
		req, _ := http.NewRequestWithContext(ctxT(t), "POST", "http://"+g.addr+execPath, strings.NewReader(string(raw)))
		req.Header.Set("Authorization", "Bearer "+g.tokens["autobot"])
		req.Header.Set("Content-Type", "application/json")
		out := map[string]any{}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
		}
		done <- out
	}()
	env, err := watcher.WaitAction(ctxT(t), func(e ahpclient.Envelope) bool {
		for _, ti := range e.View().Terminals {
			if strings.Contains(ti.Resource, id) {
				return true
			}
		}
		return false
	})
	require.NoError(t, err)
	var uri string
	for _, ti := range env.View().Terminals {
		if strings.Contains(ti.Resource, id) {
			uri = ti.Resource
		}
	}
	_, rpcErr, err := watcher.Subscribe(ctxT(t), uri)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, err = watcher.WaitOutput(ctxT(t), uri, "started")
	require.NoError(t, err)

	require.NoError(t, s.Kill())

	var ran map[string]any
	select {
	case ran = <-done:
	case <-ctxT(t).Done():
		t.Fatal("the command did not end when its host went away")
	}
	require.EqualValues(t, 255, ran["return_code"], ran)
	require.Contains(t, ran["stdout"], "lost the connection to host frontend", "the output says why it ended")
	front := hostHealth(t, g.healthz(t), "frontend")
	require.Equal(t, false, front["connected"])
	require.NotEmpty(t, front["last_error"])

	require.NoError(t, s.Restart())
	status, again := g.api(t, "autobot", "POST", execPath, map[string]any{"command": "echo back"})
	require.Equal(t, http.StatusOK, status, again)
	require.Equal(t, "back\n", again["stdout"])
	require.EqualValues(t, 0, again["return_code"])
}

func TestPersonsPTYTerminalOnAnSSHHostTypesResizesAndInterrupts(t *testing.T) {
	t.Parallel()
	g, _ := startHostsDaemon(t)
	ctx := ctxT(t)
	c := g.dial(t, ahpclient.DialOptions{Token: g.tokens["ana"]})
	initialize(t, c, "ana")
	const uri = "ahp-terminal:/remote"
	rpcErr, err := c.CreateTerminal(ctx, ahpclient.CreateParams{
		Channel: uri, Cols: 80, Rows: 24,
		Meta: map[string]any{"shellgate/spawn": map[string]any{"pty": true, "host": "frontend"}},
	})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, rpcErr, err = c.Subscribe(ctx, uri)
	require.NoError(t, err)
	require.Nil(t, rpcErr)

	_, err = c.Dispatch(ctx, uri, ahpclient.InputAction("echo \"on $SSH_CONNECTION\" | tr a-z A-Z; stty size\n"))
	require.NoError(t, err)
	_, err = c.WaitOutput(ctx, uri, "ON 127.0.0.1")
	require.NoError(t, err)
	_, err = c.WaitOutput(ctx, uri, "24 80")
	require.NoError(t, err)

	_, err = c.Dispatch(ctx, uri, ahpclient.ResizedAction(100, 40))
	require.NoError(t, err)
	_, err = c.Dispatch(ctx, uri, ahpclient.InputAction("stty size\n"))
	require.NoError(t, err)
	_, err = c.WaitOutput(ctx, uri, "40 100")
	require.NoError(t, err)

	// The typed line echoes as sl""eeping; only the running command prints
	// sleeping, so ^C is typed once it runs. It prints from a subshell,
	// which has SIGINT's default action by then, and becomes sleep: a ^C
	// after "sleeping" ends it however soon it comes. (Printed by the
	// shell before it forked sleep, a ^C could land in the fork's child
	// before it reset the shell's handler, be taken by that handler, and
	// leave sleep running: seen once under load.)
	_, err = c.Dispatch(ctx, uri, ahpclient.InputAction("(echo sl\"\"eeping; exec sleep 1000); echo not-interrupted\n"))
	require.NoError(t, err)
	_, err = c.WaitOutput(ctx, uri, "sleeping")
	require.NoError(t, err)
	_, err = c.Dispatch(ctx, uri, ahpclient.InputAction("\x03"))
	require.NoError(t, err)
	_, err = c.WaitOutput(ctx, uri, "# ") // the shell's prompt again
	require.NoError(t, err)
	_, err = c.Dispatch(ctx, uri, ahpclient.InputAction("echo after-$((6*7))\n"))
	require.NoError(t, err)
	out, err := c.WaitOutput(ctx, uri, "after-42")
	require.NoError(t, err)
	require.NotContains(t, out, "not-interrupted", "^C ended the remote sleep and the line")
}

func TestCLIExecRunsOnAHostAndHostsListsIt(t *testing.T) {
	t.Parallel()
	g, s := startHostsDaemon(t)
	env := []string{"SHELLGATE_URL=http://" + g.addr, "SHELLGATE_TOKEN=" + g.tokens["ana"]}

	res := cli(t, env, "exec", "--host", "frontend", "--cwd", "/", "--", "sh", "-c", `echo "in $(pwd) over $SSH_CONNECTION"; exit 4`)

	require.Equal(t, 4, res.code, res.stderr)
	require.Regexp(t, `^in / over 127\.0\.0\.1 `, res.stdout)

	kept := cli(t, env, "exec", "--keep", "--host", "frontend", "--", "true")
	require.Equal(t, 0, kept.code, kept.stderr)
	list := cli(t, env, "ls")
	require.Regexp(t, `(?m)\s+true\s+frontend\s+ana\s+exited 0$`, list.stdout)

	hosts := cli(t, env, "hosts")
	require.Equal(t, 0, hosts.code, hosts.stderr)
	require.Regexp(t, `(?m)^main\s+\(this machine\)\s+up\s`, hosts.stdout)
	require.Regexp(t, `(?m)^bashbox\s+`+regexp.QuoteMeta(s.Addr)+`\s+up\s`, hosts.stdout)
	require.Regexp(t, `(?m)^frontend\s+`+regexp.QuoteMeta(s.Addr)+`\s+up\s+[0-9.]+ ms\s+\d+\s+-$`, hosts.stdout)

	require.NoError(t, s.Kill())
	// The daemon learns of the drop from its connection's end.
	require.Eventually(t, func() bool {
		return hostHealth(t, g.healthz(t), "frontend")["connected"] == false
	}, patience, 10*time.Millisecond)
	hosts = cli(t, env, "hosts")
	require.Regexp(t, `(?m)^frontend\s+\S+\s+down\s.*connection`, hosts.stdout)
}

func TestRemoteBashUnderAPtyReportsItsCommands(t *testing.T) {
	t.Parallel()
	g, _ := startHostsDaemon(t)
	ctx := ctxT(t)
	c := g.dial(t, ahpclient.DialOptions{Token: g.tokens["ana"]})
	initialize(t, c, "ana")
	const ch = "ahp-terminal:/remote-bash"
	rpcErr, err := c.CreateTerminal(ctx, ahpclient.CreateParams{Channel: ch, Meta: map[string]any{
		"shellgate/spawn": map[string]any{"pty": true, "host": "bashbox", "env": map[string]string{"PS1": "$ "}},
	}})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	subscribeDetecting(ctx, t, c, ch, "the remote shell announces command detection")

	_, err = c.Dispatch(ctx, ch, ahpclient.InputAction("false\r"))
	require.NoError(t, err)
	e, err := c.WaitAction(ctx, ahpclient.Match(ch, "terminal/commandExecuted"))
	require.NoError(t, err)
	require.Equal(t, "false", *e.View().CommandLine)
	e, err = c.WaitAction(ctx, ahpclient.Match(ch, "terminal/commandFinished"))
	require.NoError(t, err)
	require.Equal(t, 1, *e.View().ExitCode)
}
