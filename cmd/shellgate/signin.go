package main

import (
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/shellgate/shellgate/adapters/userstore"
	"github.com/shellgate/shellgate/cmd/shellgate/internal/config"
)

// usersPath is the users file in the data directory.
func usersPath(cfg Config) string { return cfg.UsersFile() }

// credentialsPath is the local client credentials file the CLI reads.
func credentialsPath(cfg Config) string { return cfg.CredentialsFile() }

// bootstrap creates the users file on first start with one admin, writes
// the CLI's credentials and prints the token and sign-in URL once. Later
// starts keep the credentials current: a token the users file still knows
// is written back with the URL this start listens on, so the CLI and
// `shellgate url` follow a daemon moved to another port.
func bootstrap(out io.Writer, cfg Config, store *userstore.Store, baseURL string) error {
	token, created, err := store.Bootstrap("")
	if err != nil {
		var malformed *userstore.MalformedError
		if errors.As(err, &malformed) {
			fmt.Fprintf(out, "shellgate: the users file %s cannot be used (%v); nobody can sign in until it is fixed\n", usersPath(cfg), err)
			return nil
		}
		return fmt.Errorf("users file: %w", err)
	}
	if created {
		if err := userstore.WriteClientCredentials(credentialsPath(cfg), baseURL, token); err != nil {
			return fmt.Errorf("client credentials: %w", err)
		}
		fmt.Fprintf(out, "created %s with one admin; its token is shown this once (the CLI reads it from %s):\n  %s\n", usersPath(cfg), credentialsPath(cfg), token)
		fmt.Fprintf(out, "sign in: %s/#token=%s\n", baseURL, token)
		return nil
	}
	fmt.Fprintln(out, refreshCredentials(cfg, store, baseURL))
	return nil
}

// refreshCredentials rewrites the credentials file with baseURL when its
// token is still good, and returns the line to print: how to get a sign-in
// link, or what to do when the stored token no longer works. The token
// itself is never printed again (it may end up in a log).
func refreshCredentials(cfg Config, store *userstore.Store, baseURL string) string {
	path := credentialsPath(cfg)
	creds, err := userstore.ReadClientCredentials(path)
	if err != nil {
		return fmt.Sprintf("no CLI credentials (%v): sign in with a token from `shellgate token add NAME --role member` at %s/#token=TOKEN", err, baseURL)
	}
	p, ok := store.Lookup(creds.Token)
	if !ok {
		return fmt.Sprintf("%s holds a token the users file no longer knows: `shellgate token rotate ID` for the admin writes a new one there", path)
	}
	if creds.URL != baseURL {
		if err := userstore.WriteClientCredentials(path, baseURL, creds.Token); err != nil {
			return fmt.Sprintf("cannot update %s with this address (%v): give the CLI --url %s", path, err, baseURL)
		}
	}
	return fmt.Sprintf("sign in: `shellgate url` prints a sign-in link for %s (the CLI reads %s)", p.ID, path)
}

// checkListen refuses an address beyond this machine without TLS, unless
// told --insecure.
func checkListen(cfg Config) error {
	host, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return fmt.Errorf("--listen %q: %w", cfg.Listen, err)
	}
	if config.IsLoopbackHost(host) || cfg.TLSCert != "" || cfg.Insecure {
		if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
			return errors.New("--tls-cert and --tls-key go together")
		}
		return nil
	}
	return fmt.Errorf("listening on %s exposes every terminal beyond this machine: give --tls-cert and --tls-key, or --insecure if something else encrypts the traffic", cfg.Listen)
}
