package ahp

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/terminal"
)

// keysOf lists a JSON object's keys, sorted.
func keysOf(t *testing.T, v any) []string {
	t.Helper()
	enc, err := json.Marshal(v)
	require.NoError(t, err)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(enc, &m))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Every served line gets the keys its own version defines: no lifecycle
// before 0.9.0 (the official Go client reads one as a session), no isPty
// before 0.7.0, no chat in a session claim before 0.9.0, and from 0.9.0 on
// the lifecycle object without the flat exitCode.
func TestEachVersionGetsItsOwnStateKeys(t *testing.T) {
	code := 3
	running := terminal.Lifecycle{Status: terminal.StatusRunning}
	exited := terminal.Lifecycle{Status: terminal.StatusExited, ExitCode: &code}
	common := []string{"claim", "content", "cols", "cwd", "rows", "supportsCommandDetection", "title"}
	with := func(extra ...string) []string {
		out := append(append([]string{}, common...), extra...)
		sort.Strings(out)
		return out
	}
	for _, tc := range []struct {
		version                 string
		running, exited         []string
		entryRunning, entryExit []string
		sessionClaim            []string
	}{
		{"0.5.1", with(), with("exitCode"), []string{"claim", "resource", "title"}, []string{"claim", "exitCode", "resource", "title"}, []string{"kind", "session"}},
		{"0.5.2", with(), with("exitCode"), []string{"claim", "resource", "title"}, []string{"claim", "exitCode", "resource", "title"}, []string{"kind", "session"}},
		{"0.6.0", with(), with("exitCode"), []string{"claim", "resource", "title"}, []string{"claim", "exitCode", "resource", "title"}, []string{"kind", "session"}},
		{"0.7.0", with("isPty"), with("exitCode", "isPty"), []string{"claim", "resource", "title"}, []string{"claim", "exitCode", "resource", "title"}, []string{"kind", "session"}},
		{"0.8.0", with("isPty"), with("exitCode", "isPty"), []string{"claim", "resource", "title"}, []string{"claim", "exitCode", "resource", "title"}, []string{"kind", "session"}},
		{"0.9.0", with("isPty", "lifecycle"), with("isPty", "lifecycle"), []string{"claim", "lifecycle", "resource", "title"}, []string{"claim", "lifecycle", "resource", "title"}, []string{"chat", "kind", "session"}},
		{"1.0.0", with("isPty", "lifecycle"), with("isPty", "lifecycle"), []string{"claim", "lifecycle", "resource", "title"}, []string{"claim", "lifecycle", "resource", "title"}, []string{"chat", "kind", "session"}},
	} {
		t.Run(tc.version, func(t *testing.T) {
			sh := shapeOf(tc.version)
			snap := terminal.Snapshot{Title: "sh", CWD: "file:///tmp", Cols: 80, Rows: 24, Claim: terminal.ClientHolds("c1"), Lifecycle: running}
			require.Equal(t, tc.running, keysOf(t, sh.state(&snap)))
			snap.Lifecycle = exited
			require.Equal(t, tc.exited, keysOf(t, sh.state(&snap)))

			list := sh.list([]terminals.Info{{URI: "ahp-terminal:/a", Title: "sh", Claim: terminal.ClientHolds("c1"), Lifecycle: running}, {URI: "ahp-terminal:/b", Title: "sh", Claim: terminal.ClientHolds("c1"), Lifecycle: exited}})
			require.Equal(t, tc.entryRunning, keysOf(t, list[0]))
			require.Equal(t, tc.entryExit, keysOf(t, list[1]))

			claim := terminal.Claim{Kind: terminal.ClaimSession, Session: "ahp-session:/s", Chat: "ahp-chat:/c"}
			require.Equal(t, tc.sessionClaim, keysOf(t, sh.claim(claim)))

			// terminal/exited's payload is the same in every version.
			env, err := sh.appendEnvelope(nil, hub.Event{Channel: "ahp-terminal:/a", Seq: 9}, terminal.Exited{ExitCode: &code})
			require.NoError(t, err)
			var msg struct {
				Params struct {
					Action map[string]any `json:"action"`
				} `json:"params"`
			}
			require.NoError(t, json.Unmarshal(env, &msg))
			require.Equal(t, map[string]any{"type": "terminal/exited", "exitCode": float64(3)}, msg.Params.Action)
		})
	}
}

// Before 0.9.0 an exit without a code cannot be told from running in the
// state; that is the version's own limit, and the state says nothing false.
func TestLegacyExitWithoutACodeCarriesNoExitCode(t *testing.T) {
	snap := terminal.Snapshot{Title: "sh", Claim: terminal.ClientHolds("c1"), Lifecycle: terminal.Lifecycle{Status: terminal.StatusExited}}
	require.NotContains(t, keysOf(t, shapeOf("0.8.0").state(&snap)), "exitCode")
	require.Equal(t, &wireLifecycle{Status: "exited"}, shapeOf("1.0.0").state(&snap).Lifecycle)
}

// A client claim's person is named once, in the root state's _meta, and
// never in the entries or claims themselves, whose keys each version
// defines; an anonymous client and an agent session are not named.
func TestRootStateNamesHoldersWhileEntriesKeepTheirShape(t *testing.T) {
	running := terminal.Lifecycle{Status: terminal.StatusRunning}
	sam := terminal.ClientHolds("c-sam")
	sam.Person = "sam"
	list := []terminals.Info{
		{URI: "ahp-terminal:/a", Title: "sh", Claim: sam, Lifecycle: running},
		{URI: "ahp-terminal:/b", Title: "sh", Claim: terminal.ClientHolds("c-anon"), Lifecycle: running},
		{URI: "ahp-terminal:/c", Title: "sh", Claim: terminal.Claim{Kind: terminal.ClaimSession, Session: "ahp-session:/s", Chat: "ahp-chat:/c"}, Lifecycle: running},
	}
	require.Equal(t, map[string]string{"c-sam": "sam"}, holderNames(list))
	require.Nil(t, holderNames(list[1:]), "nobody to name: no _meta at all")

	for _, tc := range []struct {
		version string
		entry   []string
	}{
		{"0.8.0", []string{"claim", "resource", "title"}},
		{"1.0.0", []string{"claim", "lifecycle", "resource", "title"}},
	} {
		t.Run(tc.version, func(t *testing.T) {
			entries := shapeOf(tc.version).list(list)
			require.Equal(t, tc.entry, keysOf(t, entries[0]))
			require.Equal(t, []string{"clientId", "kind"}, keysOf(t, entries[0].Claim))
		})
	}
}
