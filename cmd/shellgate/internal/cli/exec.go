package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/shellgate/shellgate/cmd/shellgate/internal/client"
	"github.com/shellgate/shellgate/domain/terminal"
)

// execOptions are exec's flags.
type execOptions struct {
	pty  bool
	cwd  string
	keep bool
	env  []string
	host string
}

// newExecCmd runs one program in a new terminal and exits with its code.
func newExecCmd() *cobra.Command {
	var opts execOptions
	cmd := &cobra.Command{
		Use:   "exec [--pty] [--host NAME] [--cwd DIR] [--keep] [-e NAME=VALUE]... -- CMD [ARG...]",
		Short: "Run one command in a new terminal, stream its output and exit with its exit code",
		Long: `Run CMD with exactly ARGs (no shell in between) in a new terminal on the
daemon, write its output to stdout as it comes, and exit with its exit code
(128 when a signal killed it). On pipes (the default) stdout and stderr arrive
merged; --pty runs it on a pseudoterminal sized like this one.

CMD starts in this shell's current directory when the daemon runs on this
machine (its URL is a loopback address), as make or a script would expect;
on a daemon elsewhere it starts in the daemon's own directory, since this
one's path means nothing there. --cwd picks another; a directory that does
not exist here is refused before anything starts.

When standard input is a terminal, what is typed there goes to the command:
with --pty this terminal is put in raw mode, so every key goes through as it
is pressed (q quits htop, Ctrl-C interrupts the command itself), as with
ssh -t; on pipes, line by line, and Ctrl-D on an empty line ends the
command's input. Standard input that is not a terminal (a pipe, a file,
/dev/null) goes to the command byte for byte, no faster than the command
reads it, and its end ends the command's input: on pipes the command's
input is closed; with --pty the end is typed as Ctrl-D (twice when the
last line has no newline), and the terminal echoes what is fed to it, as
ssh -t does. Bytes the command never read when it exits are dropped.

On pipes, Ctrl-C once sends an interrupt to the command; a second Ctrl-C, or
SIGTERM, stops waiting. The terminal is disposed of afterwards unless --keep is given
(then attach to it, or see it with ls).

If stdout is read so slowly that the daemon drops exec for falling behind,
exec reconnects and resumes where it was: no output is lost or repeated. If
the daemon no longer holds everything exec missed, exec says the output is
incomplete, disposes of the terminal (unless --keep) and exits 1.`,
		Example: `  shellgate exec -- make -j4 test
  shellgate exec --pty --cwd /srv/app -- htop
  shellgate exec -- sh -c 'echo hello; exit 3'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := resolveRemote(cmd)
			if err != nil {
				return err
			}
			return r.scrub(runExec(cmd, r, args, opts))
		},
	}
	// Everything after the command belongs to it, flags included.
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().BoolVar(&opts.pty, "pty", false, "run the command on a pseudoterminal instead of pipes")
	cmd.Flags().StringVar(&opts.cwd, "cwd", "", "start directory on the daemon's machine (default: this directory when the daemon is on this machine, else the daemon's own); a relative path is made absolute here")
	cmd.Flags().BoolVar(&opts.keep, "keep", false, "keep the terminal after the command ends instead of disposing of it")
	cmd.Flags().StringArrayVarP(&opts.env, "env", "e", nil, "add NAME=VALUE to the command's environment (repeatable)")
	cmd.Flags().StringVar(&opts.host, "host", "", "run on this host of the daemon's hosts: (default: the daemon's own machine); --cwd is then a path there")
	addRemoteFlags(cmd)
	return cmd
}

func runExec(cmd *cobra.Command, r remote, argv []string, opts execOptions) error {
	// AwaitViewer: a command that writes fast could otherwise overflow the
	// scrollback between the create and the subscribe, and exec would miss
	// the start of its output.
	spawn := &client.Spawn{Command: argv[0], Args: append([]string{}, argv[1:]...), PTY: opts.pty, Host: opts.host, AwaitViewer: true}
	for _, kv := range opts.env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return fmt.Errorf("--env %q: want NAME=VALUE", kv)
		}
		if spawn.Env == nil {
			spawn.Env = map[string]string{}
		}
		spawn.Env[name] = value
	}
	params := client.CreateParams{Name: strings.Join(argv, " "), Spawn: spawn}
	remoteHost := opts.host != "" && opts.host != "main"
	switch {
	case remoteHost && opts.cwd != "":
		if !filepath.IsAbs(opts.cwd) {
			return fmt.Errorf("--cwd %s: on host %s give an absolute path there", opts.cwd, opts.host)
		}
		params.CWD = terminal.URIFromPath(filepath.Clean(opts.cwd))
	case !remoteHost:
		// This directory means nothing on another machine: there the
		// command starts where the host's login does.
		dir, err := startDirectory(opts.cwd, isLocal(r.url))
		if err != nil {
			return err
		}
		if dir != "" {
			params.CWD = terminal.URIFromPath(dir)
		}
	}
	out := cmd.OutOrStdout()
	if opts.pty {
		if f, ok := out.(*os.File); ok {
			params.Cols, params.Rows, _ = windowSize(int(f.Fd()))
		}
	}
	// Keys are forwarded only from a terminal (see the help for why not
	// from a pipe); under --pty it goes raw, so each key goes as pressed.
	var keys <-chan string
	var piped io.Reader // standard input that is not a terminal
	if in, ok := cmd.InOrStdin().(*os.File); ok && term.IsTerminal(int(in.Fd())) {
		if opts.pty {
			old, err := term.MakeRaw(int(in.Fd()))
			if err != nil {
				return fmt.Errorf("cannot put this terminal in raw mode: %w", err)
			}
			defer func() { _ = term.Restore(int(in.Fd()), old) }()
		}
		keys = forwardKeys(in)
	} else {
		piped = cmd.InOrStdin()
	}

	// The root command's context ends at the first Ctrl-C; exec decides
	// for itself what a signal means, so it runs on its own context.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	// A closed stdout (exec … | head) is a write error to handle, not a
	// silent death that would leave the terminal behind.
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)

	c, _, err := r.dial(ctx)
	if err != nil {
		return err
	}
	// The feeder of piped input, if there is one, is waited for last: a
	// send of it that waits on a full socket ends when the connection is
	// closed.
	var feeding chan struct{}
	defer func() {
		if feeding != nil {
			<-feeding
		}
	}()
	// The connection exec is on: a new one after a resume.
	cur := c
	defer func() { _ = cur.Close() }()
	params.Channel = client.TerminalURI(client.RandomID())
	setup, cancelSetup := context.WithTimeout(ctx, setupPatience)
	defer cancelSetup()
	if err := c.CreateTerminal(setup, params); err != nil {
		return err
	}
	uri := params.Channel
	if opts.keep {
		defer fmt.Fprintf(cmd.ErrOrStderr(), "shellgate: kept %s (shellgate attach %s)\n", uri, client.TerminalID(uri))
	} else {
		defer func() {
			dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer dcancel()
			if err := disposeOf(dctx, cur, uri); err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "shellgate: could not dispose of %s: %v\n", uri, r.scrub(err))
			}
		}()
	}
	snap, err := c.Subscribe(setup, uri)
	if err != nil {
		return err
	}
	state, err := snap.Terminal()
	if err != nil {
		return err
	}
	if err := writeOutput(out, state.Text()); err != nil {
		return err
	}
	if exited, code := state.Exited(); exited {
		return exitStatus(cmd.ErrOrStderr(), code)
	}
	// Piped input is fed on a goroutine of its own, which follows exec
	// from connection to connection (conns).
	var fed <-chan error
	conns := make(chan *client.Client, 1)
	if piped != nil {
		result := make(chan error, 1)
		fed = result
		feedCtx, stopFeeding := context.WithCancel(ctx)
		feeding = make(chan struct{})
		go func() {
			defer close(feeding)
			result <- feedInput(feedCtx, piped, uri, c, conns)
		}()
		// Stopped before the terminal is disposed of; waited for above.
		defer stopFeeding()
	}
	// follow handles one envelope; over says exec is done, with err.
	follow := func(env client.Envelope) (over bool, err error) {
		if env.Channel != uri {
			return false, nil
		}
		switch env.Action.Type {
		case "terminal/data":
			if err := writeOutput(out, env.Action.Data); err != nil {
				return true, err
			}
		case "terminal/exited":
			return true, exitStatus(cmd.ErrOrStderr(), env.Action.ExitCode)
		}
		return false, nil
	}
	interrupted, interruptOwed := false, false
	for {
		select {
		case env, ok := <-cur.Actions():
			if !ok {
				// Everything the connection brought has been written: carry
				// on from there over a new one.
				next, over, err := resumeExec(ctx, cur, uri, opts.keep, follow)
				if next != nil {
					_ = cur.Close()
					cur = next
					select { // the feeder needs only the newest
					case <-conns:
					default:
					}
					conns <- next
				}
				if over {
					return err
				}
				if interruptOwed {
					interruptOwed = false
					if err := cur.Input(ctx, uri, "\x03"); err != nil && !ended(cur) {
						return err
					}
				}
				continue
			}
			if over, err := follow(env); over {
				return err
			}
		case k, ok := <-keys:
			if !ok {
				// Ctrl-D: the command's input ends too. Its answer is
				// not waited for; the command's exit is.
				keys = nil
				if _, err := cur.Feed(ctx, uri, -1, nil, true); err != nil && !ended(cur) {
					return err
				}
				continue
			}
			if err := cur.Input(ctx, uri, k); err != nil && !ended(cur) {
				return err
			}
		case err := <-fed:
			fed = nil
			if errors.Is(err, errCannotFeed) {
				fmt.Fprintf(cmd.ErrOrStderr(), "shellgate: %v\n", err)
				continue
			}
			if err != nil {
				return err
			}
		case sig := <-sigs:
			if sig == os.Interrupt && !interrupted {
				// On pipes the daemon turns ^C into SIGINT to the command's
				// process group; on a pty the line discipline does.
				interrupted = true
				if err := cur.Input(ctx, uri, "\x03"); err != nil {
					if !ended(cur) {
						return err
					}
					interruptOwed = true // sent once exec has resumed
				}
				continue
			}
			return exitCodeError(128 + int(sig.(syscall.Signal)))
		}
	}
}

// resumeExec carries exec on after its connection ended: over a new
// connection, from the last output written, through follow. It returns the
// new connection (nil when there is none) and, when exec is over, the
// error (or exit code) it ends with.
func resumeExec(ctx context.Context, c *client.Client, uri string, keep bool, follow func(client.Envelope) (bool, error)) (next *client.Client, over bool, err error) {
	lost := connectionLost(c)
	if !client.Resumable(lost) {
		return nil, true, lost
	}
	setup, cancel := context.WithTimeout(ctx, setupPatience)
	defer cancel()
	next, res, err := c.Resume(setup)
	if err != nil {
		var ce *client.ConnectionError
		if errors.As(lost, &ce) && ce.FellBehind() {
			return nil, true, fmt.Errorf("exec fell behind the command's output and the daemon dropped it; resuming failed: %v", err)
		}
		return nil, true, fmt.Errorf("%w; resuming failed: %v", lost, err)
	}
	if res.IsMissing(uri) {
		return next, true, fmt.Errorf("%s was disposed of while exec was reconnecting", uri)
	}
	if !res.Replay {
		// The daemon no longer holds what was missed: exec cannot give the
		// whole output, so it says so instead of pretending.
		why := "exec fell so far behind the command's output that the daemon no longer holds the part it missed: exec's output is incomplete"
		if snap, ok := res.Snapshot(uri); ok {
			if state, err := snap.Terminal(); err == nil {
				if exited, code := state.Exited(); exited {
					if code != nil {
						return next, true, fmt.Errorf("%s (the command exited with code %d)", why, *code)
					}
					return next, true, fmt.Errorf("%s (the command has ended)", why)
				}
			}
		}
		if keep {
			return next, true, fmt.Errorf("%s (the command runs on in the kept terminal)", why)
		}
		return next, true, fmt.Errorf("%s, and the command is being stopped", why)
	}
	for _, env := range res.Actions {
		if over, err := follow(env); over {
			return next, true, err
		}
	}
	return next, false, nil
}

// disposeOf disposes of uri over c or, when c's connection has ended, over
// a fresh one under the same client id (the terminal's claim names it).
func disposeOf(ctx context.Context, c *client.Client, uri string) error {
	if !ended(c) {
		err := c.DisposeTerminal(ctx, uri)
		if err == nil || !ended(c) {
			return err
		}
	}
	fresh, err := c.Reopen(ctx)
	if err != nil {
		return err
	}
	defer fresh.Close()
	return fresh.DisposeTerminal(ctx, uri)
}

// ended says whether c's connection has ended.
func ended(c *client.Client) bool {
	select {
	case <-c.Done():
		return true
	default:
		return false
	}
}

// writeOutput writes the command's output; a reader that went away ends
// exec as the shell would have ended it (128 + SIGPIPE).
func writeOutput(w io.Writer, s string) error {
	if s == "" {
		return nil
	}
	if _, err := io.WriteString(w, s); err != nil {
		if errors.Is(err, syscall.EPIPE) {
			return exitCodeError(128 + int(syscall.SIGPIPE))
		}
		return fmt.Errorf("writing the output: %w", err)
	}
	return nil
}

// exitStatus turns a terminal's exit into exec's own.
func exitStatus(stderr io.Writer, code *int) error {
	if code == nil {
		fmt.Fprintln(stderr, "shellgate: the command ended without an exit code")
		return exitCodeError(1)
	}
	if *code == 0 {
		return nil
	}
	return exitCodeError(*code)
}

// connectionLost says why the action stream ended.
func connectionLost(c *client.Client) error {
	if err := c.Err(); err != nil {
		return err
	}
	return client.ErrClosed
}

// windowSize is a terminal's size; ok is false when fd is not a terminal.
func windowSize(fd int) (cols, rows int, ok bool) {
	cols, rows, err := termSize(fd)
	if err != nil || cols <= 0 || rows <= 0 {
		return 0, 0, false
	}
	return cols, rows, true
}

// startDirectory is where the command starts: --cwd made absolute (and, on
// this machine, checked to be a directory), else this process's own
// directory when the daemon is local, else "" for the daemon's own.
func startDirectory(cwd string, local bool) (string, error) {
	if cwd == "" {
		if !local {
			return "", nil
		}
		dir, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("cannot tell this directory to start the command in (%w): give --cwd", err)
		}
		return dir, nil
	}
	dir, err := filepath.Abs(cwd)
	if err != nil {
		return "", fmt.Errorf("--cwd %s: %w", cwd, err)
	}
	if !local {
		return dir, nil
	}
	switch fi, err := os.Stat(dir); {
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("--cwd %s: the directory does not exist", dir)
	case err != nil:
		return "", fmt.Errorf("--cwd %s: %w", dir, err)
	case !fi.IsDir():
		return "", fmt.Errorf("--cwd %s: not a directory", dir)
	}
	return dir, nil
}

// isLocal says whether the daemon at rawURL runs on this machine: its host
// is a loopback name or address.
func isLocal(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	host := u.Hostname()
	return host == "localhost" || strings.HasSuffix(host, ".localhost") || isLoopbackHost(host)
}

// forwardKeys reads what is typed at in and sends it on, a read at a time.
// A character split between two reads waits for its rest: the protocol's
// input is text, and half a character would arrive as U+FFFD. The channel
// closes at end of input or on a read error; the reading goroutine ends
// with the process (a read of a terminal cannot be called off).
func forwardKeys(in io.Reader) <-chan string {
	keys := make(chan string, 16)
	go func() {
		defer close(keys)
		buf := make([]byte, 4096)
		var held []byte
		for {
			n, err := in.Read(buf)
			if n > 0 {
				var text string
				text, held = completeUTF8(append(held, buf[:n]...))
				if text != "" {
					keys <- text
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return keys
}
