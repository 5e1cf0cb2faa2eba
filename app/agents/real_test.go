package agents_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/clock"
	"github.com/shellgate/shellgate/adapters/shellexpand"
	"github.com/shellgate/shellgate/adapters/spawner/local"
	"github.com/shellgate/shellgate/app/agents"
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/risk"
)

// realGate is the gate over real processes on pipes, still on the fake clock.
func realGate(t *testing.T, cfg agents.Config) (*agents.App, *clock.Fake, *terminals.Host) {
	t.Helper()
	clk := clock.NewFake(t0)
	host := terminals.New(terminals.Config{
		Shell: "/bin/sh", Dir: t.TempDir(), StopGrace: time.Second,
		Env: []string{"PATH=" + os.Getenv("PATH")},
	}, hub.New(hub.Options{}), local.New(), clk)
	app := agents.New(cfg, agents.Deps{Classifier: risk.New(shellexpand.New()), Clock: clk, Audit: &memAudit{}, Terminals: host})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		require.NoError(t, app.Close(ctx))
		require.NoError(t, host.Stop(ctx))
	})
	return app, clk, host
}

func TestRealShellGetsStdoutStderrAndTheAgentEnvironment(t *testing.T) {
	app, _, _ := realGate(t, agents.Config{})
	s, err := app.CreateSession.Handle(ctxT(t), chatBot, agents.CreateSessionRequest{AgentID: "a", AgentRole: "chat_agent"})
	require.NoError(t, err)

	res, err := app.ExecuteCommand.Handle(ctxT(t), chatBot, agents.ExecuteRequest{
		SessionID: s.ID, Command: `echo "$PAGER $GIT_PAGER $GIT_TERMINAL_PROMPT"; echo to-err >&2; exit 4`,
	})

	require.NoError(t, err)
	require.Equal(t, "cat cat 0\n", res.Run.Stdout)
	require.Equal(t, "to-err\n", res.Run.Stderr)
	require.Equal(t, 4, res.Run.ReturnCode)
}

func TestTimedOutCommandWhoseOutputOutlivesItsGroupStillAnswers(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("needs setsid(1)")
	}
	app, clk, _ := realGate(t, agents.Config{CommandTimeout: time.Minute})
	s, err := app.CreateSession.Handle(ctxT(t), autoBot, agents.CreateSessionRequest{AgentID: "a", AgentRole: "automation_agent"})
	require.NoError(t, err)
	pidFile := filepath.Join(t.TempDir(), "pid")
	// The escapee leaves the command's process group and keeps its stdout.
	// It writes its pid itself once it has left ($! is known before the
	// child's setsid, and a kill in between would still reach it).
	cmd := "setsid sh -c 'echo ready; echo $$ > " + pidFile + ".tmp; mv " + pidFile + ".tmp " + pidFile + "; exec sleep 60' & wait"
	var escapee int
	t.Cleanup(func() {
		if escapee > 0 {
			_ = syscall.Kill(escapee, syscall.SIGKILL)
		}
	})

	done := make(chan execOutcome, 1)
	go func() {
		r, err := app.ExecuteCommand.Handle(context.Background(), autoBot, agents.ExecuteRequest{SessionID: s.ID, Command: cmd})
		done <- execOutcome{r, err}
	}()
	require.Eventually(t, func() bool {
		raw, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		escapee, err = strconv.Atoi(strings.TrimSpace(string(raw)))
		return err == nil
	}, waitFor, 5*time.Millisecond)
	ctx := ctxT(t)
	require.NoError(t, clk.BlockUntil(ctx, 1))
	clk.Advance(time.Minute)
	require.NoError(t, clk.BlockUntil(ctx, 1), "the grace timer is set once the group is killed")
	clk.Advance(5 * time.Second)

	out := wait(t, done)
	require.NoError(t, out.err)
	require.True(t, out.res.Run.TimedOut)
	require.Equal(t, "SIGKILL", out.res.Run.Signal)
	require.Equal(t, "ready\n", out.res.Run.Stdout)
	require.NoError(t, syscall.Kill(escapee, syscall.SIGKILL), "the escapee was still running")
}
