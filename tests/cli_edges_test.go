// Tests of the client commands' edges a newcomer meets first: whom ls names
// as a terminal's holder, and what exec does with piped standard input.
package tests

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/tests/ahpclient"
)

// keptTerminal runs `exec --keep` with env and returns the kept terminal's URI.
func keptTerminal(t *testing.T, env []string, argv ...string) string {
	t.Helper()
	res := cli(t, env, append([]string{"exec", "--keep", "--"}, argv...)...)
	m := regexp.MustCompile(`kept (ahp-terminal:/\S+)`).FindStringSubmatch(res.stderr)
	require.NotNil(t, m, "exit %d: %s", res.code, res.stderr)
	return m[1]
}

func TestLsNamesThePersonHoldingEachTerminalAndFollowsAClaim(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	sam := d.addUser(t, "sam", "member")
	samEnv := []string{"SHELLGATE_URL=http://" + d.addr, "SHELLGATE_TOKEN=" + sam}

	mine := keptTerminal(t, d.remoteEnv(), "sh", "-c", "exit 2")
	hers := keptTerminal(t, samEnv, "true")
	row := func(uri, holder, status string) string {
		return `(?m)^` + regexp.QuoteMeta(uri) + `\s+.*\s+main\s+` + holder + `\s+` + status + `$`
	}
	list := cli(t, d.remoteEnv(), "ls")
	require.Equal(t, 0, list.code, list.stderr)
	require.Regexp(t, `(?m)^TERMINAL\s+TITLE\s+HOST\s+HOLDER\s+STATUS$`, list.stdout)
	require.Regexp(t, row(mine, "admin", "exited 2"), list.stdout)
	require.Regexp(t, row(hers, "sam", "exited 0"), list.stdout)
	require.NotContains(t, list.stdout, "client ", "a person is named, not a client id")

	// The admin takes sam's terminal over the protocol: the list names the
	// new holder.
	c := d.dial(t, ahpclient.DialOptions{})
	initialize(t, c, "taker", hers)
	_, err := c.Dispatch(ctxT(t), hers, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": "taker"}})
	require.NoError(t, err)
	echo, err := c.WaitAction(ctxT(t), func(e ahpclient.Envelope) bool { return e.Channel == hers && e.Type == "terminal/claimed" })
	require.NoError(t, err)
	require.Nil(t, echo.RejectionReason)
	require.NotContains(t, string(echo.Action), "sam", "the protocol's claim is unchanged: no name in it")

	list = cli(t, d.remoteEnv(), "ls")
	require.Equal(t, 0, list.code, list.stderr)
	require.Regexp(t, row(hers, "admin", "exited 0"), list.stdout)
}
