package userstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// ClientCredentials is what the local CLI needs to reach the daemon: where
// it listens and a token to present. Unlike the users file it holds a plain
// token, which is why it is written 0600 and never printed.
type ClientCredentials struct {
	// URL is the daemon's address, e.g. http://127.0.0.1:9187/.
	URL string `json:"url"`
	// Token is the bearer token, in the clear.
	Token string `json:"token"`
}

// WriteClientCredentials writes the client credentials file, a small JSON
// object {"url": …, "token": …}, mode 0600, replacing any earlier one
// atomically.
func WriteClientCredentials(path, url, token string) error {
	if url == "" || token == "" {
		return errors.New("client credentials need both a URL and a token")
	}
	data, err := json.MarshalIndent(ClientCredentials{URL: url, Token: token}, "", "  ")
	if err != nil {
		return errors.New("cannot encode the client credentials")
	}
	return writeFile(path, append(data, '\n'), false)
}

// ReadClientCredentials reads what WriteClientCredentials wrote. Its errors
// never quote the file, which holds a plain token.
func ReadClientCredentials(path string) (ClientCredentials, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return ClientCredentials{}, fmt.Errorf("cannot read the client credentials: %w", err)
	}
	var c ClientCredentials
	if err := json.Unmarshal(data, &c); err != nil {
		// json's messages can quote a value (e.g. a type mismatch), so only
		// say that it is not the expected shape.
		return ClientCredentials{}, fmt.Errorf("%s is not a client credentials file (a JSON object with url and token)", path)
	}
	if c.URL == "" || c.Token == "" {
		return ClientCredentials{}, fmt.Errorf("%s lacks a url or a token", path)
	}
	return c, nil
}
