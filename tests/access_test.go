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
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/userstore"
	"github.com/shellgate/shellgate/tests/ahpclient"
)

// people adds users to the daemon's users file and returns their tokens.
func (d *daemon) addUser(t *testing.T, id, role string) string {
	t.Helper()
	store, err := userstore.Open(filepath.Join(d.dataDir, "users.yaml"))
	require.NoError(t, err)
	token, err := store.Add(id, role)
	require.NoError(t, err)
	return token
}

func (d *daemon) resource() string { return "http://" + d.addr + "/" }

func initialize(t *testing.T, c *ahpclient.Client, id string, subs ...string) {
	t.Helper()
	_, rpcErr, err := c.Initialize(ctxT(t), id, nil, subs)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
}

func TestStrangerSeesTheListButCannotType(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	ctx := ctxT(t)
	marker := filepath.Join(t.TempDir(), "ran")
	owner := d.dial(t, ahpclient.DialOptions{})
	initialize(t, owner, "owner")
	rpcErr, err := owner.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/guarded"})
	require.NoError(t, err)
	require.Nil(t, rpcErr)

	stranger := d.dialRaw(t, ahpclient.DialOptions{})
	res, rpcErr, err := stranger.Initialize(ctx, "stranger", nil, []string{ahpclient.RootChannel, "ahp-terminal:/guarded"})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	require.Len(t, res.Snapshots, 1, "the terminal channel is silently left out")
	root, err := res.Snapshots[0].Root()
	require.NoError(t, err)
	_, listed := root.Terminal("ahp-terminal:/guarded")
	require.True(t, listed, "root state is never filtered")

	_, err = stranger.Dispatch(ctx, "ahp-terminal:/guarded", ahpclient.InputAction("touch "+marker+"-stranger\n"))
	require.NoError(t, err)
	rej, err := stranger.WaitAction(ctx, func(e ahpclient.Envelope) bool { return e.Rejected() })
	require.NoError(t, err)
	require.Equal(t, "Sign in to use this host: ahp-terminal:/guarded needs terminal:input", *rej.RejectionReason)

	// The owner's own command does run, and the stranger's never did.
	_, _, err = owner.Subscribe(ctx, "ahp-terminal:/guarded")
	require.NoError(t, err)
	_, err = owner.Dispatch(ctx, "ahp-terminal:/guarded", ahpclient.InputAction("touch "+marker+"-owner; echo done-$((1+1))\n"))
	require.NoError(t, err)
	_, err = owner.WaitOutput(ctx, "ahp-terminal:/guarded", "done-2")
	require.NoError(t, err)
	require.FileExists(t, marker+"-owner")
	require.NoFileExists(t, marker+"-stranger")

	_, rpcErr, err = stranger.Subscribe(ctx, "ahp-terminal:/guarded")
	require.NoError(t, err)
	require.Equal(t, -32007, rpcErr.Code)
	require.Contains(t, string(rpcErr.Data), `"resources"`)
}

func TestGuestCanDoNothingWithTerminals(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	ctx := ctxT(t)
	admin := d.dial(t, ahpclient.DialOptions{})
	initialize(t, admin, "admin")
	rpcErr, err := admin.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/g"})
	require.NoError(t, err)
	require.Nil(t, rpcErr)

	guest := d.dial(t, ahpclient.DialOptions{Token: d.addUser(t, "gus", "guest")})
	initialize(t, guest, "gus")
	rpcErr, err = guest.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/mine"})
	require.NoError(t, err)
	require.Equal(t, -32009, rpcErr.Code)
	require.Equal(t, "gus may not terminal:create here", rpcErr.Message)
	require.JSONEq(t, `{}`, string(rpcErr.Data))
	_, rpcErr, err = guest.Subscribe(ctx, "ahp-terminal:/g")
	require.NoError(t, err)
	require.Equal(t, "gus may not terminal:output here", rpcErr.Message)
	rpcErr, err = guest.DisposeTerminal(ctx, "ahp-terminal:/g")
	require.NoError(t, err)
	require.Equal(t, "gus may not terminal:dispose here", rpcErr.Message)
	_, err = guest.Dispatch(ctx, "ahp-terminal:/g", ahpclient.InputAction("ls\n"))
	require.NoError(t, err)
	rej, err := guest.WaitAction(ctx, func(e ahpclient.Envelope) bool { return e.Rejected() })
	require.NoError(t, err)
	require.Equal(t, "gus may not terminal:input here", *rej.RejectionReason)
}

func TestWatcherRoleCanWatchButNotType(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	ctx := ctxT(t)
	// A role from the users file holding only terminal:output.
	path := filepath.Join(d.dataDir, "users.yaml")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte("roles:\n  watcher: [terminal:output]\n"+string(raw)), 0o600))
	watcherToken := d.addUser(t, "wanda", "watcher")

	admin := d.dial(t, ahpclient.DialOptions{})
	initialize(t, admin, "admin")
	rpcErr, err := admin.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/w"})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, _, err = admin.Subscribe(ctx, "ahp-terminal:/w")
	require.NoError(t, err)

	watcher := d.dial(t, ahpclient.DialOptions{Token: watcherToken})
	initialize(t, watcher, "wanda")
	_, rpcErr, err = watcher.Subscribe(ctx, "ahp-terminal:/w")
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, err = admin.Dispatch(ctx, "ahp-terminal:/w", ahpclient.InputAction("echo seen-$((6*7))\n"))
	require.NoError(t, err)
	_, err = watcher.WaitOutput(ctx, "ahp-terminal:/w", "seen-42")
	require.NoError(t, err)
	_, err = watcher.Dispatch(ctx, "ahp-terminal:/w", ahpclient.ResizedAction(100, 30))
	require.NoError(t, err)
	rej, err := watcher.WaitAction(ctx, func(e ahpclient.Envelope) bool { return e.Rejected() })
	require.NoError(t, err)
	require.Equal(t, "wanda may not terminal:resize here", *rej.RejectionReason)
}

func TestMemberDrivesTerminalsFully(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	ctx := ctxT(t)
	m := d.dial(t, ahpclient.DialOptions{Token: d.addUser(t, "mo", "member")})
	initialize(t, m, "mo")
	rpcErr, err := m.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/m"})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, _, err = m.Subscribe(ctx, "ahp-terminal:/m")
	require.NoError(t, err)
	for _, a := range []map[string]any{
		ahpclient.InputAction("echo member-$((2+3))\n"), ahpclient.ResizedAction(90, 20),
		ahpclient.TitleChangedAction("renamed"), ahpclient.ClearedAction(),
		ahpclient.ClaimedAction(ahpclient.Claim{Kind: "client", ClientID: "mo"}),
	} {
		_, err := m.Dispatch(ctx, "ahp-terminal:/m", a)
		require.NoError(t, err)
	}
	_, err = m.WaitOutput(ctx, "ahp-terminal:/m", "member-5")
	require.NoError(t, err)
	_, err = m.WaitAction(ctx, ahpclient.Match("ahp-terminal:/m", "terminal/cleared"))
	require.NoError(t, err)
	for _, e := range m.Actions() {
		require.False(t, e.Rejected(), "member was refused %s: %v", e.Type, e.RejectionReason)
	}
	rpcErr, err = m.DisposeTerminal(ctx, "ahp-terminal:/m")
	require.NoError(t, err)
	require.Nil(t, rpcErr)
}

func TestSignInSignOutRemovalAndWrongToken(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	ctx := ctxT(t)
	token := d.addUser(t, "sam", "member")
	c := d.dialRaw(t, ahpclient.DialOptions{})
	initialize(t, c, "sam-laptop")

	rpcErr, err := c.Authenticate(ctx, d.resource(), "sg_wrong", nil)
	require.NoError(t, err)
	require.Equal(t, -32007, rpcErr.Code)
	require.Equal(t, "That credential is not one this host knows", rpcErr.Message)
	rpcErr, err = c.Ping(ctx)
	require.NoError(t, err)
	require.Nil(t, rpcErr, "the connection stays usable")

	rpcErr, err = c.Authenticate(ctx, "https://elsewhere/", token, nil)
	require.NoError(t, err)
	require.Equal(t, -32602, rpcErr.Code)

	rpcErr, err = c.Authenticate(ctx, d.resource(), token, nil)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	rpcErr, err = c.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/s1"})
	require.NoError(t, err)
	require.Nil(t, rpcErr)

	rpcErr, err = c.Authenticate(ctx, d.resource(), "", nil) // sign out
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	rpcErr, err = c.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/s2"})
	require.NoError(t, err)
	require.Equal(t, -32007, rpcErr.Code, "sign-out takes the capability away at once")

	rpcErr, err = c.Authenticate(ctx, d.resource(), token, nil)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	store, err := userstore.Open(filepath.Join(d.dataDir, "users.yaml"))
	require.NoError(t, err)
	require.NoError(t, store.Remove("sam"))
	_, _ = c.DisposeTerminal(ctx, "ahp-terminal:/s1") // the connection is closed before or instead of an answer
	require.NoError(t, c.WaitClosed(ctx))
	code, reason := c.CloseStatus()
	require.Equal(t, 1008, int(code), "a removed person's connection ends")
	require.Contains(t, reason, "revoked")

	other := d.dialRaw(t, ahpclient.DialOptions{})
	initialize(t, other, "x")
	mo := d.addUser(t, "mo", "member")
	rpcErr, err = other.Authenticate(ctx, d.resource(), mo, nil)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	// sam-laptop was first signed in under by sam: mo may not take it.
	again := d.dialRaw(t, ahpclient.DialOptions{Token: mo})
	_, rpcErr, err = again.Initialize(ctx, "sam-laptop", nil, nil)
	require.NoError(t, err)
	require.Equal(t, -32003, rpcErr.Code)
}

func TestUnknownTokenAtTheDoorIsRefusedBeforeTheSocket(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	_, err := ahpclient.Dial(ctx, "ws://"+d.addr+"/", ahpclient.DialOptions{Token: "sg_nobody"})
	var de *ahpclient.DialError
	require.True(t, errors.As(err, &de), "%v", err)
	require.Equal(t, 401, de.StatusCode)
}

func TestDefaultShellNeedsSignInMustBeAbsoluteAndIsPerConnection(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	ctx := ctxT(t)
	root := func(shell any) map[string]any {
		return map[string]any{"type": "root/configChanged", "config": map[string]any{"defaultShell": shell}}
	}
	stranger := d.dialRaw(t, ahpclient.DialOptions{})
	initialize(t, stranger, "s", ahpclient.RootChannel)
	_, err := stranger.Dispatch(ctx, ahpclient.RootChannel, root("/bin/bash"))
	require.NoError(t, err)
	rej, err := stranger.WaitAction(ctx, func(e ahpclient.Envelope) bool { return e.Rejected() })
	require.NoError(t, err)
	require.Equal(t, "Sign in to use this host: ahp-root://", *rej.RejectionReason)

	a := d.dial(t, ahpclient.DialOptions{})
	initialize(t, a, "a", ahpclient.RootChannel)
	b := d.dial(t, ahpclient.DialOptions{})
	initialize(t, b, "b", ahpclient.RootChannel)
	_, err = a.Dispatch(ctx, ahpclient.RootChannel, root("bash"))
	require.NoError(t, err)
	rej, err = a.WaitAction(ctx, func(e ahpclient.Envelope) bool { return e.Rejected() })
	require.NoError(t, err)
	require.Equal(t, "defaultShell must be an absolute path", *rej.RejectionReason)

	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	_, err = a.Dispatch(ctx, ahpclient.RootChannel, root(bash))
	require.NoError(t, err)
	echo, err := a.WaitAction(ctx, func(e ahpclient.Envelope) bool { return e.Type == "root/configChanged" && !e.Rejected() })
	require.NoError(t, err)
	require.Contains(t, string(echo.Action), bash)
	seen, err := b.WaitAction(ctx, ahpclient.Match(ahpclient.RootChannel, "root/configChanged"))
	require.NoError(t, err)
	require.NotContains(t, string(seen.Action), "defaultShell", "another connection's shell is never shown")

	for _, c := range []struct {
		client *ahpclient.Client
		want   string
	}{{a, "bash"}, {b, "sh"}} {
		ch := fmt.Sprintf("ahp-terminal:/shell-%s", c.want)
		rpcErr, err := c.client.CreateTerminal(ctx, ahpclient.CreateParams{Channel: ch})
		require.NoError(t, err)
		require.Nil(t, rpcErr)
		snap, _, err := c.client.Subscribe(ctx, ch)
		require.NoError(t, err)
		state, err := snap.Terminal()
		require.NoError(t, err)
		require.Equal(t, c.want, state.Title, "the title is the shell this connection's terminal opened")
	}
}

func TestFirstStartCreatesAnAdminAndNoTokenIsEverLogged(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	d := startDaemonIn(t, dataDir)
	creds, err := userstore.ReadClientCredentials(filepath.Join(dataDir, "credentials.json"))
	require.NoError(t, err)
	info, err := os.Stat(filepath.Join(dataDir, "credentials.json"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	users, err := os.ReadFile(filepath.Join(dataDir, "users.yaml"))
	require.NoError(t, err)
	require.NotContains(t, string(users), creds.Token, "the users file holds only hashes")

	c := d.dial(t, ahpclient.DialOptions{Token: creds.Token})
	initialize(t, c, "first")
	rpcErr, err := c.CreateTerminal(ctxT(t), ahpclient.CreateParams{Channel: "ahp-terminal:/first"})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	// Exercise refusals too, so the logs have something to say.
	_, _ = ahpclient.Dial(ctxT(t), "ws://"+d.addr+"/?token=sg_bad", ahpclient.DialOptions{QueryToken: "sg_bad"})
	d.stop()
	stdout, logs := d.output()
	require.Contains(t, stdout, creds.Token, "the token is printed once, on stdout")
	require.NotContains(t, logs, creds.Token)
	require.NotContains(t, logs, "sg_bad")
	require.NotContains(t, logs, userstore.HashToken(creds.Token))
	require.NotContains(t, logs, strings.TrimPrefix(userstore.HashToken(creds.Token), "sha256:"))
}

func TestNonLoopbackListenNeedsTLSOrInsecure(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(binary, "serve", "--listen", "0.0.0.0:0", "--data-dir", t.TempDir()).CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "--tls-cert and --tls-key, or --insecure")
}

func TestTokenAddPrintsTheTokenAloneOnStdout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := func(args ...string) (string, string) {
		cmd := exec.Command(binary, append(args, "--data-dir", dir)...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), stderr.String())
		return stdout.String(), stderr.String()
	}
	store, err := userstore.Open(filepath.Join(dir, "users.yaml"))
	require.NoError(t, err)
	_, _, err = store.Bootstrap("admin")
	require.NoError(t, err)
	out, _ := run("token", "add", "robot", "--role", "chat_agent")
	require.Regexp(t, `^sg_[A-Za-z0-9_-]+\n$`, out)
	p, ok := store.Lookup(strings.TrimSpace(out))
	require.True(t, ok)
	require.Equal(t, "robot", p.ID)
	list, _ := run("token", "list")
	require.Contains(t, list, "robot")
	require.NotContains(t, list, "sg_")
	rotated, _ := run("token", "rotate", "robot")
	_, ok = store.Lookup(strings.TrimSpace(out))
	require.False(t, ok, "the old token stops working")
	_, ok = store.Lookup(strings.TrimSpace(rotated))
	require.True(t, ok)
	run("token", "remove", "robot")
	_, ok = store.Lookup(strings.TrimSpace(rotated))
	require.False(t, ok)
}

// Reading a terminal is decided at subscribe, and must not outlive the
// grant: a person removed from the users file, or who signed out, stops
// receiving its output at once, while the socket stays open (D7 in docs/protocol.md).
func TestRemovedOrSignedOutPersonStopsReceivingOutput(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	ctx := ctxT(t)
	owner := d.dial(t, ahpclient.DialOptions{Token: d.addUser(t, "mo", "member")})
	initialize(t, owner, "mo")
	const uri = "ahp-terminal:/shared"
	rpcErr, err := owner.CreateTerminal(ctx, ahpclient.CreateParams{Channel: uri, Meta: spawn("exec cat", false)})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, _, err = owner.Subscribe(ctx, uri)
	require.NoError(t, err)

	removed := d.dial(t, ahpclient.DialOptions{Token: d.addUser(t, "sam", "member")})
	initialize(t, removed, "sam")
	signedOut := d.dialRaw(t, ahpclient.DialOptions{})
	initialize(t, signedOut, "ada-laptop")
	rpcErr, err = signedOut.Authenticate(ctx, d.resource(), d.addUser(t, "ada", "member"), nil)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	for _, c := range []*ahpclient.Client{removed, signedOut} {
		_, rpcErr, err := c.Subscribe(ctx, uri)
		require.NoError(t, err)
		require.Nil(t, rpcErr)
	}

	say := func(line string) {
		t.Helper()
		_, err := owner.Dispatch(ctx, uri, ahpclient.InputAction(line+"\n"))
		require.NoError(t, err)
		_, err = owner.WaitOutput(ctx, uri, line)
		require.NoError(t, err)
	}
	say("before-anything")
	for _, c := range []*ahpclient.Client{removed, signedOut} {
		_, err := c.WaitOutput(ctx, uri, "before-anything")
		require.NoError(t, err)
	}

	store, err := userstore.Open(filepath.Join(d.dataDir, "users.yaml"))
	require.NoError(t, err)
	require.NoError(t, store.Remove("sam"))
	rpcErr, err = signedOut.Authenticate(ctx, d.resource(), "", nil)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	say("after-the-grant-went")

	// A removed person's connection is closed; it got nothing after.
	require.NoError(t, removed.WaitClosed(ctx))
	code, _ := removed.CloseStatus()
	require.Equal(t, 1008, int(code))
	require.NotContains(t, removed.Output(uri), "after-the-grant-went")

	// The signed-out one stays open and is asked to sign in.
	rpcErr, err = signedOut.Ping(ctx) // answered after whatever was queued before it
	require.NoError(t, err, "the socket stays open")
	require.Nil(t, rpcErr)
	require.NotContains(t, signedOut.Output(uri), "after-the-grant-went", "still receives the terminal's output")
	rpcErr, err = signedOut.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/signed-out"})
	require.NoError(t, err)
	require.Equal(t, -32007, rpcErr.Code, "the next command says why")
	require.Contains(t, string(rpcErr.Data), `"required":true`, "sign-in is required now")
}

// TestRotatedOrRemovedTokenEndsItsConnectionsAndRESTUse: the old token must
// stop working everywhere at once, also on a connection that sends nothing.
func TestRotatedOrRemovedTokenEndsItsConnectionsAndRESTUse(t *testing.T) {
	t.Parallel()
	for _, verb := range []string{"rotate", "remove"} {
		t.Run(verb, func(t *testing.T) {
			d := startDaemon(t)
			ctx := ctxT(t)
			old := d.addUser(t, "bot", "member")
			idle := d.dialRaw(t, ahpclient.DialOptions{Token: old})
			initialize(t, idle, "bot-idle")
			busy := d.dialRaw(t, ahpclient.DialOptions{Token: old})
			initialize(t, busy, "bot-busy")
			require.Equal(t, http.StatusOK, restStatus(t, d, old))

			store, err := userstore.Open(filepath.Join(d.dataDir, "users.yaml"))
			require.NoError(t, err)
			fresh := ""
			if verb == "rotate" {
				fresh, err = store.Rotate("bot")
			} else {
				err = store.Remove("bot")
			}
			require.NoError(t, err)

			require.Equal(t, http.StatusUnauthorized, restStatus(t, d, old))
			_, _ = busy.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/after"})
			for _, c := range []*ahpclient.Client{busy, idle} {
				require.NoError(t, c.WaitClosed(ctx))
				code, reason := c.CloseStatus()
				require.Equal(t, 1008, int(code))
				require.Contains(t, reason, "revoked")
			}
			admin := d.dial(t, ahpclient.DialOptions{})
			initialize(t, admin, "admin", ahpclient.RootChannel)
			res, _, err := admin.Subscribe(ctx, ahpclient.RootChannel)
			require.NoError(t, err)
			root, err := res.Root()
			require.NoError(t, err)
			_, made := root.Terminal("ahp-terminal:/after")
			require.False(t, made, "the old token created nothing")
			if fresh != "" {
				require.Equal(t, http.StatusOK, restStatus(t, d, fresh))
				c := d.dialRaw(t, ahpclient.DialOptions{Token: fresh})
				initialize(t, c, "bot-idle")
			}
		})
	}
}

// restStatus is the status of an authenticated REST read with token.
func restStatus(t *testing.T, d *daemon, token string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodGet, "http://"+d.addr+"/api/agent-terminal/sessions", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
	return resp.StatusCode
}

// A page elsewhere that makes its own name resolve to 127.0.0.1 (DNS
// rebinding) reaches the daemon as same-origin with Host: <its name>; a
// daemon on loopback answers only to loopback names.
func TestLoopbackDaemonRefusesAForeignHostName(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	for _, path := range []string{"/", "/healthz", "/api/v1/agents"} {
		req, err := http.NewRequest(http.MethodGet, "http://"+d.addr+path, nil)
		require.NoError(t, err)
		req.Host = "attacker.example"
		req.Header.Set("Origin", "http://attacker.example")
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode, "%s: %s", path, body)
	}
	resp, err := http.Get("http://" + d.addr + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "its own address is answered")
}

// TestClientIDIsBoundToItsFirstPrincipal: the root list shows people's client
// ids, so a stranger or another person naming one must neither close the
// owner's connection nor restart its clientSeq; only the owner takes it over.
func TestClientIDIsBoundToItsFirstPrincipal(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	ctx := ctxT(t)
	sam := d.addUser(t, "sam", "member")
	mo := d.addUser(t, "mo", "member")
	owner := d.dialRaw(t, ahpclient.DialOptions{Token: sam})
	initialize(t, owner, "sam-laptop")
	const term = "ahp-terminal:/bound"
	rpcErr, err := owner.CreateTerminal(ctx, ahpclient.CreateParams{Channel: term})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, _, err = owner.Subscribe(ctx, term)
	require.NoError(t, err)
	require.NoError(t, owner.DispatchSeq(ctx, term, 1, ahpclient.InputAction("echo first-$((1+1))\n")))
	_, err = owner.WaitOutput(ctx, term, "first-2")
	require.NoError(t, err)

	attempts := []struct {
		name   string
		token  string
		resume bool
		want   string
	}{
		{"stranger initializes", "", false, "sign in as its owner"},
		{"stranger reconnects", "", true, "sign in as its owner"},
		{"another person initializes", mo, false, "belongs to another principal"},
		{"another person reconnects", mo, true, "belongs to another principal"},
	}
	for _, a := range attempts {
		t.Run(a.name, func(t *testing.T) {
			c := d.dialRaw(t, ahpclient.DialOptions{Token: a.token})
			var rpcErr *ahpclient.RPCError
			var err error
			if a.resume {
				_, rpcErr, err = c.Reconnect(ctx, "sam-laptop", 0, []string{term})
			} else {
				_, rpcErr, err = c.Initialize(ctx, "sam-laptop", nil, nil)
			}
			require.NoError(t, err)
			require.NotNil(t, rpcErr)
			require.Equal(t, -32003, rpcErr.Code)
			require.Contains(t, rpcErr.Message, a.want)
			rpcErr, err = c.Ping(ctx)
			require.NoError(t, err)
			require.Nil(t, rpcErr, "the refused connection stays usable")
		})
	}

	// The owner's connection is still open, and its clientSeq was not
	// restarted: a retry of 1 is still a repeat, 2 is new.
	rpcErr, err = owner.Ping(ctx)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	require.NoError(t, owner.DispatchSeq(ctx, term, 1, ahpclient.InputAction("echo first-$((1+1))\n")))
	require.NoError(t, owner.DispatchSeq(ctx, term, 2, ahpclient.InputAction("echo second-$((3+1))\n")))
	out, err := owner.WaitOutput(ctx, term, "second-4")
	require.NoError(t, err)
	require.NotContains(t, out, "first-2", "the retry was not applied again")

	// The same principal on a new connection takes the id over.
	back := d.dialRaw(t, ahpclient.DialOptions{Token: sam})
	_, rpcErr, err = back.Reconnect(ctx, "sam-laptop", owner.LastServerSeq(), []string{term})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	require.NoError(t, owner.WaitClosed(ctx))
	code, _ := owner.CloseStatus()
	require.Equal(t, 1008, int(code))
}

// grantsOf reads the shellgate/grants _meta of an initialize or
// authenticate result.
func grantsOf(t *testing.T, meta json.RawMessage) (principal string, ops []string) {
	t.Helper()
	var m struct {
		Grants struct {
			Principal  string   `json:"principal"`
			Operations []string `json:"operations"`
		} `json:"shellgate/grants"`
	}
	require.NoError(t, json.Unmarshal(meta, &m), string(meta))
	require.NotNil(t, m.Grants.Operations, "operations is always a list: %s", meta)
	return m.Grants.Principal, m.Grants.Operations
}

func TestBuiltInViewerWatchesEverythingAndChangesNothing(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	ctx := ctxT(t)
	viewerToken := d.addUser(t, "vic", "viewer")

	admin := d.dial(t, ahpclient.DialOptions{})
	initialize(t, admin, "admin")
	rpcErr, err := admin.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/watched"})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, _, err = admin.Subscribe(ctx, "ahp-terminal:/watched")
	require.NoError(t, err)

	viewer := d.dial(t, ahpclient.DialOptions{Token: viewerToken})
	res, rpcErr, err := viewer.Initialize(ctx, "vic", nil, []string{ahpclient.RootChannel, "ahp-terminal:/watched"})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	who, ops := grantsOf(t, res.Meta)
	require.Equal(t, "vic", who)
	require.Equal(t, []string{"terminal:output", "agent:list", "agent:get", "approval:list"}, ops,
		"the client is told what it may do, so it shows no button it may not use")

	_, err = admin.Dispatch(ctx, "ahp-terminal:/watched", ahpclient.InputAction("echo seen-$((6*7))\n"))
	require.NoError(t, err)
	_, err = viewer.WaitOutput(ctx, "ahp-terminal:/watched", "seen-42")
	require.NoError(t, err, "a viewer reads every terminal")

	_, err = viewer.Dispatch(ctx, "ahp-terminal:/watched", ahpclient.InputAction("touch /tmp/never\n"))
	require.NoError(t, err)
	rej, err := viewer.WaitAction(ctx, func(e ahpclient.Envelope) bool { return e.Rejected() })
	require.NoError(t, err)
	require.Equal(t, "vic may not terminal:input here", *rej.RejectionReason)
	// Nor as fed bytes.
	_, rpcErr, err = viewer.Call(ctx, "x-shellgate/input", map[string]any{"channel": "ahp-terminal:/watched", "bytes": "dG91Y2ggL3RtcC9uZXZlcgo="})
	require.NoError(t, err)
	require.NotNil(t, rpcErr)
	require.Equal(t, -32009, rpcErr.Code)
	require.Equal(t, "vic may not terminal:input here", rpcErr.Message)
	rpcErr, err = viewer.CreateTerminal(ctx, ahpclient.CreateParams{Channel: "ahp-terminal:/mine"})
	require.NoError(t, err)
	require.NotNil(t, rpcErr)
	require.Equal(t, -32009, rpcErr.Code)

	// Agent sessions and what they wait on are in view; deciding is not.
	require.Equal(t, http.StatusOK, restStatus(t, d, viewerToken))
	status, body := d.agentAPI(t, viewerToken, "POST", "/api/agent-terminal/sessions/none/approve", map[string]any{"approved": true})
	require.Equal(t, http.StatusForbidden, status, body)

	// Signing out over the protocol says the grants are gone.
	raw, rpcErr, err := viewer.Call(ctx, "authenticate", map[string]any{"resource": d.resource(), "token": ""})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	var out struct {
		Meta json.RawMessage `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(raw, &out))
	who, ops = grantsOf(t, out.Meta)
	require.Empty(t, who)
	require.Empty(t, ops)
}
