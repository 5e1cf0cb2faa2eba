package ahp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shellgate/shellgate/adapters/ahp"
	"github.com/shellgate/shellgate/adapters/clock"
	"github.com/shellgate/shellgate/adapters/spawner/local"
	"github.com/shellgate/shellgate/adapters/transport/memory"
	"github.com/shellgate/shellgate/app/gate"
	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

func TestMain(m *testing.M) {
	// The thread children are forked on lives as long as the process.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/shellgate/shellgate/adapters/spawner/internal/proc.spawnThread"))
}

const deadline = 20 * time.Second

// rig is a protocol server over in-memory connections and real pipes.
type rig struct {
	t    *testing.T
	host *terminals.Host
	srv  *ahp.Server
}

func newRig(t *testing.T) *rig { return newRigWith(t, gate.AllowAll(), ahp.Options{}) }

func newRigWith(t *testing.T, g *gate.Gate, opts ahp.Options) *rig {
	t.Helper()
	h := hub.New(hub.Options{})
	host := terminals.New(terminals.Config{Shell: "/bin/sh", Env: []string{"PATH=" + os.Getenv("PATH")}, Dir: t.TempDir()}, h, local.New(), clock.System())
	srv := ahp.NewServer(terminals.NewApp(host, g), clock.System(), slog.New(slog.NewTextHandler(io.Discard, nil)), opts)
	t.Cleanup(func() {
		srv.Close("test over")
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		require.NoError(t, host.Stop(ctx))
	})
	return &rig{t: t, host: host, srv: srv}
}

// client is a bare JSON client over the memory transport.
type client struct {
	t      *testing.T
	conn   ports.Conn
	nextID int
	inbox  []map[string]any
}

func (r *rig) dial() *client {
	server, cl := memory.Pipe(ports.Peer{RemoteAddr: "test"})
	done := make(chan struct{})
	go func() { defer close(done); r.srv.Serve(context.Background(), server) }()
	r.t.Cleanup(func() { _ = cl.Close(ports.CloseNormal, ""); <-done })
	return &client{t: r.t, conn: cl}
}

func (c *client) send(v any) {
	c.t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(c.t, err)
	c.sendRaw(string(raw))
}

func (c *client) sendRaw(s string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	require.NoError(c.t, c.conn.Write(ctx, []byte(s)))
}

// next reads until a message matching want arrives; others are kept.
func (c *client) next(what string, want func(map[string]any) bool) map[string]any {
	c.t.Helper()
	for i, m := range c.inbox {
		if want(m) {
			c.inbox = append(c.inbox[:i], c.inbox[i+1:]...)
			return m
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	for {
		raw, err := c.conn.Read(ctx)
		require.NoError(c.t, err, "waiting for %s", what)
		var m map[string]any
		require.NoError(c.t, json.Unmarshal(raw, &m))
		if want(m) {
			return m
		}
		c.inbox = append(c.inbox, m)
	}
}

func (c *client) call(method string, params map[string]any) map[string]any {
	c.t.Helper()
	c.nextID++
	id := float64(c.nextID)
	params["channel"] = orDefault(params["channel"], "ahp-root://")
	c.send(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	return c.next(method+" answer", func(m map[string]any) bool { return m["id"] == id })
}

func orDefault(v any, d string) any {
	if v == nil {
		return d
	}
	return v
}

func (c *client) initialize(id string, subs ...string) map[string]any {
	c.t.Helper()
	res := c.call("initialize", map[string]any{"protocolVersions": []string{"1.0.0"}, "clientId": id, "initialSubscriptions": subs})
	require.Nil(c.t, res["error"])
	return res["result"].(map[string]any)
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	if e == nil {
		return 0
	}
	return e["code"].(float64)
}

func errMessage(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	if e == nil {
		return ""
	}
	return e["message"].(string)
}

func isAction(channel, typ string) func(map[string]any) bool {
	return func(m map[string]any) bool {
		if m["method"] != "action" {
			return false
		}
		p := m["params"].(map[string]any)
		a := p["action"].(map[string]any)
		return p["channel"] == channel && a["type"] == typ
	}
}

func (c *client) output(channel, want string) {
	c.t.Helper()
	var got strings.Builder
	c.next(fmt.Sprintf("output %q", want), func(m map[string]any) bool {
		if isAction(channel, "terminal/data")(m) {
			got.WriteString(m["params"].(map[string]any)["action"].(map[string]any)["data"].(string))
		}
		return strings.Contains(got.String(), want)
	})
}

func TestTerminalOpensRunsAndExitsOverTheProtocol(t *testing.T) {
	r := newRig(t)
	c := r.dial()
	res := c.initialize("c1", "ahp-root://")
	require.Equal(t, "1.0.0", res["protocolVersion"])
	root := res["snapshots"].([]any)[0].(map[string]any)
	require.Equal(t, map[string]any{"agents": []any{}, "terminals": []any{}}, root["state"])

	created := c.call("createTerminal", map[string]any{"channel": "ahp-terminal:/t1", "name": "job",
		"_meta": map[string]any{"shellgate/spawn": map[string]any{"command": "read x; echo got $x; exit 4"}}})
	require.Contains(t, created, "result")
	require.Nil(t, created["result"])
	changed := c.next("root list", isAction("ahp-root://", "root/terminalsChanged"))
	list := changed["params"].(map[string]any)["action"].(map[string]any)["terminals"].([]any)
	require.Equal(t, "job", list[0].(map[string]any)["title"])

	sub := c.call("subscribe", map[string]any{"channel": "ahp-terminal:/t1"})
	snap := sub["result"].(map[string]any)["snapshot"].(map[string]any)
	state := snap["state"].(map[string]any)
	require.Equal(t, []any{}, state["content"])
	require.Equal(t, false, state["isPty"])
	require.Equal(t, map[string]any{"kind": "client", "clientId": "c1"}, state["claim"])

	c.send(map[string]any{"jsonrpc": "2.0", "method": "dispatchAction", "params": map[string]any{
		"channel": "ahp-terminal:/t1", "clientSeq": 1, "action": map[string]any{"type": "terminal/input", "data": "hello\n"}}})
	echo := c.next("input echo", isAction("ahp-terminal:/t1", "terminal/input"))
	require.Equal(t, map[string]any{"clientId": "c1", "clientSeq": float64(1)}, echo["params"].(map[string]any)["origin"])
	c.output("ahp-terminal:/t1", "got hello\n")
	exited := c.next("exit", isAction("ahp-terminal:/t1", "terminal/exited"))
	require.Equal(t, float64(4), exited["params"].(map[string]any)["action"].(map[string]any)["exitCode"])
	require.NotContains(t, exited["params"], "origin", "server actions carry no origin")
}

// _meta["shellgate/spawn"].awaitViewer holds the output for the first
// subscriber: the command has written everything and exited before the
// subscribe, yet the snapshot is empty and every line comes as data.
func TestAwaitViewerKeepsTheOutputForTheFirstSubscriber(t *testing.T) {
	r := newRig(t)
	c := r.dial()
	c.initialize("c1")
	printed := filepath.Join(t.TempDir(), "printed")
	created := c.call("createTerminal", map[string]any{"channel": "ahp-terminal:/held",
		"_meta": map[string]any{"shellgate/spawn": map[string]any{"awaitViewer": true,
			"command": `i=0; while [ $i -lt 500 ]; do echo line-$i; i=$((i+1)); done; : > "$PRINTED"`,
			"env":     map[string]any{"PRINTED": printed}}}})
	require.Contains(t, created, "result")
	require.Eventually(t, func() bool { _, err := os.Stat(printed); return err == nil }, deadline, 10*time.Millisecond,
		"the command never finished printing")

	sub := c.call("subscribe", map[string]any{"channel": "ahp-terminal:/held"})
	state := sub["result"].(map[string]any)["snapshot"].(map[string]any)["state"].(map[string]any)
	require.Equal(t, []any{}, state["content"], "nothing was read before the subscribe")
	var all strings.Builder
	for i := range 500 {
		fmt.Fprintf(&all, "line-%d\n", i)
	}
	c.output("ahp-terminal:/held", all.String())
	exited := c.next("exit", isAction("ahp-terminal:/held", "terminal/exited"))
	require.Equal(t, float64(0), exited["params"].(map[string]any)["action"].(map[string]any)["exitCode"])
}

func TestErrorsAreAnsweredAndTheConnectionCarriesOn(t *testing.T) {
	r := newRig(t)
	c := r.dial()

	c.nextID++
	c.sendRaw(`{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"channel":"ahp-root://"}}`)
	early := c.next("early", func(m map[string]any) bool { return m["id"] == float64(1) })
	require.Equal(t, float64(-32601), errCode(early))
	require.Equal(t, "This host does not serve subscribe before initialize", errMessage(early))

	c.sendRaw(`{not json`)
	parse := c.next("parse error", func(m map[string]any) bool { return errCode(m) == -32700 })
	require.Nil(t, parse["id"])

	ping := c.call("ping", map[string]any{})
	require.Contains(t, ping, "result")
	require.Nil(t, ping["result"])

	c.initialize("c2")
	require.Equal(t, float64(-32601), errCode(c.call("nope/method", map[string]any{})))
	again := c.call("initialize", map[string]any{"protocolVersions": []string{"1.0.0"}, "clientId": "c2"})
	require.Equal(t, "c2 has already initialized", errMessage(again))
	require.Equal(t, float64(-32602), errCode(c.call("createTerminal", map[string]any{"channel": 7})))
	require.Equal(t, "channel must be a string", errMessage(c.call("subscribe", map[string]any{"channel": 7})))
	require.Equal(t, "T1 is not a terminal URI", errMessage(c.call("createTerminal", map[string]any{"channel": "T1"})))
	require.Equal(t, "That is not a terminal claim", errMessage(c.call("createTerminal", map[string]any{"channel": "ahp-terminal:/x", "claim": map[string]any{"kind": "user"}})))
	require.Equal(t, "No terminal at ahp-terminal:/gone", errMessage(c.call("disposeTerminal", map[string]any{"channel": "ahp-terminal:/gone"})))
	require.Equal(t, float64(-32008), errCode(c.call("subscribe", map[string]any{"channel": "ahp-terminal:/gone"})))

	ok := c.call("createTerminal", map[string]any{"channel": "ahp-terminal:/dup"})
	require.NotContains(t, ok, "error")
	dup := c.call("createTerminal", map[string]any{"channel": "ahp-terminal:/dup"})
	require.Equal(t, float64(-32003), errCode(dup))
	require.Equal(t, "ahp-terminal:/dup already exists", errMessage(dup))
	require.NotContains(t, c.call("ping", map[string]any{}), "error", "the connection is still usable")
}

func TestVersionNegotiation(t *testing.T) {
	tests := []struct {
		offered []string
		want    string
		code    float64
	}{
		{[]string{"0.5.1"}, "0.5.1", 0},
		{[]string{"0.9.0", "1.0.0"}, "1.0.0", 0},
		{[]string{"1.1.0", "1.0.0", "0.10.0", "0.9.0", "0.5.2", "0.5.1"}, "1.0.0", 0},
		{[]string{"1.0.3", "1.0.0"}, "1.0.3", 0},
		{[]string{"1.1.0"}, "", -32005},
		{[]string{"0.10.0"}, "", -32005},
		{[]string{"0.5.0"}, "", -32005},
		{[]string{"2.0.0", "0.4.0"}, "", -32005},
		{[]string{"1.0"}, "", -32602},
		{[]string{"01.0.0"}, "", -32602},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.offered, ","), func(t *testing.T) {
			r := newRig(t)
			c := r.dial()
			res := c.call("initialize", map[string]any{"protocolVersions": tt.offered, "clientId": "v"})
			require.Equal(t, tt.code, errCode(res), "%v", res)
			if tt.code == 0 {
				require.Equal(t, tt.want, res["result"].(map[string]any)["protocolVersion"])
			}
			if tt.code == -32005 {
				data := res["error"].(map[string]any)["data"].(map[string]any)
				require.NotEmpty(t, data["supportedVersions"])
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				defer cancel()
				_, err := c.conn.Read(ctx)
				require.Error(t, err, "the connection is closed after -32005")
			}
		})
	}
}

func TestRejectedDispatchIsEchoedToTheSenderAlone(t *testing.T) {
	r := newRig(t)
	a, b := r.dial(), r.dial()
	a.initialize("a")
	b.initialize("b")
	require.NotContains(t, a.call("createTerminal", map[string]any{"channel": "ahp-terminal:/r"}), "error")
	a.call("subscribe", map[string]any{"channel": "ahp-terminal:/r"})
	b.call("subscribe", map[string]any{"channel": "ahp-terminal:/r"})
	a.send(map[string]any{"jsonrpc": "2.0", "method": "dispatchAction", "params": map[string]any{
		"channel": "ahp-terminal:/r", "clientSeq": 9, "action": map[string]any{"type": "terminal/data", "data": "fake"}}})
	rej := a.next("rejection", isAction("ahp-terminal:/r", "terminal/data"))
	require.Equal(t, "terminal/data is this host's to say, not a client's", rej["params"].(map[string]any)["rejectionReason"])
	firstSeq := rej["params"].(map[string]any)["serverSeq"].(float64)
	a.send(map[string]any{"jsonrpc": "2.0", "method": "dispatchAction", "params": map[string]any{
		"channel": "ahp-terminal:/nope", "clientSeq": 10, "action": map[string]any{"type": "terminal/input", "data": "x"}}})
	rej = a.next("rejection", isAction("ahp-terminal:/nope", "terminal/input"))
	require.Equal(t, "terminal/input names nothing here (data)", rej["params"].(map[string]any)["rejectionReason"])
	// b then sees a rename, and nothing of a's rejections.
	a.send(map[string]any{"jsonrpc": "2.0", "method": "dispatchAction", "params": map[string]any{
		"channel": "ahp-terminal:/r", "clientSeq": 11, "action": map[string]any{"type": "terminal/titleChanged", "title": "new"}}})
	got := b.next("rename", func(m map[string]any) bool { return m["method"] == "action" })
	require.Equal(t, "terminal/titleChanged", got["params"].(map[string]any)["action"].(map[string]any)["type"])
	// Each rejection took its own number: none is shared with the envelope
	// before it or after it (D17).
	secondSeq := rej["params"].(map[string]any)["serverSeq"].(float64)
	renameSeq := a.next("rename echo", isAction("ahp-terminal:/r", "terminal/titleChanged"))["params"].(map[string]any)["serverSeq"].(float64)
	require.Less(t, firstSeq, secondSeq)
	require.Less(t, secondSeq, renameSeq)
}

func claimOf(id string) terminal.Claim { return terminal.ClientHolds(id) }

func (c *client) dispatchInput(channel string, seq int, data string) {
	c.t.Helper()
	c.send(map[string]any{"jsonrpc": "2.0", "method": "dispatchAction", "params": map[string]any{
		"channel": channel, "clientSeq": seq, "action": map[string]any{"type": "terminal/input", "data": data}}})
}

// waitClosed reads until the server ends the connection and returns why.
func (c *client) waitClosed() *ports.CloseError {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	for {
		_, err := c.conn.Read(ctx)
		if err != nil {
			var ce *ports.CloseError
			require.ErrorAs(c.t, err, &ce)
			return ce
		}
	}
}

// A client id has one live connection: a second connection under it takes
// it over (the first is told why and closed), and its own clientSeq
// counting from 1 is applied, not swallowed as already seen.
func TestASecondConnectionUnderOneClientIDTakesItOver(t *testing.T) {
	r := newRig(t)
	first := r.dial()
	first.initialize("tab", "ahp-root://")
	require.Contains(t, first.call("createTerminal", map[string]any{"channel": "ahp-terminal:/cat",
		"_meta": map[string]any{"shellgate/spawn": map[string]any{"command": "exec cat"}}}), "result")
	first.call("subscribe", map[string]any{"channel": "ahp-terminal:/cat"})
	for seq := 101; seq <= 105; seq++ {
		first.dispatchInput("ahp-terminal:/cat", seq, fmt.Sprintf("first-%d\n", seq))
	}
	first.output("ahp-terminal:/cat", "first-105\n")

	second := r.dial()
	second.initialize("tab")
	closed := first.waitClosed()
	require.Equal(t, ports.ClosePolicy, closed.Code)
	require.Contains(t, closed.Reason, "tab connected again on another connection")

	second.call("subscribe", map[string]any{"channel": "ahp-terminal:/cat"})
	second.dispatchInput("ahp-terminal:/cat", 1, "second-1\n")
	echo := second.next("input echo", isAction("ahp-terminal:/cat", "terminal/input"))
	require.Equal(t, map[string]any{"clientId": "tab", "clientSeq": float64(1)}, echo["params"].(map[string]any)["origin"])
	second.output("ahp-terminal:/cat", "second-1\n")
}

// A subscribe answer carries the terminal's scrollback, and subscribe may
// be asked again and again: its size counts against the connection's bound,
// so a client cannot pile up snapshots it does not read.
func TestSubscribeAnswersCountAgainstTheConnectionsBound(t *testing.T) {
	r := newRigWith(t, gate.AllowAll(), ahp.Options{QueueBytes: 64 << 10})
	for uri, command := range map[string]string{
		"ahp-terminal:/small": "echo small",
		"ahp-terminal:/big":   "head -c 200000 /dev/zero | tr '\\0' x",
	} {
		term, err := r.host.Create(context.Background(), terminals.Spec{URI: uri, Command: command, Claim: claimOf("setup")})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		_, err = term.Wait(ctx)
		cancel()
		require.NoError(t, err)
	}
	c := r.dial()
	c.initialize("reader")
	small := c.call("subscribe", map[string]any{"channel": "ahp-terminal:/small"})
	require.Contains(t, small, "result", "a snapshot within the bound is answered")

	c.send(map[string]any{"jsonrpc": "2.0", "id": 99, "method": "subscribe", "params": map[string]any{"channel": "ahp-terminal:/big"}})
	closed := c.waitClosed()
	require.Equal(t, ports.ClosePolicy, closed.Code)
	require.Contains(t, closed.Reason, "fell more than 65536 bytes behind")
}

// writerGoroutines counts the goroutines writing for a connection.
func writerGoroutines() int {
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	return strings.Count(stacks, "adapters/ahp.(*conn).writeQueued")
}

// TestAConnectionWritesOnAGoroutineOnlyWhileItHasSomethingToWrite: an idle
// connection keeps no writing goroutine (and its stack) waiting; output
// that the read loop does not send itself still arrives, in order, and the
// goroutine that wrote it ends once the queue is empty.
func TestAConnectionWritesOnAGoroutineOnlyWhileItHasSomethingToWrite(t *testing.T) {
	r := newRig(t)
	c := r.dial()
	c.initialize("c1", "ahp-root://")
	c.call("createTerminal", map[string]any{"channel": "ahp-terminal:/w", "name": "w",
		"_meta": map[string]any{"shellgate/spawn": map[string]any{"command": "read x; i=0; while [ $i -lt 200 ]; do echo line-$i; i=$((i+1)); done; read y"}}})
	c.call("subscribe", map[string]any{"channel": "ahp-terminal:/w"})
	c.send(map[string]any{"jsonrpc": "2.0", "method": "dispatchAction", "params": map[string]any{
		"channel": "ahp-terminal:/w", "clientSeq": 1, "action": map[string]any{"type": "terminal/input", "data": "go\n"}}})
	c.output("ahp-terminal:/w", "line-199\n")

	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	for writerGoroutines() > 0 {
		select {
		case <-ctx.Done():
			t.Fatalf("a writing goroutine is still there with nothing to write: %d", writerGoroutines())
		case <-time.After(time.Millisecond):
		}
	}
	// Idle now: the next output starts a writer again and arrives.
	c.send(map[string]any{"jsonrpc": "2.0", "method": "dispatchAction", "params": map[string]any{
		"channel": "ahp-terminal:/w", "clientSeq": 2, "action": map[string]any{"type": "terminal/input", "data": "done\n"}}})
	exited := c.next("exit", isAction("ahp-terminal:/w", "terminal/exited"))
	require.NotNil(t, exited)
}

// TestAServerGivenNoGateLetsNobodyIn: with no gate the server has no
// permissive default. A connection may introduce itself, but it is
// nobody: it cannot open a terminal, and no token signs it in. Serving
// every connection as the daemon's own takes gate.AllowAll().
func TestAServerGivenNoGateLetsNobodyIn(t *testing.T) {
	r := newRigWith(t, nil, ahp.Options{})
	c := r.dial()
	c.initialize("c1")
	created := c.call("createTerminal", map[string]any{"channel": "ahp-terminal:/t"})
	require.NotZero(t, errCode(created), "nobody may open a terminal: %v", created)
	_, err := r.host.Get("ahp-terminal:/t")
	require.ErrorIs(t, err, terminals.ErrNotFound, "and none was opened")

	open := newRigWith(t, gate.AllowAll(), ahp.Options{})
	c2 := open.dial()
	c2.initialize("c2")
	created = c2.call("createTerminal", map[string]any{"channel": "ahp-terminal:/t"})
	require.Nil(t, created["error"], "AllowAll serves every connection as the daemon's own")
}

// TestACommandSentAsANotificationIsDecidedToo: createTerminal without an
// id gets no answer, and is still decided by its use case: nobody's opens
// nothing.
func TestACommandSentAsANotificationIsDecidedToo(t *testing.T) {
	r := newRigWith(t, nil, ahp.Options{})
	c := r.dial()
	c.initialize("c1")
	c.send(map[string]any{"jsonrpc": "2.0", "method": "createTerminal", "params": map[string]any{"channel": "ahp-terminal:/n"}})
	c.call("ping", map[string]any{}) // answered after the notification was handled
	_, err := r.host.Get("ahp-terminal:/n")
	require.ErrorIs(t, err, terminals.ErrNotFound)
}
