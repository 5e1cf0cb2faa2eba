package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/screen"
	"github.com/shellgate/shellgate/tests/ahpclient"
)

// queryLine is a command line that prints the three queries a terminal
// answers most readily (DA1, DSR 6 — the cursor position — and OSC 11, the
// background colour), then a marker.
const queryLine = `printf '\033[c\033[6n\033]11;?\033\\'; echo printed-$((1+1))` + "\n"

// printedQueries is what the queries look like in the output.
var printedQueries = []string{"\x1b[c", "\x1b[6n", "\x1b]11;?"}

// bashTerminal opens a pty terminal running a real bash (no rc files) and
// subscribes c to it.
func bashTerminal(t *testing.T, c *ahpclient.Client, uri string) {
	t.Helper()
	rpcErr, err := c.CreateTerminal(ctxT(t), ahpclient.CreateParams{Channel: uri, Name: "bash", Meta: spawn("exec bash --norc --noprofile", true)})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, rpcErr, err = c.Subscribe(ctxT(t), uri)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
}

func TestLateViewersSnapshotHoldsNoQueryAProgramPrinted(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	owner := d.dial(t, ahpclient.DialOptions{})
	initialize(t, owner, "owner")
	const uri = "ahp-terminal:/asks"
	bashTerminal(t, owner, uri)
	_, err := owner.Dispatch(ctxT(t), uri, ahpclient.InputAction(queryLine))
	require.NoError(t, err)
	live, err := owner.WaitOutput(ctxT(t), uri, "printed-2")
	require.NoError(t, err)
	for _, q := range printedQueries {
		require.Contains(t, live, q, "a live viewer gets the output whole")
	}

	viewer := d.dial(t, ahpclient.DialOptions{})
	initialize(t, viewer, "viewer")
	snap, rpcErr, err := viewer.Subscribe(ctxT(t), uri)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	state, err := snap.Terminal()
	require.NoError(t, err)
	text := state.Text()
	require.Contains(t, text, "printed-2")
	for _, q := range printedQueries {
		require.NotContains(t, text, q, "the snapshot's content holds a query")
	}
}

// TestBrowserOpeningATerminalTypesNothingIntoIt opens, in headless
// Chromium, a terminal whose scrollback holds queries, as another member
// who may type there; while the page draws the scrollback nothing of what
// xterm.js answers reaches the shell.
func TestBrowserOpeningATerminalTypesNothingIntoIt(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	d := startDaemon(t)
	sam := d.addUser(t, "sam", "member")
	owner := d.dial(t, ahpclient.DialOptions{})
	initialize(t, owner, "owner")
	const uri = "ahp-terminal:/browser-asks"
	bashTerminal(t, owner, uri)
	// The queries, then a silent read: whatever reaches the shell's input
	// from now on lands in $got, which the fence shows whole.
	_, err := owner.Dispatch(ctxT(t), uri, ahpclient.InputAction(strings.TrimSuffix(queryLine, "\n")+
		`; IFS= read -rs got; printf 'got=[%q]\n' "$got"`+"\n"))
	require.NoError(t, err)
	_, err = owner.WaitOutput(ctxT(t), uri, "printed-2\r\n")
	require.NoError(t, err)

	b := newPageBrowser(t)
	b.signIn(startBrowserFront(t, d, nil).url, sam)
	row := browserRow(uri)
	b.visible(row)
	b.click(row + ` [data-testid="terminal-open"]`)
	b.waitScreenLine("printed-2")
	b.waitJS("the page to finish drawing the scrollback",
		`document.querySelector('[data-testid="terminal-screen"]').dataset.replaying === '0'`, nil)
	require.Empty(t, b.textOf(`[data-testid="readonly-banner"]`), "sam may type here")

	requireOnlyFence(t, owner, uri)
	b.waitScreenLine("got=[fence]")
	b.requireCleanPage()
}

// screenOf subscribes c to uri once and returns the snapshot's
// shellgate/screen, and whether it has one.
func screenOf(t *testing.T, c *ahpclient.Client, uri string) (string, bool) {
	t.Helper()
	snap, rpcErr, err := c.Subscribe(ctxT(t), uri)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	require.NoError(t, c.Unsubscribe(ctxT(t), uri))
	state, err := snap.Terminal()
	require.NoError(t, err)
	var raw struct {
		Meta map[string]string `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(state.Raw, &raw))
	serialized, ok := raw.Meta["shellgate/screen"]
	return serialized, ok
}

// screenRowsOf subscribes c to uri once and returns the rows the
// snapshot's shellgate/screen draws on a blank terminal of cols×rows.
func screenRowsOf(t *testing.T, c *ahpclient.Client, uri string, cols, rows int) []string {
	t.Helper()
	serialized, ok := screenOf(t, c, uri)
	require.True(t, ok, "the snapshot of a terminal showing the alternate screen carries shellgate/screen")
	s := screen.NewScreen(cols, rows)
	defer s.Close()
	s.Write(serialized)
	return s.Rows()
}

// vimTerminal opens bash in an 80×24 pty, starts vim on a two-line file and
// waits until vim has drawn it.
func vimTerminal(t *testing.T, owner *ahpclient.Client, uri string) {
	t.Helper()
	rpcErr, err := owner.CreateTerminal(ctxT(t), ahpclient.CreateParams{Channel: uri, Name: "vim", Cols: 80, Rows: 24,
		Meta: spawn("exec bash --norc --noprofile", true)})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, rpcErr, err = owner.Subscribe(ctxT(t), uri)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	dir := t.TempDir()
	// The file's text is not in the command line, so it shows only once vim
	// draws it.
	_, err = owner.Dispatch(ctxT(t), uri, ahpclient.InputAction(fmt.Sprintf(
		"cd %s && printf 'al%%sha\\nb%%sta\\n' p e > f.txt && vim -u NONE -N -i NONE -n f.txt\n", dir)))
	require.NoError(t, err)
	_, err = owner.WaitOutput(ctxT(t), uri, "alpha")
	require.NoError(t, err)
	// vim paints on: wait until the model shows the file and its last "~".
	deadline := time.Now().Add(patience)
	for {
		rows := screenRowsOf(t, owner, uri, 80, 24)
		if rows[0] == "alpha" && rows[1] == "beta" && rows[22] == "~" {
			return
		}
		require.True(t, time.Now().Before(deadline), "vim did not draw the file; the model shows:\n%s", strings.Join(rows, "\n"))
		_, _ = owner.WaitOutput(ctxT(t), uri, "\x1b[")
	}
}

func TestSnapshotCarriesAScreenOnlyWhileAFullScreenProgramIsOpen(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	owner := d.dial(t, ahpclient.DialOptions{})
	initialize(t, owner, "owner")
	// Late viewers subscribe and leave again; the owner stays subscribed.
	late := d.dial(t, ahpclient.DialOptions{})
	initialize(t, late, "late")
	const uri = "ahp-terminal:/screen-lifetime"
	rpcErr, err := owner.CreateTerminal(ctxT(t), ahpclient.CreateParams{Channel: uri, Name: "shell", Cols: 80, Rows: 24,
		Meta: spawn("exec bash --norc --noprofile", true)})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, rpcErr, err = owner.Subscribe(ctxT(t), uri)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	typed := func(line, until string) {
		t.Helper()
		_, err := owner.Dispatch(ctxT(t), uri, ahpclient.InputAction(line))
		require.NoError(t, err)
		_, err = owner.WaitOutput(ctxT(t), uri, until)
		require.NoError(t, err)
	}

	typed("echo shell-''up\n", "shell-up")
	_, ok := screenOf(t, late, uri)
	require.False(t, ok, "a shell on the main screen has no screen model: viewers draw its scrollback")

	// A full-screen program, as small as one gets: it enters the
	// alternate screen, draws, waits for a line, and leaves.
	typed(`printf '\033[?1049h\033[2J\033[5;3Hfull-''screen'; read x; printf '\033[?1049l'; echo left-''it`+"\n", "full-screen")
	rows := screenRowsOf(t, late, uri, 80, 24)
	require.Equal(t, "  full-screen", rows[4], "the snapshot draws the program's screen")
	typed("\n", "left-it")
	_, ok = screenOf(t, late, uri)
	require.False(t, ok, "once the program has left the alternate screen its model is dropped")
}

func requireVim(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("vim"); err != nil {
		t.Skipf("vim is not installed (Debian: apt-get install vim): %v", err)
	}
}

// TestBrowserLateViewerSeesVimsScreen opens, in headless Chromium, a
// terminal where vim is open, long after vim drew its screen: the
// scrollback (kept short here) no longer holds that drawing, so the page
// can only show it from the host's screen model.
func TestBrowserLateViewerSeesVimsScreen(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	requireVim(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("scrollback_chars: 200\n"), 0o600))
	d := startDaemon(t, "--config", cfg)
	users := filepath.Join(d.dataDir, "users.yaml")
	raw, err := os.ReadFile(users)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(users, []byte("roles:\n  watcher: [terminal:output]\n"+string(raw)), 0o600))
	// A watcher follows the host's size, so vim is not redrawn for the page.
	wanda := d.addUser(t, "wanda", "watcher")
	owner := d.dial(t, ahpclient.DialOptions{})
	initialize(t, owner, "owner")
	const uri = "ahp-terminal:/browser-vim"
	vimTerminal(t, owner, uri)

	model := screenRowsOf(t, owner, uri, 80, 24)
	require.Equal(t, "alpha", model[0])
	require.Equal(t, "beta", model[1])
	require.Equal(t, "~", model[2])
	snap, _, err := owner.Subscribe(ctxT(t), uri)
	require.NoError(t, err)
	state, err := snap.Terminal()
	require.NoError(t, err)
	require.NotContains(t, state.Text(), "alpha", "the scrollback alone no longer holds vim's drawing")

	b := newPageBrowser(t)
	b.signIn(startBrowserFront(t, d, nil).url, wanda)
	row := browserRow(uri)
	b.visible(row)
	b.click(row + ` [data-testid="terminal-open"]`)
	b.waitScreenLine("alpha")
	b.waitJS("the page to finish drawing the snapshot",
		`document.querySelector('[data-testid="terminal-screen"]').dataset.replaying === '0'`, nil)
	require.Equal(t, "alternate", browserEval[string](b, `window.shellgate.term.buffer.active.type`), "vim is on the alternate screen")
	require.Equal(t, "80x24", browserEval[string](b, `window.shellgate.term.cols + 'x' + window.shellgate.term.rows`))
	require.Equal(t, screenRowsOf(t, owner, uri, 80, 24), b.screenRows(), "the page shows the host's screen")
	b.requireCleanPage()
	b.screenshot("browser-late-viewer-vim")
}

// TestBrowserReplayAfterAReconnectTypesNothing: what a terminal printed
// while the page was disconnected comes back as a replay of the live
// events, queries and all (only the scrollback is cleaned); the page must
// not send what xterm.js answers to them.
func TestBrowserReplayAfterAReconnectTypesNothing(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	d := startDaemon(t)
	sam := d.addUser(t, "sam", "member")
	owner := d.dial(t, ahpclient.DialOptions{})
	initialize(t, owner, "owner")
	const uri = "ahp-terminal:/browser-replay-asks"
	bashTerminal(t, owner, uri)
	_, err := owner.Dispatch(ctxT(t), uri, ahpclient.InputAction("echo ready-$((2+3))\n"))
	require.NoError(t, err)
	_, err = owner.WaitOutput(ctxT(t), uri, "ready-5\r\n")
	require.NoError(t, err)

	f := startBrowserFront(t, d, nil)
	b := newPageBrowser(t)
	b.signIn(f.url, sam)
	b.click(browserRow(uri) + ` [data-testid="terminal-open"]`)
	b.waitScreenLine("ready-5")

	f.refuseSockets(true)
	require.Positive(t, f.dropSockets())
	b.waitJS("the page to notice the loss",
		`document.querySelector('[data-testid="conn-status"]').dataset.state !== 'connected'`, nil)
	_, err = owner.Dispatch(ctxT(t), uri, ahpclient.InputAction(strings.TrimSuffix(queryLine, "\n")+
		`; IFS= read -rs got; printf 'got=[%q]\n' "$got"`+"\n"))
	require.NoError(t, err)
	_, err = owner.WaitOutput(ctxT(t), uri, "printed-2\r\n")
	require.NoError(t, err)
	f.refuseSockets(false)

	b.waitJS("the page to reconnect",
		`document.querySelector('[data-testid="conn-status"]').dataset.state === 'connected'`, nil)
	b.waitScreenLine("printed-2")
	require.Equal(t, "replay", browserEval[string](b, `window.shellgate.client.lastHandshake`))
	b.waitJS("the page to finish drawing the replay",
		`document.querySelector('[data-testid="terminal-screen"]').dataset.replaying === '0'`, nil)

	requireOnlyFence(t, owner, uri)
	b.requireCleanPage()
}

// requireOnlyFence types "fence" into the terminal at uri, whose shell
// runs `IFS= read -rs got; printf 'got=[%q]\n' "$got"`, and fails unless it read that
// and nothing before it: no replay made anyone's terminal type. The wait
// reads on from where the client is, so the command line's own echo,
// which holds "got=[" too, is behind it.
func requireOnlyFence(t *testing.T, owner *ahpclient.Client, uri string) {
	t.Helper()
	_, err := owner.Dispatch(ctxT(t), uri, ahpclient.InputAction("fence\n"))
	require.NoError(t, err)
	_, err = owner.WaitOutput(ctxT(t), uri, "got=[")
	require.NoError(t, err)
	_, err = owner.WaitOutput(ctxT(t), uri, "]\r\n")
	require.NoError(t, err)
	out := owner.Output(uri)
	got := out[strings.LastIndex(out, "\ngot=[")+1:]
	require.True(t, strings.HasPrefix(got, "got=[fence]\r\n"), "the shell received input nobody typed: %q", got)
}
