// Command fakespawner is the whole shellgate daemon with its spawner
// swapped for the in-memory fake by one fx.Decorate line: every terminal
// runs a scripted "shell" that greets and echoes what is typed in
// capitals. No terminal starts a real process (the daemon's run guard
// still does). A way to demo or test a client without a machine to give
// away.
//
//	go run ./examples/fakespawner /tmp/shellgate-data
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.uber.org/fx"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/adapters/spawner/fake"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

func main() {
	if code, ok := shellgate.Helper(os.Args); ok {
		os.Exit(code)
	}
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: fakespawner DATA_DIR")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1], os.Stderr, func(url, token string) {
		fmt.Printf("serving fake terminals on %s; sign in: %s/#token=%s\n", url, url, token)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakespawner:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends; ready gets the daemon's URL and the admin's
// token once it listens.
func run(ctx context.Context, dataDir string, logOut io.Writer, ready func(url, token string)) error {
	sp := fake.New()
	sp.Register("sh", greeter)
	cfg := shellgate.DefaultConfig()
	cfg.DataDir = dataDir
	cfg.Listen = "127.0.0.1:0"
	cfg.Shell = "/bin/sh" // the name the fake's script answers to
	cfg.ShellIntegration = false
	cfg.LogLevel = "warn"
	d := shellgate.New(cfg, logOut,
		fx.Decorate(func(ports.Spawner) ports.Spawner { return sp }), // the swap
	)
	if err := d.Start(ctx); err != nil {
		return err
	}
	token, _, err := d.Users().Bootstrap("")
	if err != nil || token == "" {
		return errors.Join(fmt.Errorf("no admin token (is %s a fresh data directory?): %w", dataDir, err), d.Stop(context.Background()))
	}
	ready(d.BaseURL(), token)
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), cfg.StopGrace+10*time.Second)
	defer cancel()
	return d.Stop(stopCtx)
}

// greeter is the fake's shell: it greets, then echoes each line typed in
// capitals, until its input closes or a signal ends it.
func greeter(p *fake.Process) terminal.ExitStatus {
	_ = p.Emit("fake shell ready\r\n")
	buf := make([]byte, 4096)
	for {
		n, err := p.ReadInput(buf)
		if n > 0 {
			_ = p.Emit(strings.ToUpper(string(buf[:n])))
		}
		if err != nil {
			return terminal.ExitedWith(0)
		}
	}
}
