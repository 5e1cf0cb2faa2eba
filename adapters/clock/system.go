// Package clock implements ports.Clock: the system clock for the daemon and
// a fake, hand-driven clock for tests.
package clock

import (
	"time"

	"github.com/shellgate/shellgate/ports"
)

// Real is ports.Clock over the time package.
type Real struct{}

var _ ports.Clock = Real{}

// System returns the clock the daemon runs on.
func System() Real { return Real{} }

// Now returns the current time.
func (Real) Now() time.Time { return time.Now() }

// AfterFunc calls f in its own goroutine once d has elapsed.
func (Real) AfterFunc(d time.Duration, f func()) ports.Timer {
	return time.AfterFunc(d, f)
}
