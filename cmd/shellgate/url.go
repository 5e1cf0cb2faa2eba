package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shellgate/shellgate/adapters/userstore"
)

// newURLCmd prints a sign-in link for the web page, so a person who lost
// the one the first `serve` printed (or started the daemon on another
// port) can open the page again.
func newURLCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "url [NAME]",
		Short: "Print a sign-in link to the web page: the admin's, or a short-lived one for NAME",
		Long: `Print a sign-in link to the web page.

Without NAME: the address the daemon last started on and the token the
credentials file holds (the admin's, written by the first serve and kept
current by serve and token rotate).

With NAME: a new token for that person or agent, good for --for (15 minutes
unless told, at most 24 hours) beside their own, which stays as it is. A
page signed in with it is signed out when it expires. Like every token it
is stored only as its hash.

The link holds the token in its fragment (#token=…), which the browser does
not send to the server; the page moves it to the tab's session storage.
Anyone with the link can sign in as that person until it expires: share it
as you would the token.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := configFromFlags(cmd)
			if err != nil {
				return err
			}
			path := credentialsPath(cfg)
			creds, err := userstore.ReadClientCredentials(path)
			if err != nil {
				return fmt.Errorf("%w: start `shellgate serve` once with this data directory (%s) so it writes them", err, cfg.DataDir)
			}
			store, err := userstore.Open(usersPath(cfg))
			if err != nil {
				return err
			}
			defer store.Close()
			token := creds.Token
			if len(args) == 1 {
				lifetime, _ := cmd.Flags().GetDuration("for")
				if token, err = store.AddLink(args[0], lifetime); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "a sign-in link for %s, good for %s:\n", args[0], lifetime)
			} else if _, ok := store.Lookup(token); !ok {
				if err := store.Err(); err != nil {
					return fmt.Errorf("the users file cannot be used (%w), so no link would work", err)
				}
				return fmt.Errorf("%s holds a token the users file no longer knows: `shellgate token rotate ID` for the admin writes a new one there", path)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s/#token=%s\n", strings.TrimSuffix(creds.URL, "/"), token)
			return nil
		},
	}
	cmd.Flags().Duration("for", 15*time.Minute, "how long a link for NAME signs in (at most 24h)")
	return cmd
}
