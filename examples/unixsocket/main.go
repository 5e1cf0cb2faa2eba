// Command unixsocket embeds shellgate and serves its terminals over AHP on
// a unix socket as well as its usual listener: a real shell per terminal,
// reached by whoever may open the socket (it is made 0600) and signs in
// with the admin token it prints.
//
//	go run ./examples/unixsocket /tmp/shellgate.sock /tmp/shellgate-data
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/adapters/transport/websocket"
	"github.com/shellgate/shellgate/ports"
)

func main() {
	// The daemon's run guard (and sandbox helper) are this executable.
	if code, ok := shellgate.Helper(os.Args); ok {
		os.Exit(code)
	}
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: unixsocket SOCKET DATA_DIR")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1], os.Args[2], os.Stderr, func(token string) {
		fmt.Printf("serving AHP on %s; sign in with the bearer token %s\n", os.Args[1], token)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "unixsocket:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends. ready gets the admin's token once the socket
// accepts connections.
func run(ctx context.Context, socket, dataDir string, logOut io.Writer, ready func(token string)) error {
	ln, err := listenUnix(socket)
	if err != nil {
		return err
	}
	cfg := shellgate.DefaultConfig()
	cfg.DataDir = dataDir
	cfg.Listen = "127.0.0.1:0" // the usual listener too; this example does not use it
	cfg.LogLevel = "warn"
	d := shellgate.New(cfg, logOut, shellgate.ServeAHPOn(ln))
	if err := d.Start(ctx); err != nil {
		_ = ln.Close()
		return err
	}
	token, _, err := d.Users().Bootstrap("")
	if err != nil || token == "" {
		err = errors.Join(fmt.Errorf("no admin token (is %s a fresh data directory?): %w", dataDir, err), d.Stop(context.Background()))
		return err
	}
	ready(token)
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), cfg.StopGrace+10*time.Second)
	defer cancel()
	return d.Stop(stopCtx)
}

// unixListener is a ports.Listener of WebSocket connections on a unix
// socket: the WebSocket transport, served by its own HTTP server.
type unixListener struct {
	*websocket.Server
	http   *http.Server
	served chan struct{}
}

func listenUnix(path string) (*unixListener, error) {
	ws, err := websocket.New(websocket.Options{})
	if err != nil {
		return nil, err
	}
	_ = os.Remove(path) // a socket a previous run left
	nl, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = nl.Close()
		return nil, err
	}
	u := &unixListener{Server: ws, http: &http.Server{Handler: ws, ReadHeaderTimeout: 10 * time.Second}, served: make(chan struct{})}
	go func() {
		defer close(u.served)
		_ = u.http.Serve(nl)
	}()
	return u, nil
}

// Close stops accepting: the transport refuses new upgrades, then the
// socket closes. The protocol server closes the connections it holds
// itself.
func (u *unixListener) Close() error {
	err := u.Server.Close()
	err = errors.Join(err, u.http.Close())
	<-u.served
	return err
}

var _ ports.Listener = (*unixListener)(nil)
