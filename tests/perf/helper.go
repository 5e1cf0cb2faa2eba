package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"

	"github.com/coder/websocket"
)

// serveLoopback is the body of a helper server (the minimal relays): it
// serves WebSockets on a loopback port with handle, prints the address,
// and ends when in closes. handle owns the connection until it returns;
// the connection is then dropped if handle did not close it.
func serveLoopback(in io.Reader, out io.Writer, handle func(ctx context.Context, c *websocket.Conn)) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(out, "error: %v\n", err)
		return 1
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		handle(r.Context(), c)
	})}
	go func() { _ = srv.Serve(ln) }()
	fmt.Fprintln(out, ln.Addr().String())
	_, _ = io.Copy(io.Discard, in)
	_ = srv.Close()
	return 0
}

// startServer runs this program as the helper server env names and reads
// the address it serves on.
func startServer(env string) (cmd *exec.Cmd, stdin io.WriteCloser, addr string, err error) {
	cmd, stdin, stdout, err := startHelper(env)
	if err != nil {
		return nil, nil, "", err
	}
	addr, err = bufio.NewReader(stdout).ReadString('\n')
	addr = strings.TrimSpace(addr)
	if err != nil || strings.HasPrefix(addr, "error") {
		_ = stdin.Close()
		_ = cmd.Wait()
		return nil, nil, "", fmt.Errorf("no address (%q): %v", addr, err)
	}
	return cmd, stdin, addr, nil
}
