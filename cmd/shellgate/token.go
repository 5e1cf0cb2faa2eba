package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/shellgate/shellgate/adapters/userstore"
	"github.com/shellgate/shellgate/domain/access"
)

// newTokenCmd manages the users file: who may sign in, with which role.
func newTokenCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Manage who may sign in (the users file in the data directory)",
	}
	open := func(cmd *cobra.Command) (*userstore.Store, error) {
		cfg, err := configFromFlags(cmd)
		if err != nil {
			return nil, err
		}
		return userstore.Open(usersPath(cfg))
	}

	add := &cobra.Command{
		Use:   "add NAME --role ROLE",
		Short: "Add a person or agent and print their new token (alone on stdout)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			role, _ := cmd.Flags().GetString("role")
			store, err := open(cmd)
			if err != nil {
				return err
			}
			token, err := store.Add(args[0], role)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), token)
			fmt.Fprintf(cmd.ErrOrStderr(), "added %s as %s; the token above is shown this once\n", args[0], role)
			return nil
		},
	}
	add.Long = `Add a person or agent to the users file and print their new token, alone on
stdout (so TOKEN=$(shellgate token add …) works); it is shown this once.

Built-in roles:
  admin             everything
  member            every terminal operation, approvals, interrupt/resume, the audit log
  viewer            watch: read every terminal, see agent sessions and what they wait on;
                    type into none, decide none
  guest             nothing but the list of terminals (their names, not their output)
  chat_agent, automation_agent, system_agent, admin_agent
                    an agent: the agent API, opening sessions up to that role

A users file may define its own roles from grants such as terminal:output.`
	add.Flags().String("role", "guest", "the role: admin, member, viewer, guest, chat_agent, automation_agent, system_agent, admin_agent, or one the users file defines")

	list := &cobra.Command{
		Use:   "list",
		Short: "List who may sign in and their roles (never tokens)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := open(cmd)
			if err != nil {
				return err
			}
			users, err := store.List()
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tROLES")
			for _, u := range users {
				fmt.Fprintf(w, "%s\t%s\n", u.ID, strings.Join(u.Roles, ","))
			}
			return w.Flush()
		},
	}

	remove := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove a person or agent; their next command is refused",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := open(cmd)
			if err != nil {
				return err
			}
			if err := store.Remove(args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "removed %s\n", args[0])
			return nil
		},
	}

	rotate := &cobra.Command{
		Use:   "rotate NAME",
		Short: "Give NAME a new token (printed alone on stdout); the old one stops working",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := open(cmd)
			if err != nil {
				return err
			}
			cfg, err := configFromFlags(cmd)
			if err != nil {
				return err
			}
			// Whose token the CLI holds is asked before the rotation,
			// while the old token still names them.
			path := credentialsPath(cfg)
			creds, credsErr := userstore.ReadClientCredentials(path)
			var holder access.Principal
			var held bool
			if credsErr == nil {
				holder, held = store.Lookup(creds.Token)
			}
			token, err := store.Rotate(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), token)
			if held && holder.ID == args[0] {
				if err := userstore.WriteClientCredentials(path, creds.URL, token); err != nil {
					return fmt.Errorf("rotated %s, but %s still holds the old token (%w): give the CLI the token above", args[0], path, err)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "rotated %s; %s now holds the new token\n", args[0], path)
			}
			return nil
		},
	}
	cmd.AddCommand(add, list, remove, rotate)
	return cmd
}
