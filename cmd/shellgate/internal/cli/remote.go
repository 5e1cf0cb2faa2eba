package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/shellgate/shellgate/adapters/userstore"
	"github.com/shellgate/shellgate/cmd/shellgate/internal/client"
)

// setupPatience bounds connecting and the requests before streaming starts.
const setupPatience = 30 * time.Second

// remote is the daemon a client command talks to and the token it presents.
type remote struct {
	url   string
	token string
}

// addRemoteFlags gives a client command --url and --token.
func addRemoteFlags(cmd *cobra.Command) {
	cmd.Flags().String("url", "", "the daemon's URL, e.g. http://127.0.0.1:7681 (default $SHELLGATE_URL, else the credentials file that serve wrote in the data directory)")
	cmd.Flags().String("token", "", "the token to present (default $SHELLGATE_TOKEN, else the credentials file); prefer the variable, since a flag shows in ps")
}

// resolveRemote picks the URL and token: flags, then SHELLGATE_URL and
// SHELLGATE_TOKEN, then the credentials file in the data directory. The
// file's token is only ever sent to the file's own URL.
func resolveRemote(cmd *cobra.Command) (remote, error) {
	url, _ := cmd.Flags().GetString("url")
	token, _ := cmd.Flags().GetString("token")
	if url == "" {
		url = os.Getenv("SHELLGATE_URL")
	}
	if token == "" {
		token = os.Getenv("SHELLGATE_TOKEN")
	}
	if url != "" && token != "" {
		return remote{url: url, token: token}, nil
	}
	creds, where, err := readCredentials(cmd)
	switch {
	case url == "" && token == "":
		if err != nil {
			return remote{}, fmt.Errorf("no daemon to talk to: give --url and --token (or SHELLGATE_URL and SHELLGATE_TOKEN), or start `shellgate serve` once so it writes %s (%v)", where, err)
		}
		return remote{url: creds.URL, token: creds.Token}, nil
	case url == "":
		if err != nil {
			return remote{}, fmt.Errorf("no daemon URL: give --url or SHELLGATE_URL (%v)", err)
		}
		return remote{url: creds.URL, token: token}, nil
	default:
		if err != nil {
			return remote{}, fmt.Errorf("no token for %s: give --token or SHELLGATE_TOKEN (%v)", client.Redact(url), err)
		}
		if !sameDaemon(url, creds.URL) {
			// The stored token goes to the daemon that wrote it and no
			// other: a process listening on another port may not be ours.
			// serve rewrites the file with its address at every start, so
			// the daemon of this data directory always matches.
			return remote{}, fmt.Errorf("no token for %s: %s holds the token of the daemon at %s, which is only ever sent there; drop --url to talk to that one, or give this one's token with --token or SHELLGATE_TOKEN", client.Redact(url), where, client.Redact(creds.URL))
		}
		return remote{url: url, token: creds.Token}, nil
	}
}

// readCredentials reads the credentials file `serve` wrote; where names it
// even when the data directory cannot be worked out.
func readCredentials(cmd *cobra.Command) (creds userstore.ClientCredentials, where string, err error) {
	cfg, err := configFromFlags(cmd)
	if err != nil {
		return creds, "credentials.json in the data directory", err
	}
	where = credentialsPath(cfg)
	creds, err = userstore.ReadClientCredentials(where)
	return creds, where, err
}

func sameDaemon(a, b string) bool {
	ua, errA := client.HTTPURL(a)
	ub, errB := client.HTTPURL(b)
	return errA == nil && errB == nil && strings.EqualFold(ua, ub)
}

// dial connects and introduces the client, subscribed to subscriptions.
func (r remote) dial(ctx context.Context, subscriptions ...string) (*client.Client, *client.InitializeResult, error) {
	setup, cancel := context.WithTimeout(ctx, setupPatience)
	defer cancel()
	c, err := client.Dial(setup, r.url, client.Options{Token: r.token})
	if err != nil {
		return nil, nil, err
	}
	res, err := c.Initialize(setup, subscriptions...)
	if err != nil {
		_ = c.Close()
		return nil, nil, err
	}
	return c, res, nil
}

// rest is the agent API at the daemon.
func (r remote) rest() (*client.REST, error) { return client.NewREST(r.url, r.token) }

// scrub keeps the token out of an error that is about to be printed. An
// exit code passes through as it is.
func (r remote) scrub(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(exitCodeError); ok {
		return err
	}
	if r.token != "" && strings.Contains(err.Error(), r.token) {
		return errors.New(strings.ReplaceAll(err.Error(), r.token, "<token>"))
	}
	return err
}

// printable shows text that others control (terminal titles, agents'
// commands) without letting it move the cursor or rewrite the screen:
// control characters become escapes.
func printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == unicode.ReplacementChar:
			b.WriteRune(r)
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			if r < 0x80 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
