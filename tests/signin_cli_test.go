// Tests of what a newcomer runs first: --version, url, and the credentials
// file that serve and token rotate keep current.
package tests

import (
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/adapters/userstore"
	"github.com/shellgate/shellgate/tests/ahpclient"
)

func TestVersionPrintsTheCommitItWasBuiltFrom(t *testing.T) {
	t.Parallel()
	res := cli(t, nil, "--version")
	require.Equal(t, 0, res.code, res.stderr)
	require.Regexp(t, `^shellgate \S+ commit [0-9a-f]{7,12}(\+dirty)?( \(\S+\))? go\S+\n$`, res.stdout)
	if headCommit != "" {
		require.Contains(t, res.stdout, "commit "+headCommit[:12])
	}
}

// linkToken checks that line is a sign-in link to the daemon at addr and
// returns its token.
func linkToken(t *testing.T, line, addr string) string {
	t.Helper()
	u, err := url.Parse(strings.TrimSpace(line))
	require.NoError(t, err, line)
	require.Equal(t, "http", u.Scheme)
	require.Equal(t, addr, u.Host)
	require.Equal(t, "/", u.Path)
	require.Empty(t, u.RawQuery, "the token never travels in a query string")
	token, ok := strings.CutPrefix(u.Fragment, "token=")
	require.True(t, ok, "the token is in the fragment: %q", line)
	return token
}

func TestURLPrintsASignInLinkThatSignsIn(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	d := startDaemonIn(t, dataDir) // first start: the admin's token goes to credentials.json

	res := cli(t, nil, "url", "--data-dir", dataDir)
	require.Equal(t, 0, res.code, res.stderr)
	token := linkToken(t, res.stdout, d.addr)
	require.Equal(t, readCreds(t, dataDir), token)

	c := d.dial(t, ahpclient.DialOptions{QueryToken: token})
	initialize(t, c, "from-the-link")
	rpcErr, err := c.CreateTerminal(ctxT(t), ahpclient.CreateParams{Channel: "ahp-terminal:/linked"})
	require.NoError(t, err)
	require.Nil(t, rpcErr, "the link signs in as the admin")

	// A token the users file has dropped (rotated by hand, not by the CLI)
	// makes no link, and the error says what to do.
	store, err := userstore.Open(filepath.Join(dataDir, "users.yaml"))
	require.NoError(t, err)
	_, err = store.Rotate("admin")
	require.NoError(t, err)
	res = cli(t, nil, "url", "--data-dir", dataDir)
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "holds a token the users file no longer knows: `shellgate token rotate ID`")
	require.Empty(t, res.stdout)

	res = cli(t, nil, "url", "--data-dir", t.TempDir())
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "start `shellgate serve` once with this data directory")
}

func TestURLForAPersonMintsAShortLivedLinkBesideTheirToken(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	d := startDaemonIn(t, dataDir)
	d.token = readCreds(t, dataDir)
	own := d.addUser(t, "vic", "viewer")

	res := cli(t, nil, "url", "vic", "--for", "10m", "--data-dir", dataDir)
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "a sign-in link for vic, good for 10m0s:\n", res.stderr)
	link := linkToken(t, res.stdout, d.addr)
	require.NotEqual(t, own, link)

	c := d.dial(t, ahpclient.DialOptions{QueryToken: link})
	got, rpcErr, err := c.Initialize(ctxT(t), "vic-by-link", nil, nil)
	require.NoError(t, err)
	require.Nil(t, rpcErr)
	who, ops := grantsOf(t, got.Meta)
	require.Equal(t, "vic", who, "the link signs in as its person, with their role")
	require.Equal(t, []string{"terminal:output", "agent:list", "agent:get", "approval:list"}, ops)
	require.Equal(t, http.StatusOK, restStatus(t, d, own), "the person's own token keeps working")

	res = cli(t, nil, "url", "vic", "--for", "48h", "--data-dir", dataDir)
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "a sign-in link lasts more than 0 and at most 24h0m0s")
	res = cli(t, nil, "url", "nobody", "--data-dir", dataDir)
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "no user called nobody")
}

func TestCredentialsFollowTokenRotateAndANewListenAddress(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	first := startDaemonIn(t, dataDir)
	firstToken := readCreds(t, dataDir)
	first.stop()

	// Another start on another port rewrites the address and says how to
	// get a link, without printing the token again.
	second := startDaemonIn(t, dataDir, "--listen", "127.0.0.1:0")
	creds, err := userstore.ReadClientCredentials(filepath.Join(dataDir, "credentials.json"))
	require.NoError(t, err)
	require.Equal(t, "http://"+second.addr, creds.URL)
	require.Equal(t, firstToken, creds.Token)
	stdout, _ := second.output()
	require.Contains(t, stdout, "`shellgate url` prints a sign-in link for admin")
	require.NotContains(t, stdout, firstToken)
	require.NotContains(t, stdout, "#token=<token>")

	ls := cli(t, nil, "ls", "--data-dir", dataDir)
	require.Equal(t, 0, ls.code, ls.stderr)
	require.Equal(t, "no terminals\n", ls.stderr)

	// Rotating the admin's token puts the new one in the file: the CLI
	// carries on, and the old token is refused.
	rotated := cli(t, nil, "token", "rotate", "admin", "--data-dir", dataDir)
	require.Equal(t, 0, rotated.code, rotated.stderr)
	newToken := strings.TrimSpace(rotated.stdout)
	require.Regexp(t, regexp.MustCompile(`^sg_\S+$`), newToken)
	require.Contains(t, rotated.stderr, "credentials.json now holds the new token")
	require.Equal(t, newToken, readCreds(t, dataDir))

	ls = cli(t, nil, "ls", "--data-dir", dataDir)
	require.Equal(t, 0, ls.code, ls.stderr)
	old := cli(t, nil, "ls", "--url", "http://"+second.addr, "--token", firstToken)
	require.Equal(t, 1, old.code)
	require.Contains(t, old.stderr, "refused the token (HTTP 401)")

	// Another person's rotation leaves the admin's credentials alone.
	second.addUser(t, "sam", "member")
	res := cli(t, nil, "token", "rotate", "sam", "--data-dir", dataDir)
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, newToken, readCreds(t, dataDir))

	// --url alone, for a daemon the file holds no token for, says exactly
	// what to pass instead of sending the token there.
	res = cli(t, nil, "ls", "--data-dir", dataDir, "--url", "http://127.0.0.1:1")
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "drop --url to talk to that one, or give this one's token with --token or SHELLGATE_TOKEN")
	require.NotContains(t, res.stderr, newToken)
}

func TestExecRunsInTheCallersDirectoryAndForwardsKeysAsTyped(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	here := t.TempDir()
	real, err := filepath.EvalSymlinks(here)
	require.NoError(t, err)

	// The command reads one key in raw mode, as htop waits for q: it only
	// returns if the key is sent as pressed, without a newline after it.
	script := `pwd -P; stty raw -echo; printf 'press a key> '; k=$(dd bs=1 count=1 2>/dev/null); stty sane; echo; echo "key=[$k]"; exit 7`
	p := startOnPtyIn(t, here, append(append([]string{"exec", "--pty"}, d.remoteArgs()...), "--", "sh", "-c", script)...)
	_, at := p.waitFor(t, 0, regexp.MustCompile(regexp.QuoteMeta(real)+`\r\n`))
	_, at = p.waitFor(t, at, regexp.MustCompile(`press a key> `))
	lflag := termios(t, p.tty).Lflag
	require.Zero(t, lflag&(unix.ICANON|unix.ECHO), "exec --pty puts the person's terminal in raw mode")
	p.typeText(t, "q")
	p.waitFor(t, at, regexp.MustCompile(`key=\[q\]`))
	require.Equal(t, 7, p.wait(t), "exec exits with the command's code")
	lflag = termios(t, p.tty).Lflag
	require.NotZero(t, lflag&unix.ICANON, "the terminal is given back as it was")
	require.NotZero(t, lflag&unix.ECHO)

	// A start directory that does not exist is refused before anything runs.
	res := cli(t, nil, append(append([]string{"exec"}, d.remoteArgs()...), "--cwd", "/nonexistent/dir", "--", "true")...)
	require.Equal(t, 1, res.code)
	require.Equal(t, "shellgate: --cwd /nonexistent/dir: the directory does not exist\n", res.stderr)
	list := cli(t, nil, append([]string{"ls"}, d.remoteArgs()...)...)
	require.Equal(t, "no terminals\n", list.stderr, "nothing was started")
}

func TestServeOnABusyPortSaysSoInOneLine(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	res := cli(t, nil, "serve", "--listen", ln.Addr().String(), "--data-dir", t.TempDir())
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "shellgate: cannot listen on "+ln.Addr().String()+": something already listens there (another shellgate serve?); stop it, or pick another address with --listen\n")
	require.NotContains(t, res.stderr, "OnStart hook failed", "fx's account of the failed start stays out of sight")
	require.NotContains(t, res.stderr, "rolling back")
	require.Equal(t, 1, strings.Count(res.stderr, "cannot listen"), res.stderr)
}
