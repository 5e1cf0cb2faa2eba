package ahp_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/ahp"
	"github.com/shellgate/shellgate/adapters/transport/memory"
	"github.com/shellgate/shellgate/app/gate"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/access"
	"github.com/shellgate/shellgate/ports"
)

// TestEveryDispatchableActionIsDecoded fails when the router's table of
// actions and the host's one list of dispatchable actions differ.
func TestEveryDispatchableActionIsDecoded(t *testing.T) {
	require.Equal(t, terminals.Dispatchable(), ahp.DispatchableActions())
}

// TestEveryMethodNamesAUseCaseTheAppHas: the table's use-case column
// names fields of terminals.App.
func TestEveryMethodNamesAUseCaseTheAppHas(t *testing.T) {
	app := reflect.TypeOf(terminals.App{})
	for _, m := range ahp.Methods() {
		useCase, _ := ahp.MethodOperation(m)
		if useCase == "" {
			continue
		}
		_, ok := app.FieldByName(useCase)
		require.True(t, ok, "%s names %s, which terminals.App does not have", m, useCase)
	}
}

// directory is an in-memory users directory: one guest, who may sign in
// and do nothing else.
type directory struct{}

func (directory) Lookup(tok string) (access.Principal, bool) {
	if tok != "t-guest" {
		return access.Principal{}, false
	}
	return access.Principal{ID: "gus", Roles: []string{access.RoleGuest}}, true
}

func (d directory) Principal(id string) (access.Principal, bool) {
	if id != "gus" {
		return access.Principal{}, false
	}
	return d.Lookup("t-guest")
}
func (directory) Roles() *access.Roles { return access.NewRoles() }
func (directory) Generation() uint64   { return 0 }

// TestTheMethodTableSaysWhatEachUseCaseNeeds: every method the table
// says needs an operation is refused, naming it, to a signed-in guest,
// who holds none: the use case behind it checks what the table says.
func TestTheMethodTableSaysWhatEachUseCaseNeeds(t *testing.T) {
	r := newRigWith(t, gate.New(directory{}), ahp.Options{})
	server, cl := memory.Pipe(ports.Peer{RemoteAddr: "test", Token: "t-guest"})
	done := make(chan struct{})
	go func() { defer close(done); r.srv.Serve(context.Background(), server) }()
	t.Cleanup(func() { _ = cl.Close(ports.CloseNormal, ""); <-done })
	c := &client{t: t, conn: cl}
	c.initialize("guest")
	checked := 0
	for _, m := range ahp.Methods() {
		useCase, op := ahp.MethodOperation(m)
		if op == "" {
			continue
		}
		require.NotEmpty(t, useCase, "%s needs %s of no use case", m, op)
		got := c.call(m, map[string]any{"channel": "ahp-terminal:/t"})
		require.Equal(t, float64(ahp.CodePermissionDenied), errCode(got), "%s by a guest: %v", m, got)
		require.Contains(t, got["error"].(map[string]any)["message"], string(op), "%s's refusal names %s", m, op)
		checked++
	}
	require.NotZero(t, checked)
}
