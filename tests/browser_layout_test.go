// Browser tests of the page's layout and of what it offers a person by
// their grants: collapsible panels, agent terminals grouped under their
// session, the tab title's count of pending approvals, a viewer's
// read-only page, and a revoked token's way back to the sign-in form.
package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/userstore"
	"github.com/shellgate/shellgate/tests/ahpclient"
)

// browserAgent opens an agent session for a new chat_agent and returns its
// token and session id.
func browserAgent(t *testing.T, d *daemon, name string) (token, session string) {
	t.Helper()
	token = d.addUser(t, name, "chat_agent")
	status, created := d.agentAPI(t, token, "POST", "/api/agent-terminal/sessions", map[string]any{"agent_id": name, "agent_role": "chat_agent"})
	require.Equal(t, http.StatusCreated, status, created)
	session, _ = created["session_id"].(string)
	require.NotEmpty(t, session)
	return token, session
}

// browserHold makes the agent submit a command that waits for a person.
func browserHold(t *testing.T, d *daemon, token, session, dir, description string) {
	t.Helper()
	status, held := d.agentAPI(t, token, "POST", "/api/agent-terminal/execute?session_id="+session,
		map[string]any{"command": "mkdir " + filepath.Join(dir, "held"), "sandbox": false, "description": description})
	require.Equal(t, "pending_approval", held["status"], "HTTP %d: %v", status, held)
}

// waitPrompt waits until the open terminal shows a shell prompt (sh's "$ "
// or, as root, "# "): what is typed before it is drawn may be echoed out
// of order or lost to the shell's start-up.
func (b *pageBrowser) waitPrompt() {
	b.t.Helper()
	b.waitJS("a shell prompt", `Array.from(document.querySelectorAll('[data-testid="terminal-screen"] .xterm-rows > div'))
		.some((r) => /[$#]$/.test(r.textContent.replace(/\u00a0/g, ' ').trim()))`,
		func() string { return "screen:\n" + b.screenText() })
}

// width is an element's rendered width in CSS pixels (0 when not shown).
func (b *pageBrowser) width(sel string) float64 {
	b.t.Helper()
	lit, _ := json.Marshal(sel)
	return browserEval[float64](b, fmt.Sprintf(`(() => { const n = document.querySelector(%s); return n ? n.getBoundingClientRect().width : 0; })()`, lit))
}

func TestBrowserLayoutGivesTheTerminalTheRoomAndGroupsAgentTerminals(t *testing.T) {
	requireBrowser(t)
	t.Parallel()
	d := startDaemon(t)
	base := startBrowserFront(t, d, nil).url
	const uri = "ahp-terminal:/browser-room"
	browserShell(t, d, uri, "room")

	b := newPageBrowser(t)
	b.signIn(base, d.token)
	b.visible(browserRow(uri))
	// No agent session: the agent panel takes no width at all.
	b.waitJS("the empty agent panel to give up its width", `document.querySelector('[data-testid="agent-panel"]').getBoundingClientRect().width === 0`, nil)

	// The person has allowed notifications (a stand-in records them: a
	// headless browser shows none).
	browserEval[bool](b, `(() => {
		window.shown = [];
		window.Notification = class { static permission = 'granted'; constructor(title, o) { window.shown.push(title + ' | ' + o.body); } };
		return true;
	})()`)

	// An agent runs three commands (each in a terminal of its own) and
	// holds a fourth for a person.
	agent, session := browserAgent(t, d, "helper")
	for i := range 3 {
		status, ran := d.agentAPI(t, agent, "POST", "/api/agent-terminal/execute?session_id="+session,
			map[string]any{"command": fmt.Sprintf("echo step-%d", i)})
		require.Equal(t, "success", ran["status"], "HTTP %d: %v", status, ran)
	}
	browserHold(t, d, agent, session, t.TempDir(), "make the held folder")

	// The agent's terminals sit under one collapsed row, not among people's.
	group := `[data-testid="agent-group"]`
	b.waitJS("the agent's terminals grouped under its session", `(() => {
		const g = document.querySelectorAll('[data-testid="agent-group"]');
		return g.length === 1 && g[0].textContent.includes('agent helper · 3 commands');
	})()`, func() string { return "list: " + b.textOf(`[data-testid="terminal-list"]`) })
	require.Equal(t, 1, browserEval[int](b, `document.querySelectorAll('#terminal-list > [data-testid="terminal-row"]').length`),
		"only the person's own terminal is at the top of the list")
	require.Equal(t, 0, browserEval[int](b, `document.querySelectorAll('[data-testid="agent-group"] [data-testid="terminal-row"]').length`),
		"collapsed by default")
	b.click(group + ` [data-testid="agent-group-toggle"]`)
	b.visible(group + ` [data-testid="agent-group-exited"]`)
	require.Equal(t, "3 ended — show", b.textOf(group+` [data-testid="agent-group-exited"]`), "ended commands wait behind a count")
	b.click(group + ` [data-testid="agent-group-exited"]`)
	b.waitJS("the ended commands to show", `document.querySelectorAll('[data-testid="agent-group"] [data-testid="terminal-row"]').length === 3`, nil)

	// The tab's title follows the open terminal and counts what waits.
	b.click(browserRow(uri) + ` [data-testid="terminal-open"]`)
	b.waitPrompt()
	b.waitJS("the title to count the held command", `document.title === '(1) room — shellgate'`,
		func() string { return "title: " + browserEval[string](b, `document.title`) })
	b.visible(`[data-testid="approval-description"]`)
	require.Equal(t, "make the held folder", b.textOf(`[data-testid="approval-description"]`))
	shown := browserEval[[]string](b, `window.shown`)
	require.Len(t, shown, 1, "one notification for the one new held command")
	require.Regexp(t, `^shellgate: helper waits for approval \| mkdir \S+/held$`, shown[0])
	b.screenshot("browser-layout-panels-open")

	// Both panels collapsed: the terminal gets at least 90% of the window's
	// width, and its columns follow.
	colsBefore := browserEval[int](b, `window.shellgate.term.cols`)
	b.click(`[data-testid="collapse-terminals"]`)
	b.click(`[data-testid="collapse-agents"]`)
	b.waitJS("the terminal to take the room", `document.querySelector('[data-testid="terminal-screen"]').getBoundingClientRect().width >= 0.9 * window.innerWidth`,
		func() string {
			return fmt.Sprintf("screen %.0f of %.0f", b.width(`[data-testid="terminal-screen"]`), browserEval[float64](b, `window.innerWidth`))
		})
	b.waitJS("the host to take the wider size", `(() => { const s = document.querySelector('[data-testid="terminal-screen"]').dataset; return s.viewSize && s.viewSize === s.hostSize; })()`, nil)
	cols := browserEval[int](b, `window.shellgate.term.cols`)
	require.Greater(t, cols, colsBefore+40, "the columns grew with the pane")
	b.typeIntoScreen("stty size", kb.Enter)
	b.waitScreenLine(fmt.Sprintf("%d %d", browserEval[int](b, `window.shellgate.term.rows`), cols))
	b.screenshot("browser-layout-panels-collapsed")

	// Remembered by this browser: a reload keeps them collapsed.
	b.do(chromedp.Reload())
	b.waitJS("the page to connect again", `document.querySelector('[data-testid="conn-status"]')?.dataset.state === 'connected'`, nil)
	require.True(t, browserEval[bool](b, `document.querySelector('[data-testid="terminal-panel"]').classList.contains('collapsed') &&
		document.querySelector('[data-testid="agent-panel"]').classList.contains('collapsed')`))
	b.click(`[data-testid="collapse-terminals"]`)
	b.visible(browserRow(uri))
	b.requireCleanPage()
}

func TestBrowserViewerWatchesWithoutTypeOrCloseButtons(t *testing.T) {
	requireBrowser(t)
	t.Parallel()
	d := startDaemon(t)
	base := startBrowserFront(t, d, nil).url
	const uri = "ahp-terminal:/browser-viewed"
	admin := browserShell(t, d, uri, "viewed")
	agent, session := browserAgent(t, d, "helper")
	browserHold(t, d, agent, session, t.TempDir(), "make the held folder")
	viewer := d.addUser(t, "vic", "viewer")

	b := newPageBrowser(t)
	b.signIn(base, viewer)
	b.visible(browserRow(uri))
	require.Equal(t, "signed in as vic", b.textOf(`[data-testid="who"]`))
	require.False(t, browserEval[bool](b, `!!document.querySelector('[data-testid="new-terminal"]')?.getClientRects().length`),
		"no New button for a person who may not open terminals")
	require.Zero(t, browserEval[int](b, `document.querySelectorAll('[data-testid="terminal-close"]').length`), "no Close buttons")
	require.Equal(t, "You can watch every terminal here; your role does not let you type into them, open new ones or close them.",
		b.textOf(`[data-testid="list-banner"]`))

	b.click(browserRow(uri) + ` [data-testid="terminal-open"]`)
	b.visible(`[data-testid="readonly-banner"]`)
	require.Equal(t, "Read-only: you can watch this terminal, but not type into it", b.textOf(`[data-testid="readonly-banner"]`))
	require.False(t, browserEval[bool](b, `!!document.querySelector('[data-testid="close-terminal"]')?.getClientRects().length`), "no Close terminal button")
	_, err := admin.Dispatch(ctxT(t), uri, ahpclient.InputAction("echo from-$((40+2))-admin\n"))
	require.NoError(t, err)
	b.waitScreenLine("from-42-admin")
	marker := filepath.Join(t.TempDir(), "typed-by-viewer")
	b.typeIntoScreen("touch "+marker, kb.Enter)
	_, err = admin.Dispatch(ctxT(t), uri, ahpclient.InputAction("echo after-$((50+5))\n"))
	require.NoError(t, err)
	b.waitScreenLine("after-55")
	require.NoFileExists(t, marker, "what a viewer types reaches no shell")

	// The held command is in view, with the agent's description, and
	// nothing to decide it with.
	b.visible(`[data-testid="approval"]`)
	require.Equal(t, "make the held folder", b.textOf(`[data-testid="approval-description"]`))
	require.Zero(t, browserEval[int](b, `document.querySelectorAll('[data-testid="approve-button"], [data-testid="deny-button"], [data-testid="interrupt-button"], [data-testid="resume-button"]').length`),
		"no button the viewer's grants do not allow")
	require.Empty(t, b.visibleErrors())
	b.requireCleanPage()
	b.screenshot("browser-viewer-read-only")
}

func TestBrowserRevokedTokenLandsOnTheSignInFormWithTheReason(t *testing.T) {
	requireBrowser(t)
	t.Parallel()
	d := startDaemon(t)
	base := startBrowserFront(t, d, nil).url
	member := d.addUser(t, "sam", "member")

	b := newPageBrowser(t)
	b.signIn(base, member)
	store, err := userstore.Open(filepath.Join(d.dataDir, "users.yaml"))
	require.NoError(t, err)
	_, err = store.Rotate("sam")
	require.NoError(t, err)
	b.visible(`[data-testid="signin-form"]`)
	b.waitJS("the reason on the sign-in form", `(document.querySelector('[data-testid="signin-reason"]')?.textContent || '').includes('revoked')`,
		func() string { return "reason: " + b.textOf(`[data-testid="signin-reason"]`) })
	require.True(t, strings.HasPrefix(b.textOf(`[data-testid="signin-reason"]`), "The host ended your sign-in: "), b.textOf(`[data-testid="signin-reason"]`))
	require.Empty(t, browserEval[string](b, `sessionStorage.getItem('shellgate.token') || ''`), "the revoked token is forgotten")
	b.screenshot("browser-revoked-sign-in")

	// A token the host never knew (or no longer does) at the door: the
	// same form, saying so, instead of retrying for ever.
	b.do(chromedp.Navigate("about:blank"), chromedp.Navigate(base+"/#token=sg_not-a-token"))
	b.waitJS("the sign-in form after a refused token", `(document.querySelector('[data-testid="signin-reason"]')?.textContent || '').includes('does not accept this token')`,
		func() string { return "status: " + b.textOf(`[data-testid="conn-status"]`) })
	b.visible(`[data-testid="token-input"]`)
	b.requireCleanPage()
}
