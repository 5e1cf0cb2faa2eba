package httpserver

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type ctxKey struct{}

// countingListener counts the connections it hands out.
type countingListener struct {
	net.Listener
	accepted *atomic.Int32
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// TestServerUsesTheListenerAndConnectionContextItIsGiven: the hooks a
// transport plugs in see every connection under the requests served.
func TestServerUsesTheListenerAndConnectionContextItIsGiven(t *testing.T) {
	var accepted atomic.Int32
	s := New(Options{
		Listen:       "127.0.0.1:0",
		WrapListener: func(ln net.Listener) net.Listener { return countingListener{ln, &accepted} },
		ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
			return context.WithValue(ctx, ctxKey{}, "from the hook")
		},
	}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, _ := r.Context().Value(ctxKey{}).(string)
		_, _ = io.WriteString(w, v)
	}), slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, s.Start(ctx))
	defer func() { require.NoError(t, s.Stop(ctx)) }()

	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(s.BaseURL() + "/")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())

	require.Equal(t, "from the hook", string(body))
	require.Equal(t, int32(1), accepted.Load())
}
