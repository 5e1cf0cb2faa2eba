package terminals_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/clock"
	"github.com/shellgate/shellgate/adapters/spawner/fake"
	"github.com/shellgate/shellgate/app/gate"
	"github.com/shellgate/shellgate/app/gate/gatetest"
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/access"
	"github.com/shellgate/shellgate/domain/terminal"
)

type directory = gatetest.Directory

func newDirectory() *directory {
	d := &directory{ByToken: map[string]access.Principal{}, RoleSet: access.NewRoles(
		access.Role{Name: "reader", Grants: []access.Grant{access.MustParseGrant("terminal:output")}})}
	for _, role := range []string{access.RoleAdmin, access.RoleMember, access.RoleViewer, access.RoleGuest, "reader"} {
		d.ByToken["t-"+role] = access.Principal{ID: role[:2], Roles: []string{role}}
	}
	return d
}

// appFixture is the use cases over a host of fake processes.
type appFixture struct {
	t    *testing.T
	host *terminals.Host
	app  *terminals.App
	g    *gate.Gate
}

func newApp(t *testing.T) *appFixture {
	t.Helper()
	host := terminals.New(terminals.Config{Shell: "/bin/sh", Dir: t.TempDir()}, hub.New(hub.Options{}), fake.New(), clock.System())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		require.NoError(t, host.Stop(ctx))
	})
	g := gate.New(newDirectory())
	return &appFixture{t: t, host: host, app: terminals.NewApp(host, g), g: g}
}

// as signs a role's principal in; "" is nobody, "root" the daemon itself.
func (f *appFixture) as(role string) terminals.Caller {
	switch role {
	case "":
		return terminals.Caller{}
	case "root":
		return terminals.Caller{Root: true}
	}
	c, ok := f.g.SignIn("t-" + role)
	require.True(f.t, ok)
	return c
}

// open starts a terminal as the daemon itself, for the others to use.
func (f *appFixture) open(uri string) {
	f.t.Helper()
	require.NoError(f.t, f.app.OpenTerminal.Handle(context.Background(), f.as("root"), terminals.OpenRequest{Spec: terminals.Spec{URI: uri, Claim: terminal.ClientHolds("test")}}))
}

// outcome is how a use case answered: "ok", "signin" (nobody, asked to
// sign in) or "denied" (a missing grant).
func outcome(t *testing.T, err error) string {
	t.Helper()
	var denied *access.DeniedError
	switch {
	case err == nil:
		return "ok"
	case errorsIs(err, gate.ErrSignIn):
		return "signin"
	case errorsAs(err, &denied):
		return "denied"
	}
	t.Fatalf("neither allowed nor refused for its grants: %v", err)
	return ""
}

// dispatched is how a dispatch was answered: "ok", or the refusal's reason.
func dispatched(v *terminals.Viewer, applied bool) string {
	for _, ev := range v.Take() {
		if ev.Rejection != "" {
			return ev.Rejection
		}
	}
	v.Settle()
	if applied {
		return "ok"
	}
	return "not applied, not refused"
}

// TestEveryRoleAgainstEveryUseCase runs the access table at the use-case
// level, with no protocol: each role's principal asks each use case, and
// the answer is its grants' (D3: guest holds nothing; viewer watches;
// member works; admin and the daemon itself may do everything).
func TestEveryRoleAgainstEveryUseCase(t *testing.T) {
	roles := []string{"", access.RoleGuest, access.RoleViewer, "reader", access.RoleMember, access.RoleAdmin, "root"}
	type useCase struct {
		name string
		// want per role, in roles' order
		want []string
		run  func(f *appFixture, who terminals.Caller, uri string) string
	}
	work := []string{"signin", "denied", "denied", "denied", "ok", "ok", "ok"}
	read := []string{"signin", "denied", "ok", "ok", "ok", "ok", "ok"}
	dispatch := func(a terminal.Action, op access.Operation) useCase {
		want := []string{"Sign in to use this host: %s needs " + string(op), "gu may not " + string(op) + " here",
			"vi may not " + string(op) + " here", "re may not " + string(op) + " here", "ok", "ok", "ok"}
		return useCase{"dispatch " + a.Type(), want, func(f *appFixture, who terminals.Caller, uri string) string {
			v := f.app.NewViewer(0)
			defer f.app.Leave(v)
			applied := f.app.DispatchAction.Handle(context.Background(), who, terminals.DispatchRequest{
				Viewer: v, Channel: uri, Type: a.Type(), Action: a, Echo: a, Origin: &terminals.Origin{ClientID: "c"}})
			return dispatched(v, applied)
		}}
	}
	cases := []useCase{
		{"open", work, func(f *appFixture, who terminals.Caller, uri string) string {
			return outcome(t, f.app.OpenTerminal.Handle(context.Background(), who, terminals.OpenRequest{Spec: terminals.Spec{URI: uri + "-new", Claim: terminal.ClientHolds("c")}}))
		}},
		{"dispose", work, func(f *appFixture, who terminals.Caller, uri string) string {
			return outcome(t, f.app.DisposeTerminal.Handle(context.Background(), who, terminals.DisposeRequest{URI: uri}))
		}},
		{"subscribe to a terminal", read, func(f *appFixture, who terminals.Caller, uri string) string {
			v := f.app.NewViewer(0)
			defer f.app.Leave(v)
			return outcome(t, f.app.Subscribe.Handle(context.Background(), who, terminals.SubscribeRequest{Viewer: v, Channels: []string{uri}, Then: func([]terminals.ChannelSnapshot, uint64) {}}))
		}},
		{"subscribe to the root list", []string{"ok", "ok", "ok", "ok", "ok", "ok", "ok"}, func(f *appFixture, who terminals.Caller, _ string) string {
			v := f.app.NewViewer(0)
			defer f.app.Leave(v)
			return outcome(t, f.app.Subscribe.Handle(context.Background(), who, terminals.SubscribeRequest{Viewer: v, Channels: []string{terminals.RootChannel}, Then: func([]terminals.ChannelSnapshot, uint64) {}}))
		}},
		{"resume a terminal", []string{"missing", "missing", "ok", "ok", "ok", "ok", "ok"}, func(f *appFixture, who terminals.Caller, uri string) string {
			v := f.app.NewViewer(0)
			defer f.app.Leave(v)
			var got terminals.ResumeResult
			require.NoError(t, f.app.Resume.Handle(context.Background(), who, terminals.ResumeRequest{Viewer: v, Channels: []string{uri}, Then: func(r terminals.ResumeResult) { got = r }}))
			if len(got.Missing) > 0 {
				return "missing"
			}
			return "ok"
		}},
		{"unsubscribe", []string{"ok", "ok", "ok", "ok", "ok", "ok", "ok"}, func(f *appFixture, who terminals.Caller, uri string) string {
			v := f.app.NewViewer(0)
			defer f.app.Leave(v)
			return outcome(t, f.app.Unsubscribe.Handle(context.Background(), who, terminals.UnsubscribeRequest{Viewer: v, Channel: uri}))
		}},
		{"feed input", work, func(f *appFixture, who terminals.Caller, uri string) string {
			fed := make(chan error, 1)
			err := f.app.FeedInput.Handle(context.Background(), who, terminals.FeedRequest{URI: uri, Offset: 0, Bytes: []byte("x"),
				Fed: func(_ int64, err error) { fed <- err }})
			if err == nil {
				select {
				case ferr := <-fed:
					require.NoError(t, ferr, "an allowed feed reaches the process")
				case <-time.After(waitFor):
					t.Fatal("an allowed feed was never answered")
				}
			}
			return outcome(t, err)
		}},
		dispatch(terminal.Input{Data: "x"}, access.TerminalInput),
		dispatch(terminal.Resized{Cols: 100, Rows: 30}, access.TerminalResize),
		dispatch(terminal.Claimed{Claim: terminal.ClientHolds("c")}, access.TerminalClaim),
		dispatch(terminal.TitleChanged{Title: "renamed"}, access.TerminalRename),
		dispatch(terminal.Cleared{}, access.TerminalClear),
	}
	for _, uc := range cases {
		for i, role := range roles {
			name := role
			if name == "" {
				name = "nobody"
			}
			t.Run(uc.name+"/"+name, func(t *testing.T) {
				f := newApp(t)
				uri := "ahp-terminal:/t"
				f.open(uri)
				want := uc.want[i]
				if strings.Contains(want, "%s") {
					want = fmt.Sprintf(want, uri)
				}
				require.Equal(t, want, uc.run(f, f.as(role), uri))
				_, err := f.host.Get(uri)
				if uc.name == "dispose" && want == "ok" {
					require.ErrorIs(t, err, terminals.ErrNotFound, "disposed")
				} else {
					require.NoError(t, err, "a refused dispose leaves the terminal")
				}
			})
		}
	}
}

// TestDispatchReasons: a refused dispatch is worded for its sender, by
// what the action needs (moved here from the gate, with the table it
// reads).
func TestDispatchReasons(t *testing.T) {
	f := newApp(t)
	f.open("ahp-terminal:/T1")
	reason := func(who terminals.Caller, channel string, a terminal.Action) string {
		v := f.app.NewViewer(0)
		defer f.app.Leave(v)
		return dispatched(v, f.app.DispatchAction.Handle(context.Background(), who, terminals.DispatchRequest{
			Viewer: v, Channel: channel, Type: a.Type(), Action: a, Echo: a, Origin: &terminals.Origin{ClientID: "c"}}))
	}
	config := configAction{}
	require.Equal(t, "Sign in to use this host: ahp-terminal:/T1 needs terminal:input", reason(f.as(""), "ahp-terminal:/T1", terminal.Input{Data: "x"}))
	require.Equal(t, "re may not terminal:input here", reason(f.as("reader"), "ahp-terminal:/T1", terminal.Input{Data: "x"}))
	require.Equal(t, "ok", reason(f.as(access.RoleMember), "ahp-terminal:/T1", terminal.Resized{Cols: 90, Rows: 20}))
	require.Equal(t, "Sign in to use this host: ahp-root://", reason(f.as(""), terminals.RootChannel, config))
	require.Equal(t, "ok", reason(f.as(access.RoleGuest), terminals.RootChannel, config), "defaultShell needs a sign-in only")
}

// configAction stands for the adapter's root/configChanged.
type configAction struct{}

func (configAction) Type() string { return terminals.RootConfigChanged }

// TestTheOneListOfDispatchableActions: every client action is there once,
// with the operation it needs; the root's setting needs a sign-in only.
func TestTheOneListOfDispatchableActions(t *testing.T) {
	require.Equal(t, []string{terminals.RootConfigChanged, terminal.TypeClaimed, terminal.TypeCleared, terminal.TypeInput, terminal.TypeResized, terminal.TypeTitleChanged}, terminals.Dispatchable())
	op, ok := terminals.DispatchOperation(terminal.TypeInput)
	require.True(t, ok)
	require.Equal(t, access.TerminalInput, op)
	_, ok = terminals.DispatchOperation(terminals.RootConfigChanged)
	require.False(t, ok, "a sign-in, no operation")
	_, ok = terminals.DispatchOperation(terminal.TypeData)
	require.False(t, ok, "the host's to say")
}

// TestAnAppGivenNoGateLetsNobodyIn: there is no permissive default.
func TestAnAppGivenNoGateLetsNobodyIn(t *testing.T) {
	f := newApp(t)
	app := terminals.NewApp(f.host, nil)
	err := app.OpenTerminal.Handle(context.Background(), terminals.Caller{ID: "someone"}, terminals.OpenRequest{Spec: terminals.Spec{URI: "ahp-terminal:/x", Claim: terminal.ClientHolds("c")}})
	require.ErrorIs(t, err, gate.ErrSignIn)
	require.NoError(t, terminals.NewApp(f.host, gate.AllowAll()).OpenTerminal.Handle(context.Background(), terminals.Caller{Root: true},
		terminals.OpenRequest{Spec: terminals.Spec{URI: "ahp-terminal:/x", Claim: terminal.ClientHolds("c")}}), "AllowAll is said, where a review sees it")
}

func errorsIs(err, target error) bool     { return errors.Is(err, target) }
func errorsAs(err error, target any) bool { return errors.As(err, target) }
