package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

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

	_, err = owner.Dispatch(ctxT(t), uri, ahpclient.InputAction("fence\n"))
	require.NoError(t, err)
	// Waits read on from "printed-2": the command line's own echo, which
	// holds "got=[" too, is behind.
	_, err = owner.WaitOutput(ctxT(t), uri, "got=[")
	require.NoError(t, err)
	_, err = owner.WaitOutput(ctxT(t), uri, "]\r\n")
	require.NoError(t, err)
	out := owner.Output(uri)
	got := out[strings.LastIndex(out, "\ngot=[")+1:]
	require.True(t, strings.HasPrefix(got, "got=[fence]\r\n"), "the shell received input nobody typed: %q", got)
	b.waitScreenLine("got=[fence]")
	b.requireCleanPage()
}
