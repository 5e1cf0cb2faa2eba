package tests

import (
	"encoding/json"

	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/tests/ahpclient"
)

// The conformance test drives the real daemon as an unchanged official
// client of each accepted version would, written from the protocol's own
// text (state types per version, the dispatch and echo rules, reconnect):
// one version per connection, the version's keys and no others, a fresh
// clientSeq counter starting at 1 for every new client object, including
// the one made to reconnect.

// versionKeys are the keys a version's terminal state and root entries
// have, for a running and an exited pty terminal with a known size and
// directory. Before 0.9.0 there is no lifecycle (an official client of
// those versions would take one for a session); isPty dates from 0.7.0.
type versionKeys struct {
	stateRunning, stateExited []string
	entryRunning, entryExited []string
}

func keysFor(version string) versionKeys {
	state := []string{"claim", "cols", "content", "cwd", "rows", "supportsCommandDetection", "title"}
	entry := []string{"claim", "resource", "title"}
	var k versionKeys
	switch version {
	case "0.5.1", "0.5.2", "0.6.0":
		k = versionKeys{state, append(state, "exitCode"), entry, append(entry, "exitCode")}
	case "0.7.0", "0.8.0":
		k = versionKeys{append(state, "isPty"), append(state, "isPty", "exitCode"), entry, append(entry, "exitCode")}
	default: // 0.9.0 and 1.0.0
		withLife := append(state, "isPty", "lifecycle")
		k = versionKeys{withLife, withLife, append(entry, "lifecycle"), append(entry, "lifecycle")}
	}
	for _, l := range []*[]string{&k.stateRunning, &k.stateExited, &k.entryRunning, &k.entryExited} {
		*l = append([]string(nil), *l...)
		sort.Strings(*l)
	}
	return k
}

func sortedKeys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	fields := ahpclient.Fields(raw)
	require.NotNil(t, fields, "not an object: %s", raw)
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// entryOf finds a terminal's entry in a root state or root/terminalsChanged.
func entryOf(t *testing.T, holder json.RawMessage, uri string) (json.RawMessage, bool) {
	t.Helper()
	var list []json.RawMessage
	require.NoError(t, json.Unmarshal(ahpclient.Fields(holder)["terminals"], &list))
	for _, e := range list {
		var r string
		_ = json.Unmarshal(ahpclient.Fields(e)["resource"], &r)
		if r == uri {
			return e, true
		}
	}
	return nil, false
}

func stringField(raw json.RawMessage, key string) string {
	var s string
	_ = json.Unmarshal(ahpclient.Fields(raw)[key], &s)
	return s
}

func TestOfficialClientOfEachVersionWorksUnchanged(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	for _, version := range []string{"0.5.1", "0.6.0", "0.7.0", "0.8.0", "0.9.0", "1.0.0"} {
		t.Run(version, func(t *testing.T) { conformance(t, d, version) })
	}
}

func conformance(t *testing.T, d *daemon, version string) {
	ctx := ctxT(t)
	keys := keysFor(version)
	id := "official-" + version
	uri := "ahp-terminal:/conf-" + strings.ReplaceAll(version, ".", "-")

	// initialize, subscribed to the root.
	c := d.dial(t, ahpclient.DialOptions{})
	res, rpcErr, err := c.Initialize(ctx, id, []string{version}, []string{ahpclient.RootChannel})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	require.Equal(t, version, res.ProtocolVersion)
	rootSnap, ok := res.Snapshot(ahpclient.RootChannel)
	require.True(t, ok)
	require.Equal(t, []string{"agents", "terminals"}, sortedKeys(t, rootSnap.State))

	// A new pty terminal: the root list gains it, in the version's shape.
	rpcErr, err = c.CreateTerminal(ctx, ahpclient.CreateParams{Channel: uri, Name: "conf", Cols: 80, Rows: 24, Meta: spawn("", true)})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	listed, err := c.WaitAction(ctx, func(e ahpclient.Envelope) bool {
		_, found := entryOf(t, e.Action, uri)
		return e.Type == "root/terminalsChanged" && found
	})
	require.NoError(t, err)
	entry, _ := entryOf(t, listed.Action, uri)
	require.Equal(t, keys.entryRunning, sortedKeys(t, entry), "root entry of a running terminal at %s", version)

	// subscribe: the state's keys are exactly the version's.
	snap, rpcErr, err := c.Subscribe(ctx, uri)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	require.Equal(t, keys.stateRunning, sortedKeys(t, snap.State), "terminal state at %s: %s", version, snap.State)
	if contains(keys.stateRunning, "isPty") {
		require.JSONEq(t, "true", string(ahpclient.Fields(snap.State)["isPty"]))
	}
	if contains(keys.stateRunning, "lifecycle") {
		require.JSONEq(t, `{"status":"running"}`, string(ahpclient.Fields(snap.State)["lifecycle"]))
	}

	// Type: the keys reach the shell, the echo carries our origin.
	seq, err := c.Dispatch(ctx, uri, ahpclient.InputAction("echo typed-$((6*7))\r"))
	require.NoError(t, err)
	require.Equal(t, int64(1), seq, "an official client starts clientSeq at 1")
	_, err = c.WaitAction(ctx, ahpclient.MatchOrigin(uri, seq))
	require.NoError(t, err)
	_, err = c.WaitOutput(ctx, uri, "typed-42")
	require.NoError(t, err)

	// Resize: echoed, and the pty has the new size.
	seq, err = c.Dispatch(ctx, uri, map[string]any{"type": "terminal/resized", "cols": 100, "rows": 30})
	require.NoError(t, err)
	resized, err := c.WaitAction(ctx, ahpclient.MatchOrigin(uri, seq))
	require.NoError(t, err)
	require.False(t, resized.Rejected())
	_, err = c.Dispatch(ctx, uri, ahpclient.InputAction("stty size\r"))
	require.NoError(t, err)
	_, err = c.WaitOutput(ctx, uri, "30 100")
	require.NoError(t, err)

	// Rename: echoed to us, and the root list shows the title.
	seq, err = c.Dispatch(ctx, uri, map[string]any{"type": "terminal/titleChanged", "title": "renamed"})
	require.NoError(t, err)
	renamed, err := c.WaitAction(ctx, ahpclient.MatchOrigin(uri, seq))
	require.NoError(t, err)
	require.False(t, renamed.Rejected())
	relisted, err := c.WaitAction(ctx, func(e ahpclient.Envelope) bool {
		entry, found := entryOf(t, e.Action, uri)
		return e.Type == "root/terminalsChanged" && found && stringField(entry, "title") == "renamed"
	})
	require.NoError(t, err)
	entry, _ = entryOf(t, relisted.Action, uri)
	require.Equal(t, keys.entryRunning, sortedKeys(t, entry))

	// Clear: echoed, and a fresh snapshot no longer holds the old output.
	seq, err = c.Dispatch(ctx, uri, map[string]any{"type": "terminal/cleared"})
	require.NoError(t, err)
	_, err = c.WaitAction(ctx, ahpclient.MatchOrigin(uri, seq))
	require.NoError(t, err)
	cleared, rpcErr, err := c.Subscribe(ctx, uri)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	require.NotContains(t, string(cleared.State), "typed-42")
	require.Equal(t, "renamed", stringField(cleared.State, "title"))
	require.Equal(t, keys.stateRunning, sortedKeys(t, cleared.State))

	// Another client of the version opens with the terminal among its
	// initialSubscriptions: its snapshot is in the version's shape too.
	watcher := d.dial(t, ahpclient.DialOptions{})
	wres, rpcErr, err := watcher.Initialize(ctx, id+"-watcher", []string{version}, []string{ahpclient.RootChannel, uri})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	wsnap, ok := wres.Snapshot(uri)
	require.True(t, ok)
	require.Equal(t, keys.stateRunning, sortedKeys(t, wsnap.State), "initialSubscriptions snapshot at %s", version)
	require.NoError(t, watcher.Close())

	// The connection drops; a new client object reconnects with a fresh
	// counter, from 1 again, and its keys reach the shell.
	lastSeen := c.LastServerSeq()
	require.NoError(t, c.Close())
	back := d.dial(t, ahpclient.DialOptions{})
	rec, rpcErr, err := back.Reconnect(ctx, id, lastSeen, []string{ahpclient.RootChannel, uri})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	require.Equal(t, "replay", rec.Type)
	require.Empty(t, rec.Missing)
	seq, err = back.Dispatch(ctx, uri, ahpclient.InputAction("echo back-$((7*6))\r"))
	require.NoError(t, err)
	require.Equal(t, int64(1), seq)
	echo, err := back.WaitAction(ctx, ahpclient.MatchOrigin(uri, seq))
	require.NoError(t, err)
	require.False(t, echo.Rejected())
	_, err = back.WaitOutput(ctx, uri, "back-42")
	require.NoError(t, err)

	// Once more, past what the host has sent (the snapshot variant): the
	// snapshots are in the version's shape, and keys still get through.
	lastSeen = back.LastServerSeq()
	require.NoError(t, back.Close())
	again := d.dial(t, ahpclient.DialOptions{})
	rec, rpcErr, err = again.Reconnect(ctx, id, lastSeen+1_000_000, []string{ahpclient.RootChannel, uri})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	require.Equal(t, "snapshot", rec.Type)
	for _, s := range rec.Snapshots {
		if s.Resource == uri {
			require.Equal(t, keys.stateRunning, sortedKeys(t, s.State), "snapshot-variant reconnect at %s", version)
		} else {
			e, found := entryOf(t, s.State, uri)
			require.True(t, found)
			require.Equal(t, keys.entryRunning, sortedKeys(t, e))
		}
	}
	require.Len(t, rec.Snapshots, 2)

	// Exit: terminal/exited is the same in every version; the root entry
	// and the state say so in the version's shape.
	seq, err = again.Dispatch(ctx, uri, ahpclient.InputAction("exit 3\r"))
	require.NoError(t, err)
	require.Equal(t, int64(1), seq)
	exited, err := again.WaitAction(ctx, ahpclient.Match(uri, "terminal/exited"))
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"terminal/exited","exitCode":3}`, string(exited.Action))
	gone, err := again.WaitAction(ctx, func(e ahpclient.Envelope) bool {
		entry, found := entryOf(t, e.Action, uri)
		if !found || e.Type != "root/terminalsChanged" {
			return false
		}
		f := ahpclient.Fields(entry)
		return f["exitCode"] != nil || (f["lifecycle"] != nil && strings.Contains(string(f["lifecycle"]), "exited"))
	})
	require.NoError(t, err)
	entry, _ = entryOf(t, gone.Action, uri)
	require.Equal(t, keys.entryExited, sortedKeys(t, entry), "root entry of an exited terminal at %s", version)
	final, rpcErr, err := again.Subscribe(ctx, uri)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	require.Equal(t, keys.stateExited, sortedKeys(t, final.State), "exited terminal state at %s", version)
	if contains(keys.stateExited, "lifecycle") {
		require.JSONEq(t, `{"status":"exited","exitCode":3}`, string(ahpclient.Fields(final.State)["lifecycle"]))
	} else {
		require.JSONEq(t, "3", string(ahpclient.Fields(final.State)["exitCode"]))
	}
	rpcErr, err = again.DisposeTerminal(ctx, uri)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
}

// A client offering 1.1.0 beside 1.0.0 gets 1.0.0; offering only 1.1.0 it
// gets -32005 with the accepted ranges, and the socket closes.
func TestOnlyImplementedVersionsAreAccepted(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	ctx := ctxT(t)
	c := d.dial(t, ahpclient.DialOptions{})
	res, rpcErr, err := c.Initialize(ctx, "newest", []string{"1.1.0", "1.0.0"}, nil)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	require.Equal(t, "1.0.0", res.ProtocolVersion)

	only := d.dial(t, ahpclient.DialOptions{})
	_, rpcErr, err = only.Initialize(ctx, "only-newest", []string{"1.1.0"}, nil)
	require.NoError(t, err)
	require.NotNil(t, rpcErr)
	require.Equal(t, -32005, rpcErr.Code)
	var data struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	require.NoError(t, json.Unmarshal(rpcErr.Data, &data))
	require.Equal(t, []string{">=1.0.0 <1.1.0", ">=0.9.0 <0.10.0", ">=0.8.0 <0.9.0", ">=0.7.0 <0.8.0", ">=0.6.0 <0.7.0", ">=0.5.1 <0.6.0"}, data.SupportedVersions)
	require.NoError(t, only.WaitClosed(ctx))
}

// printf '\033]0;build-box\007' in a pty terminal: one terminal/titleChanged
// from the host with the title, and the root list shows it.
func TestTitleSetByTheProcessReachesClientsAndTheRootList(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	ctx := ctxT(t)
	c := d.dial(t, ahpclient.DialOptions{})
	_, rpcErr, err := c.Initialize(ctx, "titles", []string{"1.0.0"}, []string{ahpclient.RootChannel})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	const uri = "ahp-terminal:/titled"
	rpcErr, err = c.CreateTerminal(ctx, ahpclient.CreateParams{Channel: uri, Meta: spawn("", true)})
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	_, rpcErr, err = c.Subscribe(ctx, uri)
	require.NoError(t, err)
	require.Nil(t, rpcErr)

	_, err = c.Dispatch(ctx, uri, ahpclient.InputAction(`printf '\033]0;build-box\007'; echo; echo title-done`+"\r"))
	require.NoError(t, err)
	title, err := c.WaitAction(ctx, func(e ahpclient.Envelope) bool { return e.Channel == uri && e.Type == "terminal/titleChanged" })
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"terminal/titleChanged","title":"build-box"}`, string(title.Action))
	require.Nil(t, title.Origin, "the host says it, no client did")
	_, err = c.WaitAction(ctx, func(e ahpclient.Envelope) bool {
		entry, found := entryOf(t, e.Action, uri)
		return e.Type == "root/terminalsChanged" && found && stringField(entry, "title") == "build-box"
	})
	require.NoError(t, err)
	out, err := c.WaitOutput(ctx, uri, "title-done\r\n")
	require.NoError(t, err)
	require.Contains(t, c.Output(uri), "\x1b]0;build-box\x07", "the sequence stays in the output: %q", out)

	titles := 0
	for _, e := range c.Actions() {
		if e.Channel == uri && e.Type == "terminal/titleChanged" {
			titles++
		}
	}
	require.Equal(t, 1, titles, "one title for one printf")
	rpcErr, err = c.DisposeTerminal(ctx, uri)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
