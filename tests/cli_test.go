// Tests of the terminal client commands (attach, ls, exec, approvals): the
// real binary against a real daemon, attach under a real pseudoterminal.
package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/creack/pty"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/adapters/screen"
	"github.com/shellgate/shellgate/tests/ahpclient"
)

// cliResult is one finished run of the shellgate binary.
type cliResult struct {
	stdout, stderr string
	code           int
}

// cli runs the binary with env added to the test's environment (no
// SHELLGATE_* leaks in from outside).
func cli(t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	return cliIn(t, env, nil, args...)
}

// cliIn is cli with stdin as the binary's standard input (nil: /dev/null).
func cliIn(t *testing.T, env []string, stdin io.Reader, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(cleanEnv(), env...)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr strings.Builder
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	code := 0
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else {
		require.NoError(t, err)
	}
	require.NoError(t, ctx.Err(), "shellgate %v did not finish", args)
	return cliResult{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// cleanEnv is the test's environment without SHELLGATE_* variables.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SHELLGATE_") {
			out = append(out, kv)
		}
	}
	return out
}

// remoteArgs point a client command at d as its admin.
func (d *daemon) remoteArgs() []string {
	return []string{"--url", "http://" + d.addr, "--token", d.token}
}

func (d *daemon) remoteEnv() []string {
	return []string{"SHELLGATE_URL=http://" + d.addr, "SHELLGATE_TOKEN=" + d.token}
}

func TestExecExitsWithTheCommandsCodeAfterStreamingItsOutput(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	res := cli(t, nil, append(append([]string{"exec"}, d.remoteArgs()...), "--", "sh", "-c", "echo before-$((1+2)); exit 3")...)
	require.Equal(t, 3, res.code, res.stderr)
	require.Equal(t, "before-3\n", res.stdout)

	// The variables work as the flags do; the program gets its arguments
	// as they are, with no shell re-reading them.
	res = cli(t, d.remoteEnv(), "exec", "--", "printf", "%s|", "a b", "$HOME", "it's")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "a b|$HOME|it's|", res.stdout)

	res = cli(t, d.remoteEnv(), "exec", "--pty", "--cwd", "/", "-e", "GREETING=hi", "--", "sh", "-c", `echo "$GREETING from $(pwd)"; test -t 1 && echo on-a-tty`)
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "hi from /\r\n")
	require.Contains(t, res.stdout, "on-a-tty")

	// Disposed of afterwards, unless kept.
	list := cli(t, d.remoteEnv(), "ls")
	require.Equal(t, 0, list.code, list.stderr)
	require.Empty(t, list.stdout, "nothing is left")
	require.Equal(t, "no terminals\n", list.stderr)
	kept := cli(t, d.remoteEnv(), "exec", "--keep", "--", "sh", "-c", "exit 4")
	require.Equal(t, 4, kept.code)
	uri := regexp.MustCompile(`kept (ahp-terminal:/\S+)`).FindStringSubmatch(kept.stderr)
	require.NotNil(t, uri, kept.stderr)
	list = cli(t, d.remoteEnv(), "ls")
	require.Regexp(t, regexp.QuoteMeta(uri[1])+`\s+sh -c exit 4\s+main\s+admin\s+exited 4\n`, list.stdout)
}

func TestClientCommandsShowTheDaemonsRefusalButNeverTheToken(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	guest := d.addUser(t, "visitor", "guest")
	res := cli(t, nil, "exec", "--url", "http://"+d.addr, "--token", guest, "--", "true")
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "visitor may not terminal:create here")
	require.Contains(t, res.stderr, "-32009")
	require.NotContains(t, res.stderr+res.stdout, guest)

	res = cli(t, nil, "attach", "--url", "http://"+d.addr, "--token", d.token, "no-such-terminal")
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "No terminal at ahp-terminal:/no-such-terminal")
	require.NotContains(t, res.stderr+res.stdout, d.token)

	const wrong = "sg_not-a-real-token"
	res = cli(t, nil, "ls", "--url", "http://"+d.addr, "--token", wrong)
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "refused the token (HTTP 401)")
	require.NotContains(t, res.stderr+res.stdout, wrong)

	// The credentials file's token is never sent to another daemon.
	res = cli(t, nil, "ls", "--data-dir", d.dataDir, "--url", "http://127.0.0.1:1")
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "no token for http://127.0.0.1:1")
}

func TestLsListsTerminalsWithTheCredentialsServeWrote(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	d := startDaemonIn(t, dataDir) // first start: writes credentials.json
	res := cli(t, nil, "ls", "--data-dir", dataDir)
	require.Equal(t, 0, res.code, res.stderr)
	require.Empty(t, res.stdout)
	require.Equal(t, "no terminals\n", res.stderr)

	creds := readCreds(t, dataDir)
	c := d.dial(t, ahpclient.DialOptions{Token: creds})
	initialize(t, c, "lister")
	rpcErr, err := c.CreateTerminal(ctxT(t), ahpclient.CreateParams{Channel: "ahp-terminal:/listed", Name: "build \x1b[31mbox"})
	require.NoError(t, err)
	require.Nil(t, rpcErr)

	res = cli(t, []string{"SHELLGATE_DATA_DIR=" + dataDir}, "ls")
	require.Equal(t, 0, res.code, res.stderr)
	require.Regexp(t, `(?m)^ahp-terminal:/listed\s+build \\x1b\[31mbox\s+main\s+admin\s+running$`, res.stdout,
		"a title cannot send escape sequences to the reader's terminal")
}

func readCreds(t *testing.T, dataDir string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dataDir, "credentials.json"))
	require.NoError(t, err)
	var creds struct {
		Token string `json:"token"`
	}
	require.NoError(t, json.Unmarshal(raw, &creds))
	return creds.Token
}

// ptyRun is the binary running on the slave side of a real pty, as a
// person's terminal would run it.
type ptyRun struct {
	cmd  *exec.Cmd
	ptmx *os.File // what the person's terminal emulator holds
	tty  *os.File // the slave: the attach process's stdin, stdout, stderr

	mu       sync.Mutex
	screen   []byte
	answered int // how far screen was read for queries to answer
	changed  chan struct{}

	readDone chan struct{}
	exited   chan struct{}
	code     int
}

// startOnPty starts shellgate args on a new 80×24 pty, in its own session
// with the pty as controlling terminal (so resizes signal it).
func startOnPty(t *testing.T, args ...string) *ptyRun {
	t.Helper()
	return startOnPtyIn(t, "", args...)
}

// startOnPtyIn is startOnPty in the directory dir ("" for the test's own).
func startOnPtyIn(t *testing.T, dir string, args ...string) *ptyRun {
	t.Helper()
	ptmx, tty, err := pty.Open()
	require.NoError(t, err)
	require.NoError(t, pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 80}))
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "TERM=xterm")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	require.NoError(t, cmd.Start())
	p := &ptyRun{cmd: cmd, ptmx: ptmx, tty: tty, changed: make(chan struct{}), readDone: make(chan struct{}), exited: make(chan struct{})}
	go p.read()
	go func() {
		defer close(p.exited)
		err := cmd.Wait()
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			p.code = exitErr.ExitCode()
		}
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = cmd.Process.Kill()
			<-p.exited
		}
		// With every slave descriptor closed the master reads EIO, which
		// ends the reader.
		_ = tty.Close()
		<-p.readDone
		_ = ptmx.Close()
	})
	return p
}

func (p *ptyRun) read() {
	defer close(p.readDone)
	buf := make([]byte, 4096)
	for {
		n, err := p.ptmx.Read(buf)
		p.mu.Lock()
		p.screen = append(p.screen, buf[:n]...)
		p.answerLocked()
		close(p.changed)
		p.changed = make(chan struct{})
		p.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// localAnswers are what a person's terminal (xterm) answers to the queries
// it is shown, as its input: the harness is that terminal.
var localAnswers = []struct{ query, answer string }{
	{"\x1b[5n", "\x1b[0n"},
	{"\x1b[6n", "\x1b[5;1R"},
	{"\x1b[c", "\x1b[?62;22c"},
	{"\x1b[>c", "\x1b[>41;390;0c"},
	{"\x1b]11;?\a", "\x1b]11;rgb:0000/0000/0000\a"},
	{"\x1b]11;?\x1b\\", "\x1b]11;rgb:0000/0000/0000\x1b\\"},
}

// answerLocked answers, in order, the queries shown since the last call, as
// the terminal would, before anyone reads on.
func (p *ptyRun) answerLocked() {
	for {
		first, which := -1, -1
		for i, a := range localAnswers {
			if j := strings.Index(string(p.screen[p.answered:]), a.query); j >= 0 && (first < 0 || j < first) {
				first, which = j, i
			}
		}
		if first < 0 {
			return
		}
		_, _ = p.ptmx.WriteString(localAnswers[which].answer)
		p.answered += first + len(localAnswers[which].query)
	}
}

// waitFor waits, up to the test's patience, until the output since offset
// matches re; it returns the match and the offset after it.
func (p *ptyRun) waitFor(t *testing.T, offset int, re *regexp.Regexp) ([]string, int) {
	t.Helper()
	deadline := time.NewTimer(patience)
	defer deadline.Stop()
	// After the process exits its last output may still be on its way
	// through the pty, so exiting only changes what a timeout says.
	exited := p.exited
	for {
		p.mu.Lock()
		seen := string(p.screen[offset:])
		changed := p.changed
		p.mu.Unlock()
		if loc := re.FindStringSubmatchIndex(seen); loc != nil {
			groups := make([]string, len(loc)/2)
			for i := range groups {
				if loc[2*i] >= 0 {
					groups[i] = seen[loc[2*i]:loc[2*i+1]]
				}
			}
			return groups, offset + loc[1]
		}
		select {
		case <-changed:
		case <-exited:
			exited = nil
		case <-deadline.C:
			if exited == nil {
				t.Fatalf("shellgate exited (code %d) before the output matched %s; it showed:\n%q", p.code, re, seen)
			}
			t.Fatalf("the output never matched %s; it showed:\n%q", re, seen)
		}
	}
}

func (p *ptyRun) typeText(t *testing.T, s string) {
	t.Helper()
	_, err := p.ptmx.WriteString(s)
	require.NoError(t, err)
}

// wait waits for the process to exit and returns its exit code.
func (p *ptyRun) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.code
	case <-time.After(patience):
		t.Fatal("shellgate did not exit")
		return -1
	}
}

func termios(t *testing.T, f *os.File) unix.Termios {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	require.NoError(t, err)
	return *tio
}

var attachedLine = regexp.MustCompile(`attached to (ahp-terminal:/\S+); detach with Ctrl-\] then d\r\n`)

func TestAttachUnderARealPtyTypesResizesDetachesAndReattaches(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	ctx := ctxT(t)
	first := startOnPty(t, append([]string{"attach"}, d.remoteArgs()...)...)
	before := termios(t, first.tty)
	banner, at := first.waitFor(t, 0, attachedLine)
	uri := banner[1]
	require.Zero(t, termios(t, first.tty).Lflag&(unix.ICANON|unix.ECHO), "attached, the local terminal is raw")

	first.typeText(t, "echo hi-$((1+1))\r")
	_, at = first.waitFor(t, at, regexp.MustCompile(`hi-2\r\n`))

	// Resizing the person's window resizes the shell's.
	watcher := d.dial(t, ahpclient.DialOptions{})
	initialize(t, watcher, "watcher")
	_, rpcErr, err := watcher.Subscribe(ctx, uri)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	require.NoError(t, pty.Setsize(first.ptmx, &pty.Winsize{Rows: 40, Cols: 100}))
	_, err = watcher.WaitAction(ctx, func(e ahpclient.Envelope) bool {
		v := e.View()
		return e.Type == "terminal/resized" && v.Cols != nil && *v.Cols == 100 && v.Rows != nil && *v.Rows == 40
	})
	require.NoError(t, err)
	first.typeText(t, "stty size\r")
	_, at = first.waitFor(t, at, regexp.MustCompile(`40 100\r\n`))

	// Detach: the client exits 0, the local terminal is as it was, the
	// shell keeps running.
	first.typeText(t, "\x1d")
	first.typeText(t, "d")
	first.waitFor(t, at, regexp.MustCompile(`detached from `+regexp.QuoteMeta(uri)))
	require.Equal(t, 0, first.wait(t))
	require.Equal(t, before, termios(t, first.tty), "the local terminal is restored")
	list := cli(t, d.remoteEnv(), "ls")
	require.Regexp(t, `(?m)^`+regexp.QuoteMeta(uri)+`\s+sh\s+main\s+admin\s+running$`, list.stdout)

	// Re-attach by id: the scrollback shows what happened before; the
	// shell's exit ends attach with its code.
	again := startOnPty(t, append([]string{"attach", strings.TrimPrefix(uri, "ahp-terminal:/")}, d.remoteArgs()...)...)
	_, at = again.waitFor(t, 0, attachedLine)
	_, at = again.waitFor(t, at, regexp.MustCompile(`hi-2\r\n(.|\n)*40 100\r\n`))
	again.typeText(t, "exit 7\r")
	again.waitFor(t, at, regexp.MustCompile(regexp.QuoteMeta(uri)+` exited with code 7`))
	require.Equal(t, 7, again.wait(t))
	require.Equal(t, before, termios(t, again.tty))
}

func TestAttachRestoresTheLocalTerminalWhenSignalled(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	run := startOnPty(t, append([]string{"attach"}, d.remoteArgs()...)...)
	before := termios(t, run.tty)
	banner, _ := run.waitFor(t, 0, attachedLine)
	require.NotEqual(t, before, termios(t, run.tty))
	require.NoError(t, run.cmd.Process.Signal(syscall.SIGHUP))
	require.Equal(t, 128+int(syscall.SIGHUP), run.wait(t))
	require.Equal(t, before, termios(t, run.tty), "the local terminal is restored")
	list := cli(t, d.remoteEnv(), "ls")
	require.Regexp(t, `(?m)^`+regexp.QuoteMeta(banner[1])+`\s.*running$`, list.stdout, "a signal detaches; it does not end the shell")

	// An interactive shell ignores the SIGTERM of the daemon's stop; spare
	// the test its grace period.
	c := d.dial(t, ahpclient.DialOptions{})
	initialize(t, c, "cleaner")
	rpcErr, err := c.DisposeTerminal(ctxT(t), banner[1])
	require.NoError(t, err)
	require.Nil(t, rpcErr)
}

// agentAPI calls the daemon's agent REST API with token.
func (d *daemon) agentAPI(t *testing.T, token, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var reader *strings.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		reader = strings.NewReader(string(raw))
	} else {
		reader = strings.NewReader("")
	}
	req, err := http.NewRequestWithContext(ctxT(t), method, "http://"+d.addr+path, reader)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	if json.NewDecoder(resp.Body).Decode(&out) != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return resp.StatusCode, nil
	}
	return resp.StatusCode, out
}

func TestApprovalsListsAPendingCommandAndApproveAndDenyDecideIt(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	status, body := d.agentAPI(t, d.token, "GET", "/api/agent-terminal/sessions", nil)
	require.Equal(t, http.StatusOK, status, "the daemon serves the agent API: %v", body)
	res := cli(t, d.remoteEnv(), "approvals")
	require.Equal(t, 0, res.code, res.stderr)
	require.Empty(t, res.stdout, "nothing pending")
	require.Equal(t, "nothing waits for approval\n", res.stderr)

	agent := d.addUser(t, "helper", "chat_agent")
	status, created := d.agentAPI(t, agent, "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": "helper", "agent_role": "chat_agent"})
	require.Equal(t, http.StatusCreated, status, created)
	session, _ := created["session_id"].(string)
	require.NotEmpty(t, session)
	dir := t.TempDir()
	hold := func(name string) string {
		status, held := d.agentAPI(t, agent, "POST", "/api/agent-terminal/execute?session_id="+session,
			map[string]any{"command": "mkdir " + filepath.Join(dir, name), "sandbox": false, "description": "make the " + name + " folder"})
		require.Equal(t, "pending_approval", held["status"], "HTTP %d: %v", status, held)
		id, _ := held["approval_id"].(string)
		require.NotEmpty(t, id)
		return id
	}

	approved := hold("approved")
	res = cli(t, d.remoteEnv(), "approvals")
	require.Equal(t, 0, res.code, res.stderr)
	require.Regexp(t, regexp.QuoteMeta(session)+`\s+`+regexp.QuoteMeta(approved)+`\s+helper\s+chat_agent\s+moderate\s+unconfined in \S+\s+mkdir `+regexp.QuoteMeta(filepath.Join(dir, "approved"))+`\s+.*\s+make the approved folder\n`, res.stdout,
		"the agent's description is shown beside the command")
	res = cli(t, d.remoteEnv(), "approve", session, approved)
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stderr, "approved")
	require.DirExists(t, filepath.Join(dir, "approved"))

	// Without the id, from a script: deny shows and denies what is held;
	// approve shows it and refuses to approve what nobody confirmed.
	denied := hold("denied")
	res = cli(t, d.remoteEnv(), "approve", session)
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "shellgate approve "+session+" "+denied)
	require.NoDirExists(t, filepath.Join(dir, "denied"))
	res = cli(t, d.remoteEnv(), "deny", session)
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stderr, "denied: mkdir "+filepath.Join(dir, "denied"))
	require.NoDirExists(t, filepath.Join(dir, "denied"))

	res = cli(t, d.remoteEnv(), "approve", session, denied)
	require.Equal(t, 1, res.code, "nothing is pending any more")
	require.Contains(t, res.stderr, "did not approve: approval "+denied+" is no longer the command session "+session+" is waiting on")
}

// TestApproveOfAListedCommandNeverRunsTheOneHeldSince is the review's case
// against the real daemon: a person lists a held command; someone else
// denies it and the agent submits another; the person's approval of the
// listed one is refused, and the new one does not run.
func TestApproveOfAListedCommandNeverRunsTheOneHeldSince(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	agent := d.addUser(t, "helper", "chat_agent")
	status, created := d.agentAPI(t, agent, "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": "helper", "agent_role": "chat_agent"})
	require.Equal(t, http.StatusCreated, status, created)
	session, _ := created["session_id"].(string)
	dir := t.TempDir()
	hold := func(name string) {
		status, held := d.agentAPI(t, agent, "POST", "/api/agent-terminal/execute?session_id="+session,
			map[string]any{"command": "mkdir " + filepath.Join(dir, name), "sandbox": false})
		require.Equal(t, "pending_approval", held["status"], "HTTP %d: %v", status, held)
	}

	hold("listed")
	res := cli(t, d.remoteEnv(), "approvals")
	require.Equal(t, 0, res.code, res.stderr)
	row := regexp.MustCompile(regexp.QuoteMeta(session) + `\s+(\S+)\s+helper\s+chat_agent\s+moderate\s+unconfined in \S+\s+mkdir \S+listed`).FindStringSubmatch(res.stdout)
	require.NotNil(t, row, res.stdout)
	listed := row[1]

	status, decided := d.agentAPI(t, d.token, "POST", "/api/agent-terminal/sessions/"+session+"/approve", map[string]any{"approved": false})
	require.Equal(t, http.StatusOK, status, decided)
	hold("submitted-since")

	res = cli(t, d.remoteEnv(), "approve", session, listed)
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stderr, "did not approve: approval "+listed+" is no longer the command session "+session+" is waiting on, so nothing was decided")
	require.Contains(t, res.stderr, "submitted-since", "it says what is held now")
	require.NoDirExists(t, filepath.Join(dir, "submitted-since"))
	require.NoDirExists(t, filepath.Join(dir, "listed"))

	res = cli(t, d.remoteEnv(), "approvals")
	require.Regexp(t, `mkdir \S+submitted-since`, res.stdout, "the new command is still waiting for its own decision")
}

// slowQueueDaemon is a daemon that drops a client once it is 256 KiB behind
// another that keeps reading (a lone slow reader is waited for, not
// dropped); its marks are small so that both happen soon.
func slowQueueDaemon(t *testing.T) *daemon {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("client_queue_bytes: 262144\nclient_high_water: 64KiB\nclient_low_water: 16KiB\n"), 0o600))
	return startDaemon(t, "--config", cfg)
}

// drainingViewer subscribes a bare WebSocket client to channel that reads
// and discards everything as it comes: a viewer that keeps up, so that a
// paused one falls behind it and is dropped.
func (d *daemon) drainingViewer(t *testing.T, channel string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c, _, err := websocket.Dial(ctxT(t), "ws://"+d.addr+"/", &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + d.token}}})
	require.NoError(t, err)
	c.SetReadLimit(-1)
	for _, frame := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersions":["1.0.0"],"clientId":"drainer"}}`,
		fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"subscribe","params":{"channel":%q}}`, channel),
	} {
		require.NoError(t, c.Write(ctxT(t), websocket.MessageText, []byte(frame)))
	}
	for subscribed := false; !subscribed; {
		_, msg, err := c.Read(ctxT(t))
		require.NoError(t, err)
		subscribed = strings.Contains(string(msg), `"id":2,`) && !strings.Contains(string(msg), `"error"`)
	}
	var done sync.WaitGroup
	done.Go(func() {
		for {
			_, r, err := c.Reader(ctx)
			if err != nil {
				return
			}
			if _, err := io.Copy(io.Discard, r); err != nil {
				return
			}
		}
	})
	t.Cleanup(func() { cancel(); _ = c.CloseNow(); done.Wait() })
}

// firstTerminal is the channel of the first terminal watcher's root list
// shows.
func firstTerminal(t *testing.T, watcher *ahpclient.Client) string {
	t.Helper()
	var uri string
	_, err := watcher.WaitAction(ctxT(t), func(e ahpclient.Envelope) bool {
		for _, ti := range e.View().Terminals {
			uri = ti.Resource
			return true
		}
		return false
	})
	require.NoError(t, err, "no terminal appeared")
	return uri
}

// slowClientsDropped reads shellgate_slow_clients_dropped_total; -1 when
// it cannot. (It runs inside require.Eventually's own goroutine, so it
// does not fail the test itself.)
func (d *daemon) slowClientsDropped() int {
	resp, err := d.getMetrics()
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return -1
	}
	m := regexp.MustCompile(`(?m)^shellgate_slow_clients_dropped_total (\d+)$`).FindStringSubmatch(string(body))
	if m == nil {
		return -1
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return -1
	}
	return n
}

// waitDropped waits until the daemon has dropped a slow client.
func (d *daemon) waitDropped(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool { return d.slowClientsDropped() >= 1 }, patience, 20*time.Millisecond,
		"the daemon never dropped the paused client")
}

// pausedRun is the binary with its stdout on a pipe that the test reads
// only when it chooses: a reader that pauses.
type pausedRun struct {
	proc   *os.Process
	out    *os.File
	stderr strings.Builder // read only once waited is closed
	waited chan struct{}
	err    error
}

// startPaused starts shellgate args with stdin (may be nil) and its
// stdout unread. However the test ends, the process is reaped.
func startPaused(t *testing.T, stdin *os.File, args ...string) *pausedRun {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = cleanEnv()
	cmd.WaitDelay = 5 * time.Second
	out, w, err := os.Pipe()
	require.NoError(t, err)
	p := &pausedRun{out: out, waited: make(chan struct{})}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, w, &p.stderr
	err = cmd.Start()
	w.Close()
	if err != nil {
		out.Close()
		require.NoError(t, err)
	}
	p.proc = cmd.Process
	go func() {
		p.err = cmd.Wait()
		close(p.waited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.waited:
		default:
			_ = cmd.Process.Kill()
			<-p.waited
		}
		out.Close()
	})
	return p
}

// finish reads the rest of the output and waits for the exit.
func (p *pausedRun) finish(t *testing.T) (stdout, stderr string, code int) {
	t.Helper()
	read := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(p.out) // ends at the process's exit, or the cleanup's kill
		read <- b
	}()
	select {
	case <-p.waited:
	case <-time.After(2 * patience):
		t.Fatal("shellgate did not finish")
	}
	got := <-read
	var exitErr *exec.ExitError
	if errors.As(p.err, &exitErr) {
		code = exitErr.ExitCode()
	} else {
		require.NoError(t, p.err)
	}
	return string(got), p.stderr.String(), code
}

// floodScript writes lines numbered 0 … n-1, each in a write of its own,
// then done: about 2 KB a line.
func floodScript(n int, done string) (script string, want string) {
	line := strings.Repeat("x", 2000)
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%05d %s\n", i, line)
	}
	b.WriteString(done + "\n")
	return fmt.Sprintf(`i=0; while [ $i -lt %d ]; do printf '%%05d %%s\n' $i "$LINE"; i=$((i+1)); done; echo %s`, n, done), b.String()
}

// firstDifference describes where got and want part, for a failure
// message that does not print megabytes.
func firstDifference(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	return fmt.Sprintf("got %d bytes, want %d; they differ from byte %d: got %q, want %q",
		len(got), len(want), i, got[i:min(len(got), i+40)], want[i:min(len(want), i+40)])
}

// TestExecReadSlowlyResumesAndDeliversAllItsOutput: exec's reader pauses
// until the daemon has dropped exec for falling behind; exec resumes over a
// new connection, writes every byte once, exits with the command's code and
// leaves no terminal behind.
// Not parallel: its bound is small (256 KiB), and the viewers that read
// on must keep up with the flood; beside other tests, on a loaded
// machine, they fell that far behind too and were dropped.
func TestExecReadSlowlyResumesAndDeliversAllItsOutput(t *testing.T) {
	d := slowQueueDaemon(t)
	// About 6 MB in 3000 writes: more than the sockets and the client's
	// buffer hold, less than the daemon's replay ring (8 MiB, 4096 events),
	// so whatever exec misses can be replayed.
	script, want := floodScript(3000, "exec-done")
	watcher := d.dial(t, ahpclient.DialOptions{})
	_, _, err := watcher.Initialize(ctxT(t), "watcher", nil, []string{ahpclient.RootChannel})
	require.NoError(t, err)
	run := startPaused(t, nil, append(append([]string{"exec"}, d.remoteArgs()...),
		"-e", "LINE="+strings.Repeat("x", 2000), "--", "sh", "-c", script)...)

	// The reader pauses: nothing is read until the daemon has dropped exec
	// (for falling behind the watcher, which reads on) and the command has
	// ended (so that exec resumes from a replay that holds the rest, rather
	// than racing output still pouring in).
	d.drainingViewer(t, firstTerminal(t, watcher))
	waitExited(t, watcher, "")
	d.waitDropped(t)
	got, stderr, code := run.finish(t)
	require.Equal(t, 0, code, stderr)
	require.True(t, got == want, firstDifference(got, want))
	require.NotContains(t, stderr, "could not dispose")

	list := cli(t, d.remoteEnv(), "ls")
	require.Equal(t, 0, list.code, list.stderr)
	require.Empty(t, list.stdout, "no terminal is left behind")
	require.Equal(t, "no terminals\n", list.stderr)
}

// waitExited waits until the root list, as watcher sees it, shows uri (or,
// with uri empty, any terminal) exited.
//
// Both callers wait out a flood of megabytes through a reader held back on
// purpose; on a loaded machine under -race that takes longer than the
// usual patience, so the wait is longer (it is a deadline, not a budget).
func waitExited(t *testing.T, watcher *ahpclient.Client, uri string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*patience)
	defer cancel()
	_, err := watcher.WaitAction(ctx, func(e ahpclient.Envelope) bool {
		for _, ti := range e.View().Terminals {
			if (uri == "" || ti.Resource == uri) && ti.Lifecycle != nil && ti.Lifecycle.Status == "exited" {
				return true
			}
		}
		return false
	})
	require.NoError(t, err, "the command never ended")
}

// TestAttachDroppedAsSlowReconnectsAndMissesNothing: attach's reader pauses
// until the daemon has dropped it; attach reconnects, replays what it
// missed, says so on stderr (not in the terminal's output) and carries on
// to the terminal's exit.
// Not parallel: its bound is small (256 KiB), and the viewers that read
// on must keep up with the flood; beside other tests, on a loaded
// machine, they fell that far behind too and were dropped.
func TestAttachDroppedAsSlowReconnectsAndMissesNothing(t *testing.T) {
	d := slowQueueDaemon(t)
	script, want := floodScript(3000, "attach-done")
	watcher := d.dial(t, ahpclient.DialOptions{})
	_, _, err := watcher.Initialize(ctxT(t), "watcher", nil, []string{ahpclient.RootChannel})
	require.NoError(t, err)
	// It waits for a line, so that nothing is printed before attach is
	// there to see it.
	rpcErr, err := watcher.CreateTerminal(ctxT(t), ahpclient.CreateParams{Channel: "ahp-terminal:/flood",
		Meta: map[string]any{"shellgate/spawn": map[string]any{"command": "read go; " + script, "pty": false,
			"env": map[string]any{"LINE": strings.Repeat("x", 2000)}}}})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	// A viewer reads on, so attach, paused, falls behind it.
	d.drainingViewer(t, "ahp-terminal:/flood")

	in, typed, err := os.Pipe()
	require.NoError(t, err)
	defer typed.Close()
	run := startPaused(t, in, append([]string{"attach", "flood"}, d.remoteArgs()...)...)
	in.Close()
	// attach reads what is typed only once it is subscribed.
	_, err = typed.WriteString("go\n")
	require.NoError(t, err)
	require.NoError(t, typed.Close())
	// Stopped, attach reads nothing, so its socket's receive buffer does
	// not grow: the kernel holds far less than the flood, and the daemon
	// sees attach fall behind mid-flood, not after the exit was written.
	// (Only blocked on its stdout, attach kept reading into a buffer that
	// grew to hold the whole flood, and the drop came too late to see.)
	// It is stopped once the flood has reached it, so the line typed has
	// been forwarded.
	head := make([]byte, len("00000 "))
	_, err = io.ReadFull(run.out, head)
	require.NoError(t, err)
	require.NoError(t, run.proc.Signal(syscall.SIGSTOP))
	d.waitDropped(t)
	waitExited(t, watcher, "ahp-terminal:/flood")
	require.NoError(t, run.proc.Signal(syscall.SIGCONT))
	got, stderr, code := run.finish(t)
	got = string(head) + got
	require.Equal(t, 0, code, stderr)
	require.True(t, got == want, firstDifference(got, want))
	// The close carries the reason when attach reads it in time; stopped
	// for longer than the daemon's close handshake waits, attach sees the
	// connection end without it. Either way it resumes with nothing missed.
	require.Regexp(t, `shellgate: (fell behind the terminal's output and was dropped by the daemon|lost the connection to the daemon); reconnected, nothing missed\n`, stderr)
	require.Contains(t, stderr, "ahp-terminal:/flood exited with code 0")
}

// localState is the screen, modes and scroll region of the harness's
// terminal after everything attach wrote to it.
func (p *ptyRun) localState() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := screen.NewScreen(80, 24)
	defer s.Close()
	s.Write(string(p.screen))
	return s.Serialize()
}

var scrollRegion = regexp.MustCompile(`\x1b\[\d+;\d+r`)

func TestAttachAgainAfterVimTypesNothingAndDetachRestoresTheScrollRegion(t *testing.T) {
	t.Parallel()
	requireVim(t)
	d := startDaemon(t)
	first := startOnPty(t, append([]string{"attach"}, d.remoteArgs()...)...)
	banner, at := first.waitFor(t, 0, attachedLine)
	uri := banner[1]
	first.typeText(t, "exec bash --norc --noprofile\r")
	first.typeText(t, fmt.Sprintf("cd %s && printf 'al%%sha\\nb%%sta\\n' p e > f.txt && vim -u NONE -N -i NONE -n f.txt\r", t.TempDir()))
	_, at = first.waitFor(t, at, regexp.MustCompile(`"f\.txt" 2L, 11B`))
	first.typeText(t, ":q\r")
	// Typed before vim has gone, the next line would be vim's typeahead.
	_, at = first.waitFor(t, at, regexp.MustCompile(`\x1b\[\?1049l(.|\n)*# $`))
	// A program that leaves a scroll region, application cursor keys and
	// bracketed paste on, and then a silent read: whatever reaches the
	// shell's input from now on lands in $got, which the fence shows whole.
	first.typeText(t, `printf '\033[3;12r\033[?1h\033[?2004h'; printf 'left-%s\n' on; IFS= read -rs got; printf 'got=[%q]\n' "$got"`+"\r")
	_, at = first.waitFor(t, at, regexp.MustCompile(`left-on\r\n`))
	require.Regexp(t, scrollRegion, first.localState(), "the program's scroll region reached the local terminal")
	first.typeText(t, "\x1d")
	first.typeText(t, "d")
	first.waitFor(t, at, regexp.MustCompile(`detached from `+regexp.QuoteMeta(uri)))
	require.Equal(t, 0, first.wait(t))
	local := first.localState()
	require.NotRegexp(t, scrollRegion, local, "after detach the scroll region is the whole screen")
	for _, mode := range []string{"\x1b[?1h", "\x1b[?2004h", "\x1b[?1049h"} {
		require.NotContains(t, local, mode)
	}

	// Re-attach: the history (vim's queries in it) and the screen are
	// drawn; the harness answers whatever queries it is shown, as a
	// terminal would.
	again := startOnPty(t, append([]string{"attach", strings.TrimPrefix(uri, "ahp-terminal:/")}, d.remoteArgs()...)...)
	_, at = again.waitFor(t, 0, attachedLine)
	_, at = again.waitFor(t, at, regexp.MustCompile(`left-on`))
	_, at = again.waitFor(t, at, regexp.MustCompile(regexp.QuoteMeta("\x1b[5n")))
	again.typeText(t, "\x1d")
	again.typeText(t, "d")
	again.waitFor(t, at, regexp.MustCompile(`detached from `+regexp.QuoteMeta(uri)))
	require.Equal(t, 0, again.wait(t))
	require.NotRegexp(t, scrollRegion, again.localState(), "after detach the scroll region is the whole screen")

	owner := d.dial(t, ahpclient.DialOptions{})
	initialize(t, owner, "owner")
	_, rpcErr, err := owner.Subscribe(ctxT(t), uri)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	requireOnlyFence(t, owner, uri)
}
