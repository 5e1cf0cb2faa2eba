package websocket_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ws "github.com/coder/websocket"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shellgate/shellgate/adapters/transport/websocket"
	"github.com/shellgate/shellgate/ports"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitCtx bounds every wait in these tests so a bug fails instead of hanging.
func waitCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

type fixture struct {
	srv  *websocket.Server
	hs   *httptest.Server
	url  string
	host string

	mu      sync.Mutex
	clients []*ws.Conn
}

// start serves a Server over a real loopback socket.
func start(t *testing.T, opts websocket.Options) *fixture {
	t.Helper()
	srv, err := websocket.New(opts)
	require.NoError(t, err)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		hs.Close()
	})
	return &fixture{srv: srv, hs: hs, url: hs.URL, host: hs.Listener.Addr().String()}
}

// dial opens a client connection, dropped at cleanup.
func (f *fixture) dial(t *testing.T, url string, opts *ws.DialOptions) *ws.Conn {
	t.Helper()
	c, _, err := ws.Dial(waitCtx(t), url, opts)
	require.NoError(t, err)
	f.mu.Lock()
	f.clients = append(f.clients, c)
	f.mu.Unlock()
	t.Cleanup(func() { _ = c.CloseNow() })
	return c
}

// dropClients ends every client socket, so that a server-side Close that
// follows does not wait for a close handshake nobody will answer.
func (f *fixture) dropClients() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.clients {
		_ = c.CloseNow()
	}
}

func (f *fixture) accept(t *testing.T) ports.Conn {
	t.Helper()
	c, err := f.srv.Accept(waitCtx(t))
	require.NoError(t, err)
	t.Cleanup(func() {
		f.dropClients()
		_ = c.Close(ports.CloseNormal, "test over")
	})
	return c
}

// connect dials and accepts one connection.
func (f *fixture) connect(t *testing.T, opts *ws.DialOptions) (*ws.Conn, ports.Conn) {
	t.Helper()
	client := f.dial(t, f.url, opts)
	return client, f.accept(t)
}

// refusal dials expecting the upgrade to be refused, and returns the status.
func refusal(t *testing.T, url string, opts *ws.DialOptions) (int, http.Header, string) {
	t.Helper()
	c, resp, err := ws.Dial(waitCtx(t), url, opts)
	if c != nil {
		_ = c.CloseNow()
	}
	require.Error(t, err)
	require.NotNil(t, resp)
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(body)
}

func closeErr(t *testing.T, err error) *ports.CloseError {
	t.Helper()
	require.ErrorIs(t, err, ports.ErrConnClosed)
	var ce *ports.CloseError
	require.ErrorAs(t, err, &ce)
	return ce
}

func TestServerReadsTextAndBinaryFramesAsMessages(t *testing.T) {
	ctx := waitCtx(t)
	f := start(t, websocket.Options{})
	client, server := f.connect(t, nil)

	require.NoError(t, client.Write(ctx, ws.MessageText, []byte(`{"jsonrpc":"2.0","method":"a"}`)))
	require.NoError(t, client.Write(ctx, ws.MessageBinary, []byte(`{"jsonrpc":"2.0","method":"b"}`)))

	got, err := server.Read(ctx)
	require.NoError(t, err)
	require.JSONEq(t, `{"jsonrpc":"2.0","method":"a"}`, string(got))
	got, err = server.Read(ctx)
	require.NoError(t, err)
	require.JSONEq(t, `{"jsonrpc":"2.0","method":"b"}`, string(got))
}

func TestServerWritesEachMessageAsOneTextFrame(t *testing.T) {
	ctx := waitCtx(t)
	f := start(t, websocket.Options{})
	client, server := f.connect(t, nil)

	msgs := []string{`{"jsonrpc":"2.0","id":1,"result":null}`, `{"jsonrpc":"2.0","method":"action"}`}
	for _, m := range msgs {
		require.NoError(t, server.Write(ctx, []byte(m)))
	}
	for _, m := range msgs {
		typ, got, err := client.Read(ctx)
		require.NoError(t, err)
		require.Equal(t, ws.MessageText, typ)
		require.Equal(t, m, string(got))
	}
}

func TestOversizedMessageClosesOnlyThatConnectionWith1009(t *testing.T) {
	ctx := waitCtx(t)
	f := start(t, websocket.Options{}) // the default 4 MiB limit
	big, bigServer := f.connect(t, nil)
	other, otherServer := f.connect(t, nil)

	// Exactly the limit is accepted.
	wrote := make(chan error, 1)
	go func() {
		wrote <- big.Write(ctx, ws.MessageBinary, bytes.Repeat([]byte("x"), int(websocket.DefaultReadLimit)))
	}()
	got, err := bigServer.Read(ctx)
	require.NoError(t, err)
	require.Len(t, got, int(websocket.DefaultReadLimit))
	require.NoError(t, <-wrote)

	// One byte more closes that connection.
	go func() {
		wrote <- big.Write(ctx, ws.MessageText, bytes.Repeat([]byte("x"), int(websocket.DefaultReadLimit)+1))
	}()
	_, err = bigServer.Read(ctx)
	require.Equal(t, ports.CloseMessageTooBig, closeErr(t, err).Code)
	require.Equal(t, ports.CloseMessageTooBig, closeErr(t, bigServer.Write(ctx, []byte("{}"))).Code)

	_, _, err = big.Read(ctx)
	var wce ws.CloseError
	require.ErrorAs(t, err, &wce)
	require.Equal(t, ws.StatusMessageTooBig, wce.Code)
	require.NotEmpty(t, wce.Reason)
	<-wrote // finished either way; the connection is gone

	// The other connection is untouched.
	require.NoError(t, other.Write(ctx, ws.MessageText, []byte(`{"still":"here"}`)))
	got, err = otherServer.Read(ctx)
	require.NoError(t, err)
	require.Equal(t, `{"still":"here"}`, string(got))
	require.NoError(t, otherServer.Write(ctx, []byte(`{"and":"back"}`)))
	_, got, err = other.Read(ctx)
	require.NoError(t, err)
	require.Equal(t, `{"and":"back"}`, string(got))
}

func TestInvalidUTF8TextClosesOnlyThatConnectionWith1007(t *testing.T) {
	ctx := waitCtx(t)
	f := start(t, websocket.Options{})
	bad, badServer := f.connect(t, nil)
	other, otherServer := f.connect(t, nil)

	// The same bytes in a binary frame are the peer's business, not UTF-8.
	require.NoError(t, bad.Write(ctx, ws.MessageBinary, []byte("{\xff}")))
	got, err := badServer.Read(ctx)
	require.NoError(t, err)
	require.Equal(t, "{\xff}", string(got))

	// The server's Read runs the close handshake, so the client must read.
	read := make(chan error, 1)
	go func() {
		_, err := badServer.Read(ctx)
		read <- err
	}()
	require.NoError(t, bad.Write(ctx, ws.MessageText, []byte("{\"jsonrpc\":\"2.0\",\"method\":\"\xc3\x28\"}")))
	_, _, err = bad.Read(ctx)
	var wce ws.CloseError
	require.ErrorAs(t, err, &wce)
	require.Equal(t, ws.StatusInvalidFramePayloadData, wce.Code)
	require.Contains(t, wce.Reason, "UTF-8")
	require.Equal(t, ports.CloseInvalidData, closeErr(t, <-read).Code)
	require.Equal(t, ports.CloseInvalidData, closeErr(t, badServer.Write(ctx, []byte("{}"))).Code)

	require.NoError(t, other.Write(ctx, ws.MessageText, []byte(`{"still":"\u00e9"}`)))
	got, err = otherServer.Read(ctx)
	require.NoError(t, err)
	require.Equal(t, `{"still":"\u00e9"}`, string(got))
}

func TestOriginIsCheckedBeforeUpgradeAndAuthorize(t *testing.T) {
	tests := []struct {
		name    string
		allowed []string
		origin  func(host string) string
		want    int // 0: upgraded
	}{
		{"no origin header is not a browser", nil, func(string) string { return "" }, 0},
		{"same host as the request", nil, func(h string) string { return "http://" + h }, 0},
		{"other host refused", nil, func(string) string { return "http://evil.example" }, http.StatusForbidden},
		{"malformed origin refused", nil, func(string) string { return "null" }, http.StatusForbidden},
		{"host pattern allowed", []string{"*.example.com"}, func(string) string { return "https://app.example.com" }, 0},
		{"scheme pattern is exact about the scheme", []string{"https://app.example.com"}, func(string) string { return "http://app.example.com" }, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var authorized atomic.Int32
			f := start(t, websocket.Options{
				AllowedOrigins: tt.allowed,
				Authorize: func(*http.Request, string) error {
					authorized.Add(1)
					return nil
				},
			})
			h := http.Header{}
			if o := tt.origin(f.host); o != "" {
				h.Set("Origin", o)
			}
			opts := &ws.DialOptions{HTTPHeader: h}
			if tt.want != 0 {
				status, _, _ := refusal(t, f.url, opts)
				require.Equal(t, tt.want, status)
				require.Zero(t, authorized.Load(), "Authorize must not run for a refused origin")
				return
			}
			f.dial(t, f.url, opts)
			server := f.accept(t)
			require.Equal(t, h.Get("Origin"), server.Peer().Origin)
			require.EqualValues(t, 1, authorized.Load())
		})
	}
}

func TestBearerTokenFromHeaderOrQueryReachesPeerAndAuthorize(t *testing.T) {
	tests := []struct {
		name   string
		header string
		query  string
		want   string
	}{
		{"authorization header", "Bearer hdr-tok", "", "hdr-tok"},
		{"scheme is case-insensitive", "bearer hdr-tok", "", "hdr-tok"},
		{"query parameter for browsers", "", "?token=q-tok", "q-tok"},
		{"header wins over query", "Bearer hdr-tok", "?token=q-tok", "hdr-tok"},
		{"other schemes are not bearer tokens", "Basic dXNlcjpwYXNz", "", ""},
		{"none", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := make(chan string, 1)
			f := start(t, websocket.Options{Authorize: func(_ *http.Request, token string) error {
				seen <- token
				return nil
			}})
			h := http.Header{}
			if tt.header != "" {
				h.Set("Authorization", tt.header)
			}
			f.dial(t, f.url+"/"+tt.query, &ws.DialOptions{HTTPHeader: h})
			server := f.accept(t)
			require.Equal(t, tt.want, <-seen)
			require.Equal(t, tt.want, server.Peer().Token)
			require.NotEmpty(t, server.Peer().RemoteAddr)
		})
	}
}

func TestAuthorizeRefusalAnswers401BeforeUpgrade(t *testing.T) {
	f := start(t, websocket.Options{Authorize: func(*http.Request, string) error {
		return errors.New("unknown token")
	}})
	status, header, body := refusal(t, f.url+"/?token=secret-tok", nil)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Contains(t, header.Get("WWW-Authenticate"), "Bearer")
	require.NotContains(t, body, "secret-tok")
	require.NotContains(t, body, "unknown token", "the hook's error is for logs, not the client")
}

// syncBuffer lets the server's handler goroutines log while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestRefusedUpgradeLogsNeitherTokenNorQuery(t *testing.T) {
	var logs syncBuffer
	f := start(t, websocket.Options{
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Authorize: func(*http.Request, string) error {
			return errors.New("unknown token")
		},
	})
	status, _, _ := refusal(t, f.url+"/ahp?token=secret-tok", nil)
	require.Equal(t, http.StatusUnauthorized, status)
	status, _, _ = refusal(t, f.url+"/ahp?token=secret-tok",
		&ws.DialOptions{HTTPHeader: http.Header{"Origin": {"http://evil.example"}}})
	require.Equal(t, http.StatusForbidden, status)

	out := logs.String()
	require.Contains(t, out, "not authorized")
	require.Contains(t, out, "origin not allowed")
	require.Contains(t, out, "/ahp")
	require.NotContains(t, out, "secret-tok")
	require.NotContains(t, out, "token=")
}

func TestPlainRequestAnswers426WithoutFallback(t *testing.T) {
	f := start(t, websocket.Options{})
	resp, err := http.Get(f.url + "/")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)

	require.Equal(t, http.StatusUpgradeRequired, resp.StatusCode)
	require.Equal(t, "websocket", resp.Header.Get("Upgrade"))
	require.Contains(t, string(body), "WebSocket endpoint")
	require.Equal(t, 1, strings.Count(string(body), "\n"), "one line of text")
}

func TestPlainRequestGoesToFallbackWhileUpgradesStillWork(t *testing.T) {
	ctx := waitCtx(t)
	f := start(t, websocket.Options{Fallback: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "the web page")
	})})
	resp, err := http.Get(f.url + "/")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "the web page", string(body))

	client, server := f.connect(t, nil)
	require.NoError(t, server.Write(ctx, []byte("{}")))
	_, got, err := client.Read(ctx)
	require.NoError(t, err)
	require.Equal(t, "{}", string(got))
}

func TestCloseSendsCodeAndReasonToClient(t *testing.T) {
	ctx := waitCtx(t)
	f := start(t, websocket.Options{})
	client, server := f.connect(t, nil)

	clientErr := make(chan error, 1)
	go func() {
		_, _, err := client.Read(ctx)
		clientErr <- err
	}()
	require.NoError(t, server.Close(ports.ClosePolicy, "queue overflow: reconnect"))

	var wce ws.CloseError
	require.ErrorAs(t, <-clientErr, &wce)
	require.Equal(t, ws.StatusPolicyViolation, wce.Code)
	require.Equal(t, "queue overflow: reconnect", wce.Reason)

	want := &ports.CloseError{Code: ports.ClosePolicy, Reason: "queue overflow: reconnect"}
	_, err := server.Read(ctx)
	require.Equal(t, want, closeErr(t, err))
	require.Equal(t, want, closeErr(t, server.Write(ctx, []byte("{}"))))
}

func TestCloseSendsUnsendableCodeAs1011AndCutsLongReason(t *testing.T) {
	ctx := waitCtx(t)
	f := start(t, websocket.Options{})
	client, server := f.connect(t, nil)

	clientErr := make(chan error, 1)
	go func() {
		_, _, err := client.Read(ctx)
		clientErr <- err
	}()
	long := strings.Repeat("é", 100) // 200 bytes; the cut must not split a rune
	require.NoError(t, server.Close(ports.CloseAbnormal, long))

	var wce ws.CloseError
	require.ErrorAs(t, <-clientErr, &wce)
	require.Equal(t, ws.StatusInternalError, wce.Code)
	require.Len(t, wce.Reason, 122)
	require.True(t, strings.HasPrefix(long, wce.Reason))
}

func TestClientCloseReachesServerRead(t *testing.T) {
	ctx := waitCtx(t)
	f := start(t, websocket.Options{})
	client, server := f.connect(t, nil)

	closed := make(chan error, 1)
	go func() { closed <- client.Close(4001, "bye") }()
	_, err := server.Read(ctx)
	require.Equal(t, &ports.CloseError{Code: 4001, Reason: "bye"}, closeErr(t, err))
	require.NoError(t, <-closed)
}

func TestServerCloseEndsPendingAcceptAndRefusesUpgrades(t *testing.T) {
	ctx := waitCtx(t)
	f := start(t, websocket.Options{})
	accepted := make(chan error, 1)
	go func() {
		_, err := f.srv.Accept(ctx)
		accepted <- err
	}()
	require.NoError(t, f.srv.Close())

	select {
	case err := <-accepted:
		require.ErrorIs(t, err, ports.ErrListenerClosed)
	case <-ctx.Done():
		t.Fatal("pending Accept did not return after Close")
	}
	_, err := f.srv.Accept(ctx)
	require.ErrorIs(t, err, ports.ErrListenerClosed)

	status, _, _ := refusal(t, f.url, nil)
	require.Equal(t, http.StatusServiceUnavailable, status)
}

func TestServerCloseSendsGoingAwayToUnacceptedConnection(t *testing.T) {
	ctx := waitCtx(t)
	f := start(t, websocket.Options{})
	client := f.dial(t, f.url, nil)

	clientErr := make(chan error, 1)
	go func() {
		_, _, err := client.Read(ctx)
		clientErr <- err
	}()
	require.NoError(t, f.srv.Close())
	require.Equal(t, ws.StatusGoingAway, ws.CloseStatus(<-clientErr))
}

func TestAcceptReturnsWhenContextEnds(t *testing.T) {
	f := start(t, websocket.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := f.srv.Accept(ctx)
	require.ErrorIs(t, err, context.Canceled)
}

func TestPeerThatStopsAnsweringPingsIsDropped(t *testing.T) {
	ctx := waitCtx(t)
	f := start(t, websocket.Options{PingInterval: 20 * time.Millisecond, PingTimeout: 50 * time.Millisecond})
	// The client reads (so it is not merely slow) but never answers a ping.
	client, server := f.connect(t, &ws.DialOptions{
		OnPingReceived: func(context.Context, []byte) bool { return false },
	})
	clientErr := make(chan error, 1)
	go func() {
		_, _, err := client.Read(ctx)
		clientErr <- err
	}()

	_, err := server.Read(ctx)
	ce := closeErr(t, err)
	require.Equal(t, ports.CloseAbnormal, ce.Code)
	require.Contains(t, ce.Reason, "ping")
	require.Error(t, <-clientErr, "the client sees its connection end")
}

func TestPeerThatAnswersPingsStaysConnected(t *testing.T) {
	ctx := waitCtx(t)
	f := start(t, websocket.Options{PingInterval: 5 * time.Millisecond, PingTimeout: 5 * time.Second})
	pings := make(chan struct{}, 100)
	client, server := f.connect(t, &ws.DialOptions{
		OnPingReceived: func(context.Context, []byte) bool {
			select {
			case pings <- struct{}{}:
			default:
			}
			return true
		},
	})
	// Pongs are noticed by the server's reader, as in the daemon.
	serverErr := make(chan error, 1)
	go func() {
		_, err := server.Read(ctx)
		serverErr <- err
	}()
	// The client keeps reading, so it also answers the close handshake.
	clientGot := make(chan string, 1)
	go func() {
		for {
			_, msg, err := client.Read(ctx)
			if err != nil {
				return
			}
			clientGot <- string(msg)
		}
	}()

	for range 5 {
		select {
		case <-pings:
		case <-ctx.Done():
			t.Fatal("server stopped pinging")
		}
	}
	require.NoError(t, server.Write(ctx, []byte(`{"alive":true}`)))
	require.Equal(t, `{"alive":true}`, <-clientGot)

	require.NoError(t, server.Close(ports.CloseNormal, ""))
	require.Equal(t, ports.CloseNormal, closeErr(t, <-serverErr).Code)
}

// TestWriteTimeoutDropsPeerThatStopsReading, with messages written
// straight from themselves and, on the daemon's listener, small ones
// gathered on their own (whose write happens at the flush).
func TestWriteTimeoutDropsPeerThatStopsReading(t *testing.T) {
	for name, startServer := range bothListeners {
		for _, size := range []int{8 << 10, 1 << 20} {
			t.Run(fmt.Sprintf("%s, %d bytes", name, size), func(t *testing.T) {
				ctx := waitCtx(t)
				f := startServer(t, websocket.Options{PingInterval: -1, WriteTimeout: 50 * time.Millisecond})
				_, server := f.connect(t, nil)

				// The client never reads: once the socket buffers fill, a Write stalls.
				chunk := bytes.Repeat([]byte("x"), size)
				var err error
				for i := 0; err == nil && i < 1<<30/size; i++ {
					err = server.Write(ctx, chunk)
				}
				ce := closeErr(t, err)
				require.Equal(t, ports.CloseAbnormal, ce.Code)
				require.Contains(t, ce.Reason, "did not take a message")
			})
		}
	}
}

func TestWritesFromOneGoroutineWhileAnotherReads(t *testing.T) {
	ctx := waitCtx(t)
	f := start(t, websocket.Options{})
	client, server := f.connect(t, nil)
	const n = 200

	var wg sync.WaitGroup
	wg.Go(func() { // the daemon's writer
		for i := range n {
			if err := server.Write(ctx, []byte{byte(i)}); err != nil {
				t.Errorf("server write: %v", err)
				return
			}
		}
	})
	wg.Go(func() { // the client's writer
		for i := range n {
			if err := client.Write(ctx, ws.MessageBinary, []byte{byte(i)}); err != nil {
				t.Errorf("client write: %v", err)
				return
			}
		}
	})
	wg.Go(func() { // the client's reader
		for i := range n {
			_, got, err := client.Read(ctx)
			if err != nil || got[0] != byte(i) {
				t.Errorf("client read %d: %v %v", i, got, err)
				return
			}
		}
	})
	for i := range n { // the daemon's reader
		got, err := server.Read(ctx)
		require.NoError(t, err)
		require.Equal(t, []byte{byte(i)}, got)
	}
	wg.Wait()
}

func TestNewRejectsMalformedOriginPattern(t *testing.T) {
	_, err := websocket.New(websocket.Options{AllowedOrigins: []string{"[bad"}})
	require.ErrorContains(t, err, "[bad")
}
