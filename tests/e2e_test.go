// End-to-end tests: the real shellgate binary, a real WebSocket, real pipes
// and ptys, driven by a client written from the protocol document.
package tests

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shellgate/shellgate/adapters/userstore"
	"github.com/shellgate/shellgate/tests/ahpclient"
)

var binary string

// headCommit is the checkout's commit, when git can tell; the binary is
// built to report it.
var headCommit = func() string {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}()

// e2eParallel is how many parallel tests run at once here unless
// -test.parallel says otherwise. Go's default, GOMAXPROCS, suits tests
// that compute; these mostly wait on other processes (a daemon, shells,
// sshd, Chromium), so on a 2-core machine two at a time left the cores
// idle for most of the package's run.
const e2eParallel = 6

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(e2eParallel))
	}
	dir, err := os.MkdirTemp("", "shellgate-e2e")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "shellgate")
	args := []string{"build", "-o", binary}
	// Go cannot stamp the commit from a git worktree, or when GOFLAGS says
	// -buildvcs=false; the fallback the README gives is what is tested.
	if headCommit != "" {
		args = append(args, "-ldflags=-X main.buildCommit="+headCommit)
	}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "../cmd/shellgate")...)
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building shellgate:", err)
		os.Exit(1)
	}
	// The sandbox helper, installed beside the daemon as `go install
	// ./cmd/...` puts it.
	helper := exec.Command("go", "build", "-o", filepath.Join(dir, "shellgate-sandbox"), "../cmd/shellgate-sandbox")
	helper.Stdout, helper.Stderr = os.Stdout, os.Stderr
	if err := helper.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building shellgate-sandbox:", err)
		os.Exit(1)
	}
	code := m.Run()
	closeChromium()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

const patience = 30 * time.Second

// daemon is one running shellgate serve.
type daemon struct {
	t       testing.TB
	cmd     *exec.Cmd
	addr    string
	logs    *strings.Builder
	stdout  *strings.Builder
	dataDir string
	// token is the admin's, from a users file made before the start.
	token string
}

var servingLine = regexp.MustCompile(`serving on http://(\S+) `)

// startDaemon runs shellgate serve with a users file holding one admin.
func startDaemon(t *testing.T, extraArgs ...string) *daemon {
	t.Helper()
	dataDir := t.TempDir()
	store, err := userstore.Open(filepath.Join(dataDir, "users.yaml"))
	require.NoError(t, err)
	token, created, err := store.Bootstrap("admin")
	require.NoError(t, err)
	require.True(t, created)
	d := startDaemonIn(t, dataDir, extraArgs...)
	d.token = token
	return d
}

// startDaemonIn runs shellgate serve on dataDir as it is.
func startDaemonIn(t *testing.T, dataDir string, extraArgs ...string) *daemon {
	t.Helper()
	return startDaemonWith(t, dataDir, nil, extraArgs...)
}

// startDaemonWith is startDaemonIn with env ("K=V") added to the daemon's
// environment.
func startDaemonWith(t testing.TB, dataDir string, env []string, extraArgs ...string) *daemon {
	t.Helper()
	return startDaemonUnder(t, nil, dataDir, env, extraArgs...)
}

// startDaemonUnder is startDaemonWith run by a wrapper that execs its
// last argument (prlimit …, say), so the daemon is still the process
// started; an empty wrapper runs the daemon directly.
func startDaemonUnder(t testing.TB, wrapper []string, dataDir string, env []string, extraArgs ...string) *daemon {
	t.Helper()
	// An interactive shell ignores the stop's SIGTERM, so every test that
	// leaves one open would wait out the whole grace period at its end;
	// a second is plenty for the ones that do exit on SIGTERM.
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--stop-grace", "1s"}, extraArgs...)
	cmd := exec.Command(binary, args...)
	if len(wrapper) > 0 {
		cmd = exec.Command(wrapper[0], append(append(slices.Clone(wrapper[1:]), binary), args...)...)
	}
	cmd.Env = append(append(os.Environ(), "SHELL=/bin/sh"), env...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	logs := &strings.Builder{}
	lw := &lockedWriter{w: logs}
	cmd.Stderr = lw
	require.NoError(t, cmd.Start())
	out := &strings.Builder{}
	d := &daemon{t: t, cmd: cmd, logs: logs, stdout: out, dataDir: dataDir}
	lines := bufio.NewScanner(stdout)
	found := make(chan string, 1)
	go func() {
		for lines.Scan() {
			lw.mu.Lock()
			out.WriteString(lines.Text() + "\n")
			lw.mu.Unlock()
			if m := servingLine.FindStringSubmatch(lines.Text()); m != nil {
				found <- m[1]
			}
		}
		close(found)
	}()
	select {
	case addr, ok := <-found:
		require.True(t, ok, "shellgate exited before serving")
		d.addr = addr
	case <-time.After(patience):
		t.Fatal("shellgate did not start")
	}
	t.Cleanup(d.stop)
	return d
}

// lockedWriter guards the daemon's captured output; read it with logText.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// output returns what the daemon printed so far: stdout and its log.
func (d *daemon) output() (stdout, logs string) {
	lw := d.cmd.Stderr.(*lockedWriter)
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return d.stdout.String(), d.logs.String()
}

// stop sends SIGTERM and expects a clean exit.
func (d *daemon) stop() {
	if d.cmd.ProcessState != nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(d.t, err, "shellgate should exit 0 on SIGTERM")
	case <-time.After(patience):
		_ = d.cmd.Process.Kill()
		<-done
		d.t.Fatal("shellgate did not stop within its grace period")
	}
}

// dial connects as the admin unless opts names another token.
func (d *daemon) dial(t *testing.T, opts ahpclient.DialOptions) *ahpclient.Client {
	t.Helper()
	if opts.Token == "" && opts.QueryToken == "" {
		opts.Token = d.token
	}
	return d.dialRaw(t, opts)
}

// dialRaw connects with exactly opts (no token unless it names one).
func (d *daemon) dialRaw(t *testing.T, opts ahpclient.DialOptions) *ahpclient.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	c, err := ahpclient.Dial(ctx, "ws://"+d.addr+"/", opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	t.Cleanup(cancel)
	return ctx
}

func spawn(command string, pty bool) map[string]any {
	return map[string]any{"shellgate/spawn": map[string]any{"command": command, "pty": pty}}
}

func TestHandshakeNegotiatesEachServedVersion(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	for _, tc := range []struct {
		offered []string
		want    string
	}{
		{[]string{"0.5.1"}, "0.5.1"},
		{[]string{"0.9.0"}, "0.9.0"},
		{[]string{"1.0.0", "0.9.0"}, "1.0.0"},
	} {
		c := d.dial(t, ahpclient.DialOptions{})
		res, rpcErr, err := c.Initialize(ctxT(t), "v-"+tc.want, tc.offered, []string{ahpclient.RootChannel})
		require.NoError(t, err)
		require.Nil(t, rpcErr)
		require.Equal(t, tc.want, res.ProtocolVersion)
		rootSnap, found := res.Snapshot(ahpclient.RootChannel)
		require.True(t, found)
		root, err := rootSnap.Root()
		require.NoError(t, err)
		require.NotNil(t, root.Agents, "agents is always present")
	}
	c := d.dial(t, ahpclient.DialOptions{})
	_, rpcErr, err := c.Initialize(ctxT(t), "old", []string{"0.4.0"}, nil)
	require.NoError(t, err)
	require.Equal(t, -32005, rpcErr.Code)
	require.Contains(t, string(rpcErr.Data), "supportedVersions")
	require.NoError(t, c.WaitClosed(ctxT(t)), "the host closes after -32005")
}

func TestLiveOutputAfterTheSnapshotLosesAndDoublesNothing(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	c := d.dial(t, ahpclient.DialOptions{})
	ctx := ctxT(t)
	_, rpcErr, err := c.Initialize(ctx, "c1", nil, nil)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	// Numbers 1..3000, printed while we subscribe mid-stream.
	rpcErr, err = c.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/count", Meta: spawn("i=1; while [ $i -le 3000 ]; do echo $i; i=$((i+1)); done", false)})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	snap, rpcErr, err := c.Subscribe(ctx, "ahp-terminal:/count")
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, err = c.WaitAction(ctx, func(e ahpclient.Envelope) bool { return e.Type == "terminal/exited" })
	if state, serr := snap.Terminal(); serr == nil && state.Lifecycle != nil && state.Lifecycle.Status == "exited" {
		err = nil // it finished before the snapshot
	}
	require.NoError(t, err)
	text, err := ahpclient.TerminalText(snap, c.Actions())
	require.NoError(t, err)
	var want strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	require.Equal(t, want.String(), text)
}

func TestLateSubscriberGetsTheScrollbackAndTwoClientsSeeTheSameStream(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	a, b := d.dial(t, ahpclient.DialOptions{}), d.dial(t, ahpclient.DialOptions{})
	ctx := ctxT(t)
	for id, c := range map[string]*ahpclient.Client{"a": a, "b": b} {
		_, rpcErr, err := c.Initialize(ctx, id, nil, nil)
		require.NoError(t, err)
		require.Nil(t, rpcErr)
	}
	rpcErr, err := a.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/shared", Meta: spawn("", true)})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, _, err = a.Subscribe(ctx, "ahp-terminal:/shared")
	require.NoError(t, err)
	_, err = a.Dispatch(ctx, "ahp-terminal:/shared", ahpclient.InputAction("echo before-$((40+2))\n"))
	require.NoError(t, err)
	_, err = a.WaitOutput(ctx, "ahp-terminal:/shared", "before-42")
	require.NoError(t, err)

	snap, rpcErr, err := b.Subscribe(ctx, "ahp-terminal:/shared")
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	state, err := snap.Terminal()
	require.NoError(t, err)
	require.Contains(t, state.Text(), "before-42", "a late subscriber gets the scrollback")
	require.True(t, *state.IsPty)

	_, err = a.Dispatch(ctx, "ahp-terminal:/shared", ahpclient.InputAction("echo after-$((50+5))\n"))
	require.NoError(t, err)
	for _, c := range []*ahpclient.Client{a, b} {
		_, err := c.WaitOutput(ctx, "ahp-terminal:/shared", "after-55")
		require.NoError(t, err)
	}
	for _, e := range b.Actions() {
		require.NotEqual(t, "terminal/input", e.Type, "typed input is echoed to its sender alone")
	}
}

// floodTerminal creates, through c on d, a pipe terminal that prints n
// bytes of "x", then a line with flood-done, once it is sent a line; it
// returns the terminal's channel.
func floodTerminal(t *testing.T, c *ahpclient.Client, d *daemon, n int) string {
	t.Helper()
	const channel = "ahp-terminal:/flood"
	rpcErr, err := c.CreateTerminal(ctxT(t), ahpclient.CreateParams{Channel: channel, Meta: spawn(fmt.Sprintf("read go; head -c %d /dev/zero | tr '\\0' x; echo; echo flood-done", n), false)})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	return channel
}

// metric reads one sample of the daemon's /metrics, or -1 when it cannot.
func (d *daemon) metric(name string) float64 {
	resp, err := d.getMetrics()
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}

// flowConfig is a daemon's config with small flow-control marks and bound,
// so a flood of a few MiB crosses them all.
func flowConfig(t *testing.T) string {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("client_queue_bytes: 1048576\nclient_high_water: 256KiB\nclient_low_water: 64KiB\n"), 0o600))
	return cfg
}

// smallWindow is a handshake client whose sockets take at most 32 KiB
// into their receive buffer: a client that stops reading is felt at once
// by the daemon instead of after the kernel's megabytes.
func smallWindow() *http.Client {
	dialer := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 32<<10) })
		return errors.Join(err, serr)
	}}
	return &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true}}
}

// pausedFlood starts a flood of n bytes whose only viewer, id, stops
// reading before it begins, and waits until the terminal has paused for
// it.
func pausedFlood(t *testing.T, d *daemon, id string, n int) (*ahpclient.Client, string) {
	t.Helper()
	ctx := ctxT(t)
	c := d.dial(t, ahpclient.DialOptions{HTTPClient: smallWindow()})
	_, _, err := c.Initialize(ctx, id, nil, nil)
	require.NoError(t, err)
	channel := floodTerminal(t, c, d, n)
	_, _, err = c.Subscribe(ctx, channel)
	require.NoError(t, err)
	c.PauseReading()
	_, err = c.Dispatch(ctx, channel, ahpclient.InputAction("go\n"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return d.metric("shellgate_output_pauses_total") >= 1 }, patience, 20*time.Millisecond,
		"the terminal stops reading its process while its only viewer reads nothing")
	return c, channel
}

func TestClientThatStopsReadingPausesItsTerminalAndMissesNothing(t *testing.T) {
	d := startDaemon(t, "--config", flowConfig(t))
	ctx := ctxT(t)
	// Several times the bound: without flow control, the client would be
	// closed long before the end.
	const n = 6 << 20
	c, channel := pausedFlood(t, d, "reader", n)
	select {
	case <-c.Closed():
		t.Fatal("a client that stopped reading was closed: it should have been waited for")
	default:
	}
	c.ResumeReading()
	text, err := c.WaitOutput(ctx, channel, "flood-done")
	require.NoError(t, err)
	require.Equal(t, strings.Repeat("x", n)+"\nflood-done", text, "every byte, in order")
	require.Zero(t, d.metric("shellgate_slow_clients_dropped_total"))
}

// A viewer that joins a terminal paused for a stalled one lets the
// process go on at once: the terminal is no longer one whose every viewer
// is behind. (Nothing else would wake it: the stalled viewer takes
// nothing, and no output comes while the process waits.)
func TestViewerJoiningAPausedTerminalLetsItGoOn(t *testing.T) {
	d := startDaemon(t, "--config", flowConfig(t))
	ctx := ctxT(t)
	stalled, channel := pausedFlood(t, d, "stalled", 6<<20)

	joined := d.dial(t, ahpclient.DialOptions{})
	_, _, err := joined.Initialize(ctx, "joined", nil, nil)
	require.NoError(t, err)
	_, _, err = joined.Subscribe(ctx, channel)
	require.NoError(t, err)
	text, err := joined.WaitOutput(ctx, channel, "flood-done")
	require.NoError(t, err, "the process went on once a viewer that reads had joined")
	require.True(t, strings.HasSuffix(text, "xxxx\nflood-done"), "the flood reached its end")
	// The stalled viewer was left a bound behind by the flood, not closed
	// for a write that waited past the write timeout (10 s): that close
	// would have been all that let a paused terminal go on.
	stalled.ResumeReading()
	require.NoError(t, stalled.WaitClosed(ctx))
	code, reason := stalled.CloseStatus()
	require.Equal(t, 1008, int(code), reason)
	require.Contains(t, reason, "behind")
}

func TestStalledViewerIsTheOnlyOneClosedWhileTheOtherGetsEverything(t *testing.T) {
	d := startDaemon(t, "--config", flowConfig(t))
	ctx := ctxT(t)
	reading := d.dial(t, ahpclient.DialOptions{})
	stalled := d.dial(t, ahpclient.DialOptions{HTTPClient: smallWindow()})
	_, _, err := reading.Initialize(ctx, "reading", nil, nil)
	require.NoError(t, err)
	_, _, err = stalled.Initialize(ctx, "stalled", nil, nil)
	require.NoError(t, err)
	// More than the bound plus what the stalled socket's buffers absorb.
	const n = 6 << 20
	channel := floodTerminal(t, reading, d, n)
	for _, c := range []*ahpclient.Client{reading, stalled} {
		_, _, err = c.Subscribe(ctx, channel)
		require.NoError(t, err)
	}
	stalled.PauseReading()
	_, err = reading.Dispatch(ctx, channel, ahpclient.InputAction("go\n"))
	require.NoError(t, err)
	// The stalled viewer resumes as soon as it was dropped, so that it
	// reads the close frame behind what its socket still holds.
	require.Eventually(t, func() bool { return d.metric("shellgate_slow_clients_dropped_total") >= 1 }, patience, 20*time.Millisecond)
	stalled.ResumeReading()
	require.NoError(t, stalled.WaitClosed(ctx))
	code, reason := stalled.CloseStatus()
	require.Equal(t, 1008, int(code))
	require.Contains(t, reason, "behind")

	text, err := reading.WaitOutput(ctx, channel, "flood-done")
	require.NoError(t, err, "the viewer that kept reading got everything")
	require.Equal(t, strings.Repeat("x", n)+"\nflood-done", text)
	select {
	case <-reading.Closed():
		t.Fatal("the viewer that kept reading was closed")
	default:
	}
	require.Equal(t, float64(1), d.metric("shellgate_slow_clients_dropped_total"), "the stalled viewer alone was closed")
}

func TestReconnectReplaysWhatWasMissed(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	ctx := ctxT(t)
	c := d.dial(t, ahpclient.DialOptions{})
	_, _, err := c.Initialize(ctx, "rc", nil, []string{ahpclient.RootChannel})
	require.NoError(t, err)
	rpcErr, err := c.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/r1", Meta: spawn("read x; echo got-$x", false)})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	rpcErr, err = c.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/r2"})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, _, err = c.Subscribe(ctx, "ahp-terminal:/r1")
	require.NoError(t, err)
	_, _, err = c.Subscribe(ctx, "ahp-terminal:/r2")
	require.NoError(t, err)
	lastSeen := c.LastServerSeq()
	require.NoError(t, c.Close())

	other := d.dial(t, ahpclient.DialOptions{})
	_, _, err = other.Initialize(ctx, "other", nil, []string{ahpclient.RootChannel})
	require.NoError(t, err)
	_, err = other.Dispatch(ctx, "ahp-terminal:/r1", ahpclient.InputAction("yes\n"))
	require.NoError(t, err)
	rpcErr, err = other.DisposeTerminal(ctx, "ahp-terminal:/r2")
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	// Wait until r1 has exited, seen from the root list.
	_, err = other.WaitAction(ctx, func(e ahpclient.Envelope) bool {
		for _, ti := range e.View().Terminals {
			if ti.Resource == "ahp-terminal:/r1" && ti.Lifecycle != nil && ti.Lifecycle.Status == "exited" {
				return true
			}
		}
		return false
	})
	require.NoError(t, err)

	back := d.dial(t, ahpclient.DialOptions{})
	res, rpcErr, err := back.Reconnect(ctx, "rc", lastSeen, []string{ahpclient.RootChannel, "ahp-terminal:/r1", "ahp-terminal:/r2"})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	require.Equal(t, "replay", res.Type)
	require.Equal(t, []string{"ahp-terminal:/r2"}, res.Missing)
	var text strings.Builder
	sawExit := false
	for _, e := range res.Actions {
		require.Greater(t, e.ServerSeq, lastSeen)
		if v := e.View(); e.Channel == "ahp-terminal:/r1" {
			if v.Data != nil {
				text.WriteString(*v.Data)
			}
			sawExit = sawExit || e.Type == "terminal/exited"
		}
	}
	require.Equal(t, "got-yes\n", text.String())
	require.True(t, sawExit)

	stale := d.dial(t, ahpclient.DialOptions{})
	res, rpcErr, err = stale.Reconnect(ctx, "rc", 0, []string{"ahp-terminal:/r1"})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	require.Contains(t, []string{"replay", "snapshot"}, res.Type)

	nobody := d.dial(t, ahpclient.DialOptions{})
	_, rpcErr, err = nobody.Reconnect(ctx, "never-seen", 0, nil)
	require.NoError(t, err)
	require.Equal(t, -32008, rpcErr.Code)
}

func TestOversizedFrameClosesOnlyThatConnection(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	ctx := ctxT(t)
	big, ok := d.dial(t, ahpclient.DialOptions{}), d.dial(t, ahpclient.DialOptions{})
	_, _, err := ok.Initialize(ctx, "ok", nil, nil)
	require.NoError(t, err)
	_ = big.Send(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"channel":"`+strings.Repeat("x", 5<<20)+`"}}`))
	require.NoError(t, big.WaitClosed(ctx))
	code, _ := big.CloseStatus()
	require.Equal(t, 1009, int(code))
	rpcErr, err := ok.Ping(ctx)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
}

func TestInvalidUTF8TextFrameClosesOnlyThatConnectionWith1007(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	ctx := ctxT(t)
	bad, ok := d.dial(t, ahpclient.DialOptions{}), d.dial(t, ahpclient.DialOptions{})
	_, _, err := ok.Initialize(ctx, "ok", nil, nil)
	require.NoError(t, err)
	_, rpcErr, err := bad.Initialize(ctx, "bad", nil, nil)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	// A lone continuation byte inside an otherwise well-formed request.
	_ = bad.Send(ctx, []byte("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"params\":{\"x\":\"\x80\"}}"))
	require.NoError(t, bad.WaitClosed(ctx))
	code, reason := bad.CloseStatus()
	require.Equal(t, 1007, int(code))
	require.Contains(t, reason, "UTF-8")
	rpcErr, err = ok.Ping(ctx)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
}

func TestStoppingTheDaemonEndsItsShells(t *testing.T) {
	t.Parallel()
	for _, silent := range []int{0, 4} {
		t.Run(fmt.Sprintf("%d silent clients", silent), func(t *testing.T) { stopEndsShells(t, silent) })
	}
}

// stopEndsShells stops a daemon with a shell running and, besides the
// client that started it, silent clients that no longer read: they never
// answer the close handshake, and must not use up the time the daemon has
// to end its shells.
func stopEndsShells(t *testing.T, silent int) {
	d := startDaemon(t)
	ctx := ctxT(t)
	for range silent {
		// Never read from the start: nothing answers the close frame.
		s := d.dialRaw(t, ahpclient.DialOptions{PauseReading: true})
		t.Cleanup(s.ResumeReading)
	}
	c := d.dial(t, ahpclient.DialOptions{})
	_, _, err := c.Initialize(ctx, "s", nil, nil)
	require.NoError(t, err)
	pidFile := filepath.Join(t.TempDir(), "pid")
	rpcErr, err := c.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/bg", Meta: spawn(fmt.Sprintf("echo $$ > %s; sleep 300", pidFile), false)})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	var pid int
	require.Eventually(t, func() bool {
		raw, err := os.ReadFile(pidFile)
		return err == nil && len(raw) > 0 && func() bool { _, e := fmt.Sscanf(string(raw), "%d", &pid); return e == nil }()
	}, patience, 10*time.Millisecond)
	d.stop()
	require.Eventually(t, func() bool { return syscall.Kill(pid, 0) == syscall.ESRCH }, patience, 10*time.Millisecond)
	require.NoError(t, c.WaitClosed(ctx))
	code, reason := c.CloseStatus()
	require.Equal(t, 1001, int(code))
	require.NotEmpty(t, reason)
}

func TestReconnectAfterTooLongAGapGetsSnapshots(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	ctx := ctxT(t)
	c := d.dial(t, ahpclient.DialOptions{})
	_, _, err := c.Initialize(ctx, "gap", nil, nil)
	require.NoError(t, err)
	rpcErr, err := c.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/g", Meta: spawn("read x; head -c 12000000 /dev/zero | tr '\\0' y; echo; echo gap-done", false)})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, _, err = c.Subscribe(ctx, "ahp-terminal:/g")
	require.NoError(t, err)
	lastSeen := c.LastServerSeq()
	require.NoError(t, c.Close())

	// While it is away, more output than the replay ring holds (8 MiB).
	other := d.dial(t, ahpclient.DialOptions{})
	initialize(t, other, "other")
	_, _, err = other.Subscribe(ctx, "ahp-terminal:/g")
	require.NoError(t, err)
	_, err = other.Dispatch(ctx, "ahp-terminal:/g", ahpclient.InputAction("go\n"))
	require.NoError(t, err)
	// 12 MB through the daemon: on a loaded machine under -race that
	// outlasts the usual patience, so its deadline is longer.
	flood, cancel := context.WithTimeout(context.Background(), 4*patience)
	defer cancel()
	_, err = other.WaitOutput(flood, "ahp-terminal:/g", "gap-done")
	require.NoError(t, err)
	ctx = ctxT(t) // the rest gets the usual patience, from here

	back := d.dial(t, ahpclient.DialOptions{})
	res, rpcErr, err := back.Reconnect(ctx, "gap", lastSeen, []string{"ahp-terminal:/g"})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	require.Equal(t, "snapshot", res.Type)
	snap, ok := res.Snapshot("ahp-terminal:/g")
	require.True(t, ok)
	state, err := snap.Terminal()
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(state.Text(), "gap-done\n"), "the snapshot holds the newest output")
	require.Greater(t, snap.FromSeq, lastSeen)
}
