package agents_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shellgate/shellgate/adapters/clock"
	"github.com/shellgate/shellgate/adapters/shellexpand"
	"github.com/shellgate/shellgate/adapters/spawner/fake"
	"github.com/shellgate/shellgate/app/agents"
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/access"
	"github.com/shellgate/shellgate/domain/risk"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

func TestMain(m *testing.M) {
	// The thread children are forked on lives as long as the process.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/shellgate/shellgate/adapters/spawner/internal/proc.spawnThread"))
}

const waitFor = 20 * time.Second

var t0 = time.Date(2025, 10, 4, 12, 0, 0, 0, time.UTC)

// memAudit is an in-memory ports.AuditSink that can be told to fail.
type memAudit struct {
	mu     sync.Mutex
	events []ports.AuditEvent
	fail   func(ports.AuditEvent) error
}

func (a *memAudit) Record(_ context.Context, e ports.AuditEvent) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fail != nil {
		if err := a.fail(e); err != nil {
			return err
		}
	}
	a.events = append(a.events, e)
	return nil
}

func (a *memAudit) failWhen(f func(ports.AuditEvent) error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.fail = f
}

func (a *memAudit) all() []ports.AuditEvent {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]ports.AuditEvent(nil), a.events...)
}

// kinds lists the recorded events as "kind/status".
func (a *memAudit) kinds() []string {
	var out []string
	for _, e := range a.all() {
		out = append(out, string(e.Event)+"/"+e.Status)
	}
	return out
}

var errDiskFull = errors.New("disk full")

type fixture struct {
	t     *testing.T
	clock *clock.Fake
	sp    *fake.Spawner
	host  *terminals.Host
	audit *memAudit
	app   *agents.App
	dir   string
	ids   int
}

// newFixture builds the gate over the fake spawner and the fake clock. The
// fake shell understands a few command lines (see shell).
func newFixture(t *testing.T, cfg agents.Config) *fixture {
	t.Helper()
	return newFixtureWith(t, cfg, nil)
}

// newFixtureWith is newFixture with a sandbox port (nil: none).
func newFixtureWith(t *testing.T, cfg agents.Config, sb ports.Sandbox) *fixture {
	t.Helper()
	f := &fixture{t: t, clock: clock.NewFake(t0), sp: fake.New(), audit: &memAudit{}, dir: t.TempDir()}
	f.sp.Register("sh", shell)
	f.host = terminals.New(terminals.Config{Shell: "/bin/sh", Dir: f.dir, Env: []string{"PATH=/bin", "PAGER=less"}}, hub.New(hub.Options{}), f.sp, f.clock)
	var mu sync.Mutex
	f.app = agents.New(cfg, agents.Deps{Classifier: risk.New(shellexpand.New()),
		Clock: f.clock, Audit: f.audit, Terminals: f.host, Sandbox: sb,
		NewID: func() string {
			mu.Lock()
			defer mu.Unlock()
			f.ids++
			return "id" + itoa(f.ids)
		},
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		require.NoError(t, f.app.Close(ctx))
		stopped := make(chan error, 1)
		go func() { stopped <- f.host.Stop(ctx) }()
		// The host waits StopGrace on the fake clock before SIGKILL; fake
		// processes die of the SIGTERM it sends first.
		require.NoError(t, <-stopped)
	})
	return f
}

func itoa(n int) string { return strconv.Itoa(n) }

// shell is the fake /bin/sh: it runs `-c <line>` for the lines the tests use.
func shell(p *fake.Process) terminal.ExitStatus {
	args := p.Spec().Args
	if len(args) != 2 || args[0] != "-c" {
		return terminal.ExitedWith(2)
	}
	line := args[1]
	switch {
	case strings.HasPrefix(line, "echo "):
		_ = p.Emit(strings.TrimPrefix(line, "echo ") + "\n")
		return terminal.ExitedWith(0)
	case line == "ls nothere":
		_ = p.Emit("listing\n")
		_ = p.EmitStderr("ls: nothere: No such file or directory\n")
		return terminal.ExitedWith(2)
	case line == "sleep 1000":
		<-p.Done()
		return terminal.ExitedWith(0)
	case strings.HasPrefix(line, "cat "):
		// cat <n>: n bytes of "é" (two bytes each), so a cap can split one.
		n := 0
		for _, r := range strings.TrimPrefix(line, "cat ") {
			n = n*10 + int(r-'0')
		}
		_ = p.Emit(strings.Repeat("é", n/2))
		return terminal.ExitedWith(0)
	case line == "uptime":
		p.Die(syscall.SIGTERM)
		return terminal.ExitedWith(0)
	}
	return terminal.ExitedWith(0)
}

// callers, as the REST adapter would resolve them.
var roles = access.NewRoles()

func caller(id string, roleNames ...string) agents.Caller {
	return agents.Caller{Principal: access.Principal{ID: id, Roles: roleNames}, Roles: roles}
}

var (
	chatBot  = caller("chatbot", access.RoleChatAgent)
	autoBot  = caller("autobot", access.RoleAutomationAgent)
	adminBot = caller("adminbot", access.RoleAdminAgent)
	ana      = caller("ana", access.RoleMember)
	boss     = caller("boss", access.RoleAdmin)
	guest    = caller("gus", access.RoleGuest)
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	t.Cleanup(cancel)
	return ctx
}

func (f *fixture) open(who agents.Caller, role string) agents.SessionView {
	f.t.Helper()
	v, err := f.app.CreateSession.Handle(ctxT(f.t), who, agents.CreateSessionRequest{
		AgentID: who.Principal.ID + "_1", AgentRole: role, ConversationID: "conv_" + who.Principal.ID,
	})
	require.NoError(f.t, err)
	return v
}

func (f *fixture) exec(who agents.Caller, session, command string) (agents.ExecuteResult, error) {
	f.t.Helper()
	return f.app.ExecuteCommand.Handle(ctxT(f.t), who, agents.ExecuteRequest{SessionID: session, Command: command, Description: "test: " + command})
}

// execAsync runs the command in the background, for commands the test must
// end itself.
func (f *fixture) execAsync(who agents.Caller, session, command string) <-chan execOutcome {
	ch := make(chan execOutcome, 1)
	go func() {
		r, err := f.app.ExecuteCommand.Handle(context.Background(), who, agents.ExecuteRequest{SessionID: session, Command: command})
		ch <- execOutcome{r, err}
	}()
	return ch
}

type execOutcome struct {
	res agents.ExecuteResult
	err error
}

func wait[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitFor):
		t.Fatal("timed out waiting")
		panic("unreachable")
	}
}
