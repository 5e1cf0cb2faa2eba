package memory_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shellgate/shellgate/adapters/transport/memory"
	"github.com/shellgate/shellgate/ports"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitCtx bounds every wait in these tests so a bug fails instead of hanging.
func waitCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func closeErr(t *testing.T, err error) *ports.CloseError {
	t.Helper()
	require.ErrorIs(t, err, ports.ErrConnClosed)
	var ce *ports.CloseError
	require.ErrorAs(t, err, &ce)
	return ce
}

var alice = ports.Peer{Token: "tok", RemoteAddr: "memory", Origin: "http://localhost"}

func TestPipeDeliversMessagesInOrderBothWays(t *testing.T) {
	ctx := waitCtx(t)
	server, client := memory.Pipe(alice)
	for i := range 10 {
		require.NoError(t, client.Write(ctx, []byte{byte(i)}))
		require.NoError(t, server.Write(ctx, []byte{byte(100 + i)}))
	}
	for i := range 10 {
		got, err := server.Read(ctx)
		require.NoError(t, err)
		require.Equal(t, []byte{byte(i)}, got)
		got, err = client.Read(ctx)
		require.NoError(t, err)
		require.Equal(t, []byte{byte(100 + i)}, got)
	}
}

func TestPipeCopiesMessagesSoNeitherSideAliasesTheOther(t *testing.T) {
	ctx := waitCtx(t)
	server, client := memory.Pipe(alice)
	msg := []byte(`{"jsonrpc":"2.0"}`)
	require.NoError(t, client.Write(ctx, msg))
	msg[0] = 'X'

	got, err := server.Read(ctx)
	require.NoError(t, err)
	require.Equal(t, `{"jsonrpc":"2.0"}`, string(got))
}

func TestPipeDeliversEmptyMessageAsNonNil(t *testing.T) {
	ctx := waitCtx(t)
	server, client := memory.Pipe(alice)
	require.NoError(t, client.Write(ctx, nil))
	got, err := server.Read(ctx)
	require.NoError(t, err)
	require.NotNil(t, got)
	require.Empty(t, got)
}

func TestBothEndsReportThePeerGivenAtConnect(t *testing.T) {
	server, client := memory.Pipe(alice)
	require.Equal(t, alice, server.Peer())
	require.Equal(t, alice, client.Peer())
}

func TestCloseReachesPeerReadAfterEarlierMessages(t *testing.T) {
	ctx := waitCtx(t)
	server, client := memory.Pipe(alice)
	require.NoError(t, server.Write(ctx, []byte("one")))
	require.NoError(t, server.Write(ctx, []byte("two")))
	require.NoError(t, server.Close(ports.ClosePolicy, "too slow"))

	for _, want := range []string{"one", "two"} {
		got, err := client.Read(ctx)
		require.NoError(t, err)
		require.Equal(t, want, string(got))
	}
	_, err := client.Read(ctx)
	require.Equal(t, &ports.CloseError{Code: ports.ClosePolicy, Reason: "too slow"}, closeErr(t, err))
}

func TestCloseWakesABlockedRead(t *testing.T) {
	ctx := waitCtx(t)
	server, client := memory.Pipe(alice)
	errc := make(chan error, 1)
	go func() {
		_, err := client.Read(ctx)
		errc <- err
	}()
	require.NoError(t, server.Close(ports.CloseGoingAway, "daemon stopping"))
	select {
	case err := <-errc:
		require.Equal(t, ports.CloseGoingAway, closeErr(t, err).Code)
	case <-ctx.Done():
		t.Fatal("blocked Read did not return after Close")
	}
}

func TestClosingSideReadsAndWritesNothingMore(t *testing.T) {
	ctx := waitCtx(t)
	server, client := memory.Pipe(alice)
	require.NoError(t, client.Write(ctx, []byte("unread")))
	require.NoError(t, server.Close(ports.CloseNormal, "bye"))
	require.NoError(t, server.Close(ports.CloseInternal, "second close is ignored"))

	want := &ports.CloseError{Code: ports.CloseNormal, Reason: "bye"}
	_, err := server.Read(ctx)
	require.Equal(t, want, closeErr(t, err))
	require.Equal(t, want, closeErr(t, server.Write(ctx, []byte("x"))))
	require.Equal(t, want, closeErr(t, client.Write(ctx, []byte("x"))))
}

func TestCloseWithUnsendableCodeOrLongReasonIsNormalised(t *testing.T) {
	ctx := waitCtx(t)
	server, client := memory.Pipe(alice)
	long := strings.Repeat("é", 100) // 200 bytes; a cut must not split a rune
	require.NoError(t, server.Close(ports.CloseAbnormal, long))

	_, err := client.Read(ctx)
	ce := closeErr(t, err)
	require.Equal(t, ports.CloseInternal, ce.Code)
	require.Len(t, ce.Reason, 122)
	require.True(t, strings.HasPrefix(long, ce.Reason))
}

func TestWriteWaitsWhenPeerDoesNotReadAndItsDeadlineEndsTheConnection(t *testing.T) {
	ctx := waitCtx(t)
	server, client := memory.PipeBuffer(alice, 2)
	require.NoError(t, server.Write(ctx, []byte("1")))
	require.NoError(t, server.Write(ctx, []byte("2")))

	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	err := server.Write(short, []byte("3"))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, ports.CloseAbnormal, closeErr(t, err).Code)

	// What was queued before the write was abandoned still arrives.
	for _, want := range []string{"1", "2"} {
		got, err := client.Read(ctx)
		require.NoError(t, err)
		require.Equal(t, want, string(got))
	}
	_, err = client.Read(ctx)
	require.Equal(t, ports.CloseAbnormal, closeErr(t, err).Code)
}

func TestUnbufferedPipeWriteWaitsForRead(t *testing.T) {
	ctx := waitCtx(t)
	server, client := memory.PipeBuffer(alice, 0)
	wrote := make(chan error, 1)
	go func() { wrote <- server.Write(ctx, []byte("hello")) }()

	got, err := client.Read(ctx)
	require.NoError(t, err)
	require.Equal(t, "hello", string(got))
	require.NoError(t, <-wrote)
}

func TestCancelledReadEndsTheConnection(t *testing.T) {
	ctx := waitCtx(t)
	server, client := memory.Pipe(alice)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err := server.Read(cctx)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, ports.CloseAbnormal, closeErr(t, err).Code)

	_, err = client.Read(ctx)
	require.Equal(t, ports.CloseAbnormal, closeErr(t, err).Code)
}

func TestOneReaderAndConcurrentWritersAreRaceFree(t *testing.T) {
	ctx := waitCtx(t)
	server, client := memory.PipeBuffer(alice, 1)
	const writers, each = 4, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := server.Write(ctx, []byte{byte(w), byte(i)}); err != nil {
					t.Errorf("write: %v", err)
					return
				}
			}
		})
	}
	// Each writer's own messages stay in order even when interleaved.
	next := make([]int, writers)
	for range writers * each {
		got, err := client.Read(ctx)
		require.NoError(t, err)
		require.Equal(t, next[got[0]], int(got[1]))
		next[got[0]]++
	}
	wg.Wait()
}

func TestListenerHandsDialledConnectionToAccept(t *testing.T) {
	ctx := waitCtx(t)
	l := memory.NewListener()
	defer l.Close()

	type dialled struct {
		c   ports.Conn
		err error
	}
	dc := make(chan dialled, 1)
	go func() {
		c, err := l.Dial(ctx, alice)
		dc <- dialled{c, err}
	}()
	server, err := l.Accept(ctx)
	require.NoError(t, err)
	d := <-dc
	require.NoError(t, d.err)
	require.Equal(t, alice, server.Peer())

	require.NoError(t, d.c.Write(ctx, []byte("ping")))
	got, err := server.Read(ctx)
	require.NoError(t, err)
	require.Equal(t, "ping", string(got))
}

func TestListenerCloseEndsPendingAcceptAndRefusesDials(t *testing.T) {
	ctx := waitCtx(t)
	l := memory.NewListener()
	errc := make(chan error, 1)
	go func() {
		_, err := l.Accept(ctx)
		errc <- err
	}()
	require.NoError(t, l.Close())
	select {
	case err := <-errc:
		require.ErrorIs(t, err, ports.ErrListenerClosed)
	case <-ctx.Done():
		t.Fatal("pending Accept did not return after Close")
	}
	_, err := l.Accept(ctx)
	require.ErrorIs(t, err, ports.ErrListenerClosed)
	_, err = l.Dial(ctx, alice)
	require.ErrorIs(t, err, ports.ErrListenerClosed)
	require.NoError(t, l.Close())
}

func TestListenerAcceptAndDialHonourContext(t *testing.T) {
	l := memory.NewListenerBuffer(0)
	defer l.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := l.Accept(ctx)
	require.ErrorIs(t, err, context.Canceled)
	_, err = l.Dial(ctx, alice)
	require.ErrorIs(t, err, context.Canceled)
}
