package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/tests/ahpclient"
)

// afterDeath is how soon every child must be gone once the daemon is: the
// issue's bound. The guard only reads /proc, so this is far from tight.
const afterDeath = time.Second

// procsWith lists the live (not zombie) processes whose command line holds
// every one of words, in order.
func procsWith(t *testing.T, words ...string) []int {
	t.Helper()
	dir, err := os.ReadDir("/proc")
	require.NoError(t, err)
	want := []byte(strings.Join(words, "\x00"))
	var out []int
	for _, d := range dir {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err != nil || !bytes.Contains(cmdline, want) {
			continue
		}
		stat, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// crashScene starts, on g, two agent commands that run until killed (one
// sandboxed where the daemon can, one not) and a person's terminal with a
// background job and a setsid descendant. It returns the sleep durations
// that name each process and the agent requests' end.
func crashScene(t *testing.T, g *gateDaemon) (names []string, requests *sync.WaitGroup) {
	t.Helper()
	ctx := ctxT(t)
	base := 40000 + rand.IntN(10000)
	for i := range 5 {
		names = append(names, strconv.Itoa(base+i))
	}
	status, created := g.api(t, "autobot", "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": "auto_1", "agent_role": "automation_agent"})
	require.Equal(t, http.StatusCreated, status, created)
	execPath := "/api/agent-terminal/execute?session_id=" + created["session_id"].(string)
	requests = &sync.WaitGroup{}
	for i, sandbox := range []any{nil, false} {
		body := map[string]any{"command": "sleep " + names[i]}
		if sandbox != nil {
			body["sandbox"] = sandbox
		}
		requests.Go(func() {
			// The daemon dies under it: no answer is the expected end.
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+g.addr+execPath, jsonBody(t, body))
			req.Header.Set("Authorization", "Bearer "+g.tokens["autobot"])
			if resp, err := http.DefaultClient.Do(req); err == nil {
				_ = resp.Body.Close()
			}
		})
	}

	person := g.dial(t, ahpclient.DialOptions{Token: g.tokens["ana"]})
	initialize(t, person, "ana")
	const term = "ahp-terminal:/crash"
	rpcErr, err := person.CreateTerminal(ctx, ahpclient.CreateParams{Channel: term, Meta: spawn("/bin/sh", true)})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, err = person.Dispatch(ctx, term, ahpclient.InputAction(fmt.Sprintf("sleep %s & setsid sleep %s & sleep %s\n", names[2], names[3], names[4])))
	require.NoError(t, err)

	for _, n := range names {
		require.Eventually(t, func() bool { return len(procsWith(t, "sleep", n)) > 0 }, patience, 10*time.Millisecond, "sleep %s never started", n)
	}
	return names, requests
}

func jsonBody(t *testing.T, v any) *strings.Reader {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return strings.NewReader(string(raw))
}

// TestNothingOutlivesAKilledDaemon: kill -9 the daemon with agent commands
// and a person's terminal running (a background job and a setsid escapee
// among them); every process is gone within a second, and the restarted
// daemon records each unfinished agent command as lost, on a log with no
// torn line.
//
// Not parallel, like the other tests here: they look for strays (and kill
// guards) among every process of this machine. Go runs the tests that are
// not parallel before the parallel ones, so nothing else runs meanwhile.
func TestNothingOutlivesAKilledDaemon(t *testing.T) {
	g := startGateDaemon(t)
	names, requests := crashScene(t, g)

	require.NoError(t, g.cmd.Process.Kill())
	_ = g.cmd.Wait()
	dead := time.Now()
	require.Eventually(t, func() bool {
		for _, n := range names {
			if len(procsWith(t, "sleep", n)) > 0 {
				return false
			}
		}
		return true
	}, afterDeath, 5*time.Millisecond, "children outlived the daemon")
	t.Logf("every child gone %s after the daemon", time.Since(dead).Round(time.Millisecond))
	requests.Wait()

	restartRecordsLost(t, g, names[:2])
}

// TestRestartEndsWhatAKilledDaemonAndItsGuardLeft: with the guard killed
// too, the restarted daemon ends what the run file names before serving.
func TestRestartEndsWhatAKilledDaemonAndItsGuardLeft(t *testing.T) {
	g := startGateDaemon(t)
	names, requests := crashScene(t, g)
	guards := procsWith(t, "run-guard")
	require.NotEmpty(t, guards)
	for _, pid := range guards {
		p, err := os.FindProcess(pid)
		require.NoError(t, err)
		_ = p.Kill()
	}
	require.NoError(t, g.cmd.Process.Kill())
	_ = g.cmd.Wait()
	requests.Wait()

	// The person's setsid escapee is still there; the restart ends it.
	require.NotEmpty(t, procsWith(t, "sleep", names[3]))
	restartRecordsLost(t, g, names[:2])
	for _, n := range names {
		require.Empty(t, procsWith(t, "sleep", n), "sleep %s outlived the restart", n)
	}
}

// restartRecordsLost restarts g on its data directory and checks the audit
// log: one lost record per agent command, and every line whole.
func restartRecordsLost(t *testing.T, g *gateDaemon, agentSleeps []string) {
	t.Helper()
	startDaemonIn(t, g.dataDir)
	events := auditEvents(t, filepath.Join(g.dataDir, "audit.log")) // fails on any torn line
	lost := map[string]bool{}
	for _, e := range events {
		if e["event"] == "execute" && e["status"] == "lost" {
			lost[e["command"].(string)] = true
		}
	}
	want := map[string]bool{}
	for _, n := range agentSleeps {
		want["sleep "+n] = true
	}
	require.Equal(t, want, lost)
}

// TestGracefulStopEndsEscapedDescendants: SIGTERM ends the terminals, and
// then what left their sessions, before the daemon exits.
func TestGracefulStopEndsEscapedDescendants(t *testing.T) {
	d := startDaemon(t)
	ctx := ctxT(t)
	c := d.dial(t, ahpclient.DialOptions{})
	initialize(t, c, "stopper")
	const term = "ahp-terminal:/escape"
	rpcErr, err := c.CreateTerminal(ctx, ahpclient.CreateParams{Channel: term, Meta: spawn("/bin/sh", true)})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	name := strconv.Itoa(50000 + rand.IntN(10000))
	_, err = c.Dispatch(ctx, term, ahpclient.InputAction("setsid sleep "+name+" &\n"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(procsWith(t, "sleep", name)) > 0 }, patience, 10*time.Millisecond)

	t.Cleanup(func() {
		if t.Failed() {
			_, logs := d.output()
			t.Log(logs)
		}
	})
	d.stop() // asserts a clean exit 0
	require.Empty(t, procsWith(t, "sleep", name), "the setsid escapee outlived a graceful stop")
}
