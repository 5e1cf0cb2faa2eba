package agents

import (
	"context"
	"time"

	"github.com/shellgate/shellgate/ports"
)

// Idle expiry. Each session has one timer on the injected clock, due when
// it would have been idle for SessionTimeout. Activity does not move the
// timer; when it fires it looks at the session's LastActivity and either
// ends the session or sets itself again for the time still left. A session
// with a command running is never idle.

// scheduleExpiry sets e's timer to fire after d; e.mu is held.
func (c *core) scheduleExpiry(e *entry, d time.Duration) {
	if c.cfg.SessionTimeout <= 0 || e.gone {
		return
	}
	e.timer = c.clock.AfterFunc(d, func() { c.expire(e) })
}

// expire ends e if it has been idle for SessionTimeout, auditing why;
// otherwise it waits again.
func (c *core) expire(e *entry) {
	e.mu.Lock()
	if e.gone {
		e.mu.Unlock()
		return
	}
	now := c.clock.Now()
	switch {
	case e.running > 0:
		c.scheduleExpiry(e, c.cfg.SessionTimeout)
		e.mu.Unlock()
		return
	case !e.s.Expired(now, c.cfg.SessionTimeout):
		c.scheduleExpiry(e, e.s.LastActivity.Add(c.cfg.SessionTimeout).Sub(now))
		e.mu.Unlock()
		return
	}
	rec := c.event(ports.AuditSessionExpired, &e.s, statusExpired)
	rec.Detail = mergeDetail(droppedDetail(e), map[string]string{
		"idle_since":      e.s.LastActivity.UTC().Format(time.RFC3339Nano),
		"session_timeout": c.cfg.SessionTimeout.String(),
	})
	// Nobody is waiting on an expiry to fail it; the session ends anyway,
	// since keeping an idle agent's session open is the riskier choice.
	if err := c.audit.Record(context.Background(), rec); err != nil {
		c.log.Error("agent session expired but the audit log could not record it", "session", e.id, "err", err)
	}
	left := c.end(e)
	e.mu.Unlock()
	c.dispose(left)
}
