package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shellgate/shellgate/adapters/userstore"
)

// newURLCmd prints a sign-in link for the web page, so a person who lost
// the one the first `serve` printed (or started the daemon on another
// port) can open the page again.
func newURLCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "url",
		Short: "Print a sign-in link to the web page for the token in the credentials file",
		Long: `Print a sign-in link to the web page: the address the daemon last started
on and the token the credentials file holds (the admin's, written by the
first serve and kept current by serve and token rotate).

The link holds the token in its fragment (#token=…), which the browser does
not send to the server; the page moves it to the tab's session storage.
Anyone with the link can sign in as that person: share it as you would the
token.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			if _, ok := store.Lookup(creds.Token); !ok {
				if err := store.Err(); err != nil {
					return fmt.Errorf("the users file cannot be used (%w), so no link would work", err)
				}
				return fmt.Errorf("%s holds a token the users file no longer knows: `shellgate token rotate ID` for the admin writes a new one there", path)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s/#token=%s\n", strings.TrimSuffix(creds.URL, "/"), creds.Token)
			return nil
		},
	}
	return cmd
}
