// Tests of the terminal client commands (attach, ls, exec, approvals): the
// real binary against a real daemon, attach under a real pseudoterminal.
package tests

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

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
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(cleanEnv(), env...)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
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
	require.Equal(t, 1, strings.Count(list.stdout, "\n"), "only the header is left: %q", list.stdout)
	kept := cli(t, d.remoteEnv(), "exec", "--keep", "--", "sh", "-c", "exit 4")
	require.Equal(t, 4, kept.code)
	uri := regexp.MustCompile(`kept (ahp-terminal:/\S+)`).FindStringSubmatch(kept.stderr)
	require.NotNil(t, uri, kept.stderr)
	list = cli(t, d.remoteEnv(), "ls")
	require.Regexp(t, regexp.QuoteMeta(uri[1])+`\s+sh -c exit 4\s+client \S+\s+exited 4\n`, list.stdout)
}

func TestClientCommandsShowTheDaemonsRefusalButNeverTheToken(t *testing.T) {
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
	dataDir := t.TempDir()
	d := startDaemonIn(t, dataDir) // first start: writes credentials.json
	res := cli(t, nil, "ls", "--data-dir", dataDir)
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "TERMINAL  TITLE  CLAIM  STATUS\n", res.stdout)

	creds := readCreds(t, dataDir)
	c := d.dial(t, ahpclient.DialOptions{Token: creds})
	initialize(t, c, "lister")
	rpcErr, err := c.CreateTerminal(ctxT(t), ahpclient.CreateParams{Channel: "ahp-terminal:/listed", Name: "build \x1b[31mbox"})
	require.NoError(t, err)
	require.Nil(t, rpcErr)

	res = cli(t, []string{"SHELLGATE_DATA_DIR=" + dataDir}, "ls")
	require.Equal(t, 0, res.code, res.stderr)
	require.Regexp(t, `(?m)^ahp-terminal:/listed\s+build \\x1b\[31mbox\s+client lister\s+running$`, res.stdout,
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

	mu      sync.Mutex
	screen  []byte
	changed chan struct{}

	readDone chan struct{}
	exited   chan struct{}
	code     int
}

// startOnPty starts shellgate args on a new 80×24 pty, in its own session
// with the pty as controlling terminal (so resizes signal it).
func startOnPty(t *testing.T, args ...string) *ptyRun {
	t.Helper()
	ptmx, tty, err := pty.Open()
	require.NoError(t, err)
	require.NoError(t, pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 80}))
	cmd := exec.Command(binary, args...)
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
		close(p.changed)
		p.changed = make(chan struct{})
		p.mu.Unlock()
		if err != nil {
			return
		}
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
	require.Regexp(t, `(?m)^`+regexp.QuoteMeta(uri)+`\s+sh\s+client \S+\s+running$`, list.stdout)

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
	d := startDaemon(t)
	status, body := d.agentAPI(t, d.token, "GET", "/api/agent-terminal/sessions", nil)
	require.Equal(t, http.StatusOK, status, "the daemon serves the agent API: %v", body)
	res := cli(t, d.remoteEnv(), "approvals")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, 1, strings.Count(res.stdout, "\n"), "nothing pending: only the header: %q", res.stdout)

	agent := d.addUser(t, "helper", "chat_agent")
	status, created := d.agentAPI(t, agent, "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": "helper", "agent_role": "chat_agent"})
	require.Equal(t, http.StatusCreated, status, created)
	session, _ := created["session_id"].(string)
	require.NotEmpty(t, session)
	dir := t.TempDir()
	hold := func(name string) {
		status, held := d.agentAPI(t, agent, "POST", "/api/agent-terminal/execute?session_id="+session,
			map[string]any{"command": "mkdir " + filepath.Join(dir, name)})
		require.Equal(t, "pending_approval", held["status"], "HTTP %d: %v", status, held)
	}

	hold("approved")
	res = cli(t, d.remoteEnv(), "approvals")
	require.Equal(t, 0, res.code, res.stderr)
	require.Regexp(t, regexp.QuoteMeta(session)+`\s+helper\s+chat_agent\s+moderate\s+mkdir `+regexp.QuoteMeta(filepath.Join(dir, "approved")), res.stdout)
	res = cli(t, d.remoteEnv(), "approve", session)
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stderr, "approved")
	require.DirExists(t, filepath.Join(dir, "approved"))

	hold("denied")
	res = cli(t, d.remoteEnv(), "deny", session)
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stderr, "denied")
	require.NoDirExists(t, filepath.Join(dir, "denied"))

	res = cli(t, d.remoteEnv(), "approve", session)
	require.Equal(t, 1, res.code, "nothing is pending any more")
	require.Contains(t, res.stderr, "the daemon refused POST /api/agent-terminal/sessions/"+session+"/approve: HTTP ")
}
