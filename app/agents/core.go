package agents

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/agentsession"
	"github.com/shellgate/shellgate/domain/risk"
	"github.com/shellgate/shellgate/ports"
)

// core is the state every use case shares: the open sessions.
//
// Locking: mu guards the map and closing; each entry's own mu guards the
// session in it and is held across the audit write of a change, so the
// record and the change it describes are ordered the same way for
// everyone. An entry's mu may be taken while holding nothing, and mu may be
// taken while holding an entry's mu — never the other way round. No lock is
// held while a command runs.
type core struct {
	cfg   Config
	clock ports.Clock
	audit ports.AuditSink
	host  *terminals.Host
	risk  *risk.Classifier
	// sandbox is nil when commands cannot be confined.
	sandbox ports.Sandbox
	newID   func() string
	log     *slog.Logger
	// repeats merges identical refusals in the audit log; nil writes each.
	repeats *repeats

	mu       sync.Mutex
	sessions map[string]*entry
	closing  bool
	// inflight counts use cases under way, so Close can wait for their
	// audit records.
	inflight sync.WaitGroup
}

// entry is one open session and what the gate keeps beside it.
type entry struct {
	// id, created and owner never change; they may be read without mu.
	id      string
	created time.Time
	// owner is the id of the principal that opened the session (D4).
	owner string
	// workspace is where the session's commands start; scope holds its
	// private temporary directory while its commands run confined (nil
	// when they cannot be). Neither changes after creation.
	workspace string
	scope     ports.SandboxScope
	// machine is where the session's commands run: MainHost, or one of the
	// configured hosts.
	machine string

	mu sync.Mutex
	s  agentsession.Session
	// gone is set once the session was deleted, expired or closed; a use
	// case that finds it set answers ErrSessionNotFound.
	gone bool
	// running counts the session's commands under way; a session is not
	// idle while one runs.
	running int
	timer   ports.Timer
	// terms are the session's command terminals, oldest first.
	terms []*terminals.Terminal
	// cmds are the session's remembered commands, oldest first (commands.go).
	cmds []*record
}

// enter admits a use case unless the gate is closing; leave when done.
func (c *core) enter() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return refuse(ErrClosing, "shellgate is stopping, so the agent gate takes no new requests")
	}
	c.inflight.Add(1)
	return nil
}

func (c *core) leave() { c.inflight.Done() }

// locked returns the session id names, with its mu held, if the caller may
// see it. The caller unlocks.
func (c *core) locked(who Caller, id string) (*entry, error) {
	if id == "" {
		return nil, refuse(ErrInvalid, "name the session: session_id is required")
	}
	c.mu.Lock()
	e := c.sessions[id]
	c.mu.Unlock()
	if e == nil || !who.sees(e) {
		return nil, notFound(id)
	}
	e.mu.Lock()
	if e.gone {
		e.mu.Unlock()
		return nil, notFound(id)
	}
	return e, nil
}

// entries returns every open session, oldest first.
func (c *core) entries() []*entry {
	c.mu.Lock()
	out := make([]*entry, 0, len(c.sessions))
	for _, e := range c.sessions {
		out = append(out, e)
	}
	c.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].created, out[j].created
		if !a.Equal(b) {
			return a.Before(b)
		}
		return out[i].id < out[j].id
	})
	return out
}

// leftovers are what an ended session leaves to dispose of.
type leftovers struct {
	terms []*terminals.Terminal
	scope ports.SandboxScope
}

// end marks e gone and takes it off the map; the caller holds e.mu and
// must dispose the leftovers once it has let go of it.
func (c *core) end(e *entry) leftovers {
	e.gone = true
	c.expirePending(e, "the session ended while the command waited for approval")
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	left := leftovers{terms: e.terms, scope: e.scope}
	e.terms, e.scope = nil, nil
	c.mu.Lock()
	if c.sessions[e.id] == e {
		delete(c.sessions, e.id)
	}
	c.mu.Unlock()
	return left
}

// dispose ends and removes a session's terminals (one already gone is no
// error), then its private temporary directory.
func (c *core) dispose(left leftovers) {
	for _, t := range left.terms {
		_ = t.Release()
	}
	if left.scope != nil {
		if err := left.scope.Close(); err != nil {
			c.log.Error("an agent session's temporary directory could not be removed", "dir", left.scope.TempDir(), "err", err)
		}
	}
}

// keep lists a command terminal under its session, disposing the oldest
// finished ones beyond the configured number. It reports false when the
// session has gone meanwhile, in which case the terminal was disposed.
func (c *core) keep(e *entry, t *terminals.Terminal) bool {
	e.mu.Lock()
	if e.gone {
		e.mu.Unlock()
		_ = t.Release()
		return false
	}
	e.terms = append(e.terms, t)
	var drop []*terminals.Terminal
	for len(e.terms) > c.cfg.KeptTerminals {
		i := firstFinished(e.terms)
		if i < 0 {
			break
		}
		drop = append(drop, e.terms[i])
		e.terms = append(e.terms[:i], e.terms[i+1:]...)
	}
	e.mu.Unlock()
	c.dispose(leftovers{terms: drop})
	return true
}

func firstFinished(terms []*terminals.Terminal) int {
	for i, t := range terms {
		select {
		case <-t.Done():
			return i
		default:
		}
	}
	return -1
}

func (c *core) close(ctx context.Context) error {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	for _, e := range c.entries() {
		e.mu.Lock()
		left := c.end(e)
		e.mu.Unlock()
		c.dispose(left)
	}
	done := make(chan struct{})
	go func() {
		c.inflight.Wait()
		close(done)
	}()
	select {
	case <-done:
		c.repeats.stop()
		return nil
	case <-ctx.Done():
		c.repeats.stop()
		return fmt.Errorf("agent gate: requests still under way at stop: %w", context.Cause(ctx))
	}
}

// newUUID is a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
