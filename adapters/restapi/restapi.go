// Package restapi serves the agent terminal API of seed 002 under
// /api/agent-terminal/: the same paths, JSON shapes, status codes and error
// codes, so a client written against that document works unchanged. It
// signs every request in from its `Authorization: Bearer` token through
// ports.UserStore and hands it to app/agents; errors become HTTP in one
// table (errors.go).
package restapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/shellgate/shellgate/app/agents"
	"github.com/shellgate/shellgate/ports"
)

// Prefix is where the API lives; mount the handler there.
const Prefix = "/api/agent-terminal/"

// MaxBodyBytes bounds a request body.
const MaxBodyBytes = 1 << 20

// Handler is the API. Build it with New.
type Handler struct {
	app   *agents.App
	users ports.UserStore
	log   *slog.Logger
	mux   *http.ServeMux
}

// New returns the API over app, signing requests in against users. log
// receives one line per request (debug; warn for a 5xx; never a token) and
// the full text of errors the client is only told about in general terms;
// nil discards.
func New(app *agents.App, users ports.UserStore, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h := &Handler{app: app, users: users, log: log, mux: http.NewServeMux()}
	h.route("POST /api/agent-terminal/sessions", h.createSession)
	h.route("GET /api/agent-terminal/sessions", h.listSessions)
	h.route("GET /api/agent-terminal/sessions/{session_id}", h.getSession)
	h.route("DELETE /api/agent-terminal/sessions/{session_id}", h.deleteSession)
	h.route("POST /api/agent-terminal/execute", h.execute)
	h.route("POST /api/agent-terminal/sessions/{session_id}/approve", h.approve)
	h.route("POST /api/agent-terminal/sessions/{session_id}/interrupt", h.interrupt)
	h.route("POST /api/agent-terminal/sessions/{session_id}/resume", h.resume)
	h.route("GET /api/agent-terminal/sessions/{session_id}/commands", h.listCommands)
	h.route("GET /api/agent-terminal/sessions/{session_id}/commands/{command_id}", h.getCommand)
	h.mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, &requestError{kind: errNoRoute, msg: fmt.Sprintf("%s %s is not an endpoint of the agent terminal API", r.Method, r.URL.Path)})
	})
	return h
}

// ServeHTTP serves one request, logging it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &recorder{ResponseWriter: w}
	start := time.Now()
	h.mux.ServeHTTP(rec, r)
	// Clients poll; only failures of the daemon's own are worth more than
	// debug.
	level := slog.LevelDebug
	if rec.status >= http.StatusInternalServerError {
		level = slog.LevelWarn
	}
	h.log.Log(r.Context(), level, "agent api", "method", r.Method, "path", r.URL.Path,
		"status", rec.status, "principal", rec.principal, "duration", time.Since(start))
}

// endpoint is one API call for a signed-in caller; an error is answered
// through the table.
type endpoint func(w http.ResponseWriter, r *http.Request, who agents.Caller) error

func (h *Handler) route(pattern string, e endpoint) {
	h.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		who, err := h.signIn(r)
		if err == nil {
			if rec, ok := w.(*recorder); ok {
				rec.principal = who.Principal.ID
			}
			err = e(w, r, who)
		}
		if err != nil {
			h.fail(w, r, err)
		}
	})
}

// signIn resolves the bearer token to a principal and the current roles.
func (h *Handler) signIn(r *http.Request) (agents.Caller, error) {
	header := r.Header.Get("Authorization")
	scheme, token, _ := strings.Cut(header, " ")
	token = strings.TrimSpace(token)
	if header == "" || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return agents.Caller{}, &requestError{kind: errUnauthenticated, msg: "sign in: send Authorization: Bearer <token> (make one with `shellgate token add`)"}
	}
	p, ok := h.users.Lookup(token)
	if !ok {
		return agents.Caller{}, &requestError{kind: errUnauthenticated, msg: "that token is not one this host knows; it may have been rotated or removed"}
	}
	return agents.Caller{Principal: p, Roles: h.users.Roles()}, nil
}

// fail answers err as the table says.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	rule := lookup(err)
	body := errorResponse{Status: "error", Error: err.Error(), Code: rule.code}
	if rule.public != "" {
		body.Error = rule.public
		h.log.Error("agent api request failed", "method", r.Method, "path", r.URL.Path, "code", rule.code, "err", err)
	}
	var refused *agents.CommandRefusedError
	if errors.As(err, &refused) {
		body.CommandID = refused.CommandID
	}
	var blocked *agents.CommandBlockedError
	if errors.As(err, &blocked) {
		body.Command = blocked.Command
		body.Risk = blocked.Assessment.Level.String()
		body.AgentRole = blocked.AgentRole
		body.Reasons = nonNil(blocked.Assessment.Reasons)
		sec := securityOf(blocked.Assessment, blocked.Sandbox, false)
		body.Security = &sec
	}
	if rule.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="shellgate"`)
	}
	writeJSON(w, rule.status, body)
}

// decode reads the JSON object in the body into v. Unknown fields are
// ignored (clients may send more than the seed names); anything that is not
// one JSON object of the right field types is a clear 400.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	err := dec.Decode(v)
	var (
		syntax   *json.SyntaxError
		typeErr  *json.UnmarshalTypeError
		tooLarge *http.MaxBytesError
	)
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		return malformed("the request needs a JSON object as its body")
	case errors.As(err, &tooLarge):
		return &requestError{kind: errTooLarge, msg: fmt.Sprintf("the request body is over %d bytes", MaxBodyBytes)}
	case errors.As(err, &syntax):
		return malformed("the body is not valid JSON (at byte %d): %v", syntax.Offset, err)
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return malformed("field %q must be %s, not %s", typeErr.Field, jsonType(typeErr.Type.Kind().String()), typeErr.Value)
	case errors.As(err, &typeErr):
		return malformed("the body must be a JSON object, not %s", typeErr.Value)
	default:
		return malformed("the body is not valid JSON: %v", err)
	}
	if dec.More() {
		return malformed("the body holds more than one JSON value; send one object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return malformed("the body has data after its JSON object")
	}
	return nil
}

// jsonType names a Go kind the way a JSON client thinks of it.
func jsonType(kind string) string {
	switch kind {
	case "bool":
		return "a boolean"
	case "string":
		return "a string"
	case "map", "struct":
		return "an object"
	case "slice", "array":
		return "an array"
	case "ptr":
		return "a value of another type"
	}
	return "a number"
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// recorder remembers the status and who asked, for the request's log line.
type recorder struct {
	http.ResponseWriter
	status    int
	principal string
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the real writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
