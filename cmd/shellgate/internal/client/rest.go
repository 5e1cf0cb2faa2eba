package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
)

// AgentAPIPrefix is where the daemon serves the agent terminal API.
const AgentAPIPrefix = "/api/agent-terminal"

// ErrAgentAPINotServed says the daemon answers, but not with the agent API.
var ErrAgentAPINotServed = errors.New("this daemon does not serve the agent API (" + AgentAPIPrefix + ")")

// REST calls the daemon's JSON API with the bearer token.
type REST struct {
	base  string
	token string
	http  *http.Client
}

// NewREST returns a REST client for the daemon at rawURL.
func NewREST(rawURL, token string) (*REST, error) {
	base, err := HTTPURL(rawURL)
	if err != nil {
		return nil, err
	}
	return &REST{base: base, token: token, http: &http.Client{Timeout: 2 * time.Minute}}, nil
}

// HTTPError is a refusal from the JSON API, in seed 002's error shape.
type HTTPError struct {
	Method, Path string
	Status       int
	// Code is the seed's error code (session_not_found, …) when given.
	Code string
	// Message is the daemon's explanation.
	Message string
}

// Error reads like "the daemon refused POST /api/…: HTTP 404
// session_not_found: no session x".
func (e *HTTPError) Error() string {
	s := fmt.Sprintf("the daemon refused %s %s: HTTP %d", e.Method, e.Path, e.Status)
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Do sends in (if not nil) as JSON and decodes the JSON answer into out (if
// not nil). path starts with "/". A daemon without the API, which answers
// with something other than JSON, gives ErrAgentAPINotServed.
func (r *REST) Do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		enc, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(enc)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach the daemon at %s: %v", Redact(r.base), errors.Unwrap(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	isJSON := looksJSON(resp.Header.Get("Content-Type"), raw)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if !isJSON && (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusUpgradeRequired) {
			return ErrAgentAPINotServed
		}
		return httpError(method, path, resp.StatusCode, raw, isJSON)
	}
	if !isJSON {
		return ErrAgentAPINotServed
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: unexpected answer: %w", method, path, err)
	}
	return nil
}

func looksJSON(contentType string, body []byte) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return false
	}
	return json.Valid(body)
}

// httpError reads the seed's error shape loosely: {"status": "error",
// "error": "…", "code"|"error_code": "…"} or {"detail": "…"}.
func httpError(method, path string, status int, raw []byte, isJSON bool) error {
	e := &HTTPError{Method: method, Path: path, Status: status}
	if !isJSON {
		e.Message = strings.TrimSpace(string(bytes.ToValidUTF8(raw[:min(len(raw), 200)], nil)))
		return e
	}
	var body map[string]json.RawMessage
	_ = json.Unmarshal(raw, &body)
	str := func(keys ...string) string {
		for _, k := range keys {
			var s string
			if json.Unmarshal(body[k], &s) == nil && s != "" {
				return s
			}
		}
		return ""
	}
	e.Code = str("code", "error_code")
	e.Message = str("error", "message", "detail")
	if e.Message == e.Code {
		e.Message = ""
	}
	return e
}
