package ahpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shellgate/shellgate/tests/ahpclient"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func requireNoRPCError(t *testing.T, rpcErr *ahpclient.RPCError) {
	t.Helper()
	if rpcErr != nil {
		require.FailNow(t, "unexpected rpc error", rpcErr.Error())
	}
}

// dial connects to the fake server's AHP endpoint and closes the client at the end of the test.
func dial(t *testing.T, f *fakeServer, opts ahpclient.DialOptions) *ahpclient.Client {
	t.Helper()
	c, err := ahpclient.Dial(testContext(t), f.url("/ahp"), opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

// initialized is dial plus a successful initialize as clientID.
func initialized(t *testing.T, f *fakeServer, clientID string) *ahpclient.Client {
	t.Helper()
	c := dial(t, f, ahpclient.DialOptions{})
	_, rpcErr, err := c.Initialize(testContext(t), clientID, nil, nil)
	require.NoError(t, err)
	requireNoRPCError(t, rpcErr)
	return c
}

// push makes the fake server send frames verbatim, after answering the request.
func push(t *testing.T, c *ahpclient.Client, frames ...string) {
	t.Helper()
	raw := make([]json.RawMessage, len(frames))
	for i, f := range frames {
		raw[i] = json.RawMessage(f)
	}
	_, rpcErr, err := c.Call(testContext(t), "x-test/push", map[string]any{"channel": RootURI, "frames": raw})
	require.NoError(t, err)
	requireNoRPCError(t, rpcErr)
}

func TestDialSendsBearerTokenAndOrigin(t *testing.T) {
	f := newFakeServer(t)
	dial(t, f, ahpclient.DialOptions{Token: "tok-1", Origin: "https://app.example"})
	r := <-f.upgrades
	require.Equal(t, "Bearer tok-1", r.Header.Get("Authorization"))
	require.Equal(t, "https://app.example", r.Header.Get("Origin"))
	require.Empty(t, r.URL.Query().Get("token"))
}

func TestDialSendsQueryToken(t *testing.T) {
	f := newFakeServer(t)
	dial(t, f, ahpclient.DialOptions{QueryToken: "a b&c", Header: http.Header{"X-Probe": {"1"}}})
	r := <-f.upgrades
	require.Equal(t, "a b&c", r.URL.Query().Get("token"))
	require.Empty(t, r.Header.Get("Authorization"))
	require.Equal(t, "1", r.Header.Get("X-Probe"))
}

func TestDialRefusalReportsHTTPStatusAndBody(t *testing.T) {
	f := newFakeServer(t)
	_, err := ahpclient.Dial(testContext(t), f.url("/refuse"), ahpclient.DialOptions{})
	var de *ahpclient.DialError
	require.ErrorAs(t, err, &de)
	require.Equal(t, http.StatusUnauthorized, de.StatusCode)
	require.Contains(t, string(de.Body), "sign in first")
}

func TestInitializeDecodesResultAndSnapshots(t *testing.T) {
	f := newFakeServer(t)
	c := dial(t, f, ahpclient.DialOptions{})
	res, rpcErr, err := c.Initialize(testContext(t), "c1", []string{"1.0.0"}, []string{ahpclient.RootChannel})
	require.NoError(t, err)
	requireNoRPCError(t, rpcErr)

	require.Equal(t, "1.0.0", res.ProtocolVersion)
	require.Equal(t, uint64(10), res.ServerSeq)
	require.Equal(t, uint64(10), c.LastServerSeq())
	require.Equal(t, "c1", c.ClientID())
	require.True(t, ahpclient.HasField(res.Raw, "x-extra"), "unknown fields stay in Raw")

	snap, ok := res.Snapshot(ahpclient.RootChannel)
	require.True(t, ok)
	root, err := snap.Root()
	require.NoError(t, err)
	require.NotNil(t, root.Agents)
	require.Empty(t, root.Agents)
	info, ok := root.Terminal("ahp-terminal:/t1")
	require.True(t, ok)
	require.Equal(t, "bash", info.Title)
	require.Equal(t, &ahpclient.Claim{Kind: "client", ClientID: "c1"}, info.Claim)
	require.Equal(t, "running", info.Lifecycle.Status)
	require.False(t, ahpclient.HasField(info.Raw, "exitCode"))
}

func TestProtocolErrorIsSeparateFromTransportError(t *testing.T) {
	f := newFakeServer(t)
	c := dial(t, f, ahpclient.DialOptions{})

	_, rpcErr, err := c.Initialize(testContext(t), "c1", []string{}, nil)
	require.NoError(t, err)
	require.NotNil(t, rpcErr)
	require.Equal(t, -32005, rpcErr.Code)
	require.JSONEq(t, `{"supportedVersions":["1.0.0"]}`, string(rpcErr.Data))

	result, rpcErr, err := c.Call(testContext(t), "listSessions", map[string]any{"channel": ahpclient.RootChannel})
	require.NoError(t, err)
	require.Nil(t, result)
	require.Equal(t, -32601, rpcErr.Code)
	require.Equal(t, "This host does not serve listSessions yet", rpcErr.Message)
}

func TestNullResultIsKeptVerbatim(t *testing.T) {
	f := newFakeServer(t)
	c := dial(t, f, ahpclient.DialOptions{})
	rpcErr, err := c.Ping(testContext(t))
	require.NoError(t, err)
	requireNoRPCError(t, rpcErr)

	resp, err := c.CallResponse(testContext(t), "ping", map[string]any{"channel": ahpclient.RootChannel})
	require.NoError(t, err)
	require.Equal(t, uint64(2), resp.ID, "ids count from 1")
	require.Equal(t, "null", string(resp.Result))
	require.JSONEq(t, `{"jsonrpc":"2.0","id":2,"result":null}`, string(resp.Raw))
}

func TestResponsesAreRoutedByID(t *testing.T) {
	f := newFakeServer(t)
	c := dial(t, f, ahpclient.DialOptions{})
	ctx := testContext(t)

	type answer struct {
		res json.RawMessage
		err error
	}
	held := make(chan answer, 1)
	go func() {
		res, _, err := c.Call(ctx, "x-test/hold", map[string]any{"channel": ahpclient.RootChannel})
		held <- answer{res, err}
	}()
	// The fake announces the held request, then answers it only after answering release.
	n, err := c.WaitNotification(ctx, func(n ahpclient.Notification) bool { return n.Method == "x-test/held" })
	require.NoError(t, err)
	require.Equal(t, ahpclient.RootChannel, n.Channel)

	res, rpcErr, err := c.Call(ctx, "x-test/release", map[string]any{"channel": ahpclient.RootChannel})
	require.NoError(t, err)
	requireNoRPCError(t, rpcErr)
	require.JSONEq(t, `"release"`, string(res))
	h := <-held
	require.NoError(t, h.err)
	require.JSONEq(t, `"hold"`, string(h.res))

	msgs := c.Messages()
	require.Len(t, msgs, 3)
	require.JSONEq(t, `{"jsonrpc":"2.0","id":2,"result":"release"}`, string(msgs[1].Raw))
	require.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":"hold"}`, string(msgs[2].Raw))
}

func TestDispatchNumbersClientSeqAndWaitsForEcho(t *testing.T) {
	f := newFakeServer(t)
	c := initialized(t, f, "c1")
	ctx := testContext(t)
	const term = "ahp-terminal:/t1"

	seq, err := c.Dispatch(ctx, term, ahpclient.ResizedAction(100, 40))
	require.NoError(t, err)
	require.Equal(t, int64(1), seq)
	seq, err = c.Dispatch(ctx, term, ahpclient.TitleChangedAction("build"))
	require.NoError(t, err)
	require.Equal(t, int64(2), seq)
	require.NoError(t, c.DispatchSeq(ctx, term, 7, ahpclient.ClearedAction()))
	seq, err = c.Dispatch(ctx, term, ahpclient.InputAction("ls\r"))
	require.NoError(t, err)
	require.Equal(t, int64(3), seq, "DispatchSeq does not move the counter")

	env, err := c.WaitAction(ctx, ahpclient.MatchOrigin(term, 2))
	require.NoError(t, err)
	require.Equal(t, "terminal/titleChanged", env.Type)
	require.Equal(t, "build", *env.View().Title)
	require.Equal(t, &ahpclient.Origin{ClientID: "c1", ClientSeq: 2}, env.Origin)

	// Predicates run outside the client's lock, so they may call the client.
	env, err = c.WaitAction(ctx, func(e ahpclient.Envelope) bool {
		return e.Origin != nil && e.Origin.ClientID == c.ClientID() && e.Origin.ClientSeq == 7
	})
	require.NoError(t, err)
	require.Equal(t, "terminal/cleared", env.Type)

	env, err = c.WaitAction(ctx, ahpclient.Match(term, "terminal/data"))
	require.NoError(t, err)
	require.Nil(t, env.Origin)
	require.False(t, ahpclient.HasField(env.Raw, "origin"), "server-originated envelopes omit origin")
	require.Equal(t, uint64(15), env.ServerSeq)
	require.Equal(t, uint64(15), c.LastServerSeq())

	all := c.Actions()
	require.Len(t, all, 5)
	resized := all[0].View()
	require.Equal(t, 100, *resized.Cols)
	require.Equal(t, 40, *resized.Rows)
}

func TestWaitActionConsumesInOrder(t *testing.T) {
	f := newFakeServer(t)
	c := dial(t, f, ahpclient.DialOptions{})
	ctx := testContext(t)
	push(t, c,
		`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-terminal:/a","action":{"type":"terminal/titleChanged","title":"one"},"serverSeq":1}}`,
		`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-terminal:/a","action":{"type":"terminal/cwdChanged","cwd":"file:///tmp"},"serverSeq":2}}`,
		`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-terminal:/a","action":{"type":"terminal/titleChanged","title":"two"},"serverSeq":3}}`,
	)

	env, err := c.WaitAction(ctx, ahpclient.Match("", "terminal/titleChanged"))
	require.NoError(t, err)
	require.Equal(t, "one", *env.View().Title)
	env, err = c.WaitAction(ctx, ahpclient.Match("", "terminal/titleChanged"))
	require.NoError(t, err)
	require.Equal(t, "two", *env.View().Title)

	// The cwd envelope was passed over; a later wait for it does not go back.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = c.WaitAction(short, ahpclient.Match("", "terminal/cwdChanged"))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "waiting for an action")
	require.Len(t, c.Actions(), 3)
}

func TestRawFramesKeepExactShapes(t *testing.T) {
	f := newFakeServer(t)
	c := dial(t, f, ahpclient.DialOptions{})
	ctx := testContext(t)
	frame := `{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-terminal:/a","action":{"type":"terminal/input","data":"x","x-extra":1},"serverSeq":4,"origin":{"clientId":"c9","clientSeq":3},"rejectionReason":"no"}}`
	push(t, c, frame)

	env, err := c.WaitAction(ctx, ahpclient.Match("ahp-terminal:/a", ""))
	require.NoError(t, err)
	require.True(t, env.Rejected())
	require.Equal(t, "no", *env.RejectionReason)
	require.JSONEq(t, `{"type":"terminal/input","data":"x","x-extra":1}`, string(env.Action))
	require.Equal(t, ahpclient.Fields(json.RawMessage(frame))["params"], env.Raw)

	msg, err := c.WaitMessage(ctx, func(m ahpclient.Message) bool { return m.Method == "action" })
	require.NoError(t, err)
	require.Equal(t, frame, string(msg.Raw))
	require.Empty(t, c.Output("ahp-terminal:/a"), "rejected echoes are not output")
}

func TestSubscribeDecodesTerminalSnapshot(t *testing.T) {
	f := newFakeServer(t)
	c := initialized(t, f, "c1")
	snap, rpcErr, err := c.Subscribe(testContext(t), "ahp-terminal:/t1")
	require.NoError(t, err)
	requireNoRPCError(t, rpcErr)
	require.Equal(t, "ahp-terminal:/t1", snap.Resource)
	require.Equal(t, uint64(10), snap.FromSeq)

	st, err := snap.Terminal()
	require.NoError(t, err)
	require.Equal(t, "bash", st.Title)
	require.Equal(t, 80, *st.Cols)
	require.True(t, *st.IsPty)
	require.Nil(t, st.Cwd)
	require.Equal(t, "running", st.Lifecycle.Status)
	require.Equal(t, "$ ", st.Text())
	require.JSONEq(t, `[{"type":"unclassified","value":"$ "}]`, string(ahpclient.Fields(st.Raw)["content"]))
	require.NoError(t, c.Unsubscribe(testContext(t), "ahp-terminal:/t1"))
}

func TestWaitOutputAccumulatesChunksAndAdvances(t *testing.T) {
	f := newFakeServer(t)
	c := dial(t, f, ahpclient.DialOptions{})
	ctx := testContext(t)
	data := func(seq int, channel, s string) string {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "action", "params": map[string]any{
			"channel": channel, "serverSeq": seq, "action": map[string]any{"type": "terminal/data", "data": s},
		}})
		return string(b)
	}
	push(t, c,
		data(1, "ahp-terminal:/a", "$ echo hel"),
		data(2, "ahp-terminal:/b", "hello world"),
		data(3, "ahp-terminal:/a", "lo\r\nhel"),
		data(4, "ahp-terminal:/a", "lo\r\n$ "),
	)

	got, err := c.WaitOutput(ctx, "ahp-terminal:/a", "hello")
	require.NoError(t, err)
	require.Equal(t, "$ echo hello", got)
	got, err = c.WaitOutput(ctx, "ahp-terminal:/a", "hello")
	require.NoError(t, err)
	require.Equal(t, "\r\nhello", got)
	got, err = c.WaitOutput(ctx, "ahp-terminal:/a", "$ ")
	require.NoError(t, err)
	require.Equal(t, "\r\n$ ", got)
	require.Equal(t, "hello world", c.Output("ahp-terminal:/b"))

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = c.WaitOutput(short, "ahp-terminal:/a", "hello")
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestOtherNotificationsGoToTheirOwnInbox(t *testing.T) {
	f := newFakeServer(t)
	c := dial(t, f, ahpclient.DialOptions{})
	push(t, c, `{"jsonrpc":"2.0","method":"auth/required","params":{"channel":"ahp-root://","resource":{"resource":"https://auth.example/termd"},"reason":"expired"}}`)

	n, err := c.WaitNotification(testContext(t), func(n ahpclient.Notification) bool { return n.Method == "auth/required" })
	require.NoError(t, err)
	require.Equal(t, ahpclient.RootChannel, n.Channel)
	require.Nil(t, n.ID)
	require.JSONEq(t, `"expired"`, string(ahpclient.Fields(n.Params)["reason"]))
	require.Empty(t, c.Actions())
}

func TestMalformedFrameAnswerIsVisible(t *testing.T) {
	f := newFakeServer(t)
	c := dial(t, f, ahpclient.DialOptions{})
	ctx := testContext(t)
	require.NoError(t, c.Send(ctx, []byte(`{"jsonrpc":"2.0","id":`)))

	msg, err := c.WaitMessage(ctx, ahpclient.Message.IsResponse)
	require.NoError(t, err)
	require.Equal(t, "null", string(msg.ID))
	require.Equal(t, -32700, msg.Error.Code)
	require.False(t, msg.Binary)
}

func TestReconnectRaisesLastServerSeq(t *testing.T) {
	f := newFakeServer(t)
	c := dial(t, f, ahpclient.DialOptions{})
	res, rpcErr, err := c.Reconnect(testContext(t), "c1", 12, []string{ahpclient.RootChannel, "ahp-terminal:/gone"})
	require.NoError(t, err)
	requireNoRPCError(t, rpcErr)
	require.Equal(t, "replay", res.Type)
	require.Equal(t, []string{"ahp-terminal:/gone"}, res.Missing)
	require.Len(t, res.Actions, 1)
	require.Equal(t, "terminal/data", res.Actions[0].Type)
	require.Equal(t, uint64(90), c.LastServerSeq())
	require.Equal(t, "c1", c.ClientID())
}

func TestServerCloseStatusIsReported(t *testing.T) {
	f := newFakeServer(t)
	c := dial(t, f, ahpclient.DialOptions{})
	ctx := testContext(t)
	require.NoError(t, c.Notify(ctx, "x-test/close", map[string]any{"channel": ahpclient.RootChannel, "code": 4001, "reason": "too slow"}))

	require.NoError(t, c.WaitClosed(ctx))
	code, reason := c.CloseStatus()
	require.Equal(t, websocket.StatusCode(4001), code)
	require.Equal(t, "too slow", reason)

	_, _, err := c.Call(ctx, "ping", map[string]any{"channel": ahpclient.RootChannel})
	require.ErrorIs(t, err, ahpclient.ErrClosed)
	_, err = c.WaitAction(ctx, ahpclient.Match("", ""))
	require.ErrorIs(t, err, ahpclient.ErrClosed)
	require.Contains(t, err.Error(), "4001")
}

func TestCloseFailsPendingCallsAndStopsTheReader(t *testing.T) {
	f := newFakeServer(t)
	c, err := ahpclient.Dial(testContext(t), f.url("/ahp"), ahpclient.DialOptions{})
	require.NoError(t, err)
	ctx := testContext(t)

	errs := make(chan error, 1)
	go func() {
		_, _, err := c.Call(ctx, "x-test/hold", map[string]any{"channel": ahpclient.RootChannel})
		errs <- err
	}()
	_, err = c.WaitNotification(ctx, func(n ahpclient.Notification) bool { return n.Method == "x-test/held" })
	require.NoError(t, err)

	require.NoError(t, c.Close())
	require.ErrorIs(t, <-errs, ahpclient.ErrClosed)
	select {
	case <-c.Closed():
	default:
		require.FailNow(t, "Close returned before the reader stopped")
	}
	require.NoError(t, c.Close(), "Close is idempotent")
	require.Error(t, c.Send(ctx, []byte(`{}`)))
}

func TestPauseReadingStopsAfterTheFrameInFlight(t *testing.T) {
	f := newFakeServer(t)
	c := dial(t, f, ahpclient.DialOptions{})
	ctx := testContext(t)
	rpcErr, err := c.Ping(ctx)
	require.NoError(t, err)
	requireNoRPCError(t, rpcErr)

	c.PauseReading()
	frames := []json.RawMessage{
		json.RawMessage(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-root://","action":{"type":"x-a"},"serverSeq":1}}`),
		json.RawMessage(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-root://","action":{"type":"x-b"},"serverSeq":2}}`),
		json.RawMessage(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-root://","action":{"type":"x-c"},"serverSeq":3}}`),
	}
	require.NoError(t, c.Notify(ctx, "x-test/push", map[string]any{"channel": ahpclient.RootChannel, "frames": frames}))

	// A reader already waiting for a frame when reading paused takes that
	// one, and no more; one that had not got back to its read yet takes
	// none. (Which of the two it was, the test cannot see: it asserted
	// one before, and a loaded CI run's reader had not got back.)
	require.LessOrEqual(t, len(c.Actions()), 1, "no more than the frame in flight is read while paused")

	c.ResumeReading()
	env, err := c.WaitAction(ctx, ahpclient.Match("", "x-c"))
	require.NoError(t, err)
	require.Equal(t, uint64(3), env.ServerSeq)
	var types []string
	for _, a := range c.Actions() {
		types = append(types, a.Type)
	}
	require.Equal(t, []string{"x-a", "x-b", "x-c"}, types, "every frame once, in order, after the pause")
}

func TestPausedClientLetsTheServerBackUp(t *testing.T) {
	f := newFakeServer(t)
	ctx := testContext(t)
	c, err := ahpclient.Dial(ctx, f.url("/flood"), ahpclient.DialOptions{
		PauseReading: true,
		HTTPClient:   smallBufferClient(),
	})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()

	written := <-f.flooded
	require.Positive(t, written)
	require.Empty(t, c.Actions(), "nothing is read while paused")

	c.ResumeReading()
	require.NoError(t, c.WaitClosed(ctx))
	require.Len(t, c.Actions(), written, "every frame written before the stall arrives after resuming")
	code, _ := c.CloseStatus()
	require.Equal(t, websocket.StatusCode(-1), code, "the fake drops the connection without a close frame")
	require.False(t, errors.Is(c.Err(), ahpclient.ErrClosed))
}
