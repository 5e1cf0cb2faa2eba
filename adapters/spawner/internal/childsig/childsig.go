// Package childsig makes the signals a terminal's processes rely on reach
// them with their default action, even when the daemon was started with
// them ignored (by nohup, or as a background job of a shell without job
// control). An ignored signal stays ignored across exec, so without this a
// ^C on pipes (SIGINT to the group) would do nothing, and neither would
// SIGTERM at stop.
package childsig

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

var once sync.Once

// Restore installs a handler, which drops the signal, for each of SIGINT,
// SIGQUIT, SIGTERM and SIGHUP that this process ignores. The daemon still
// ignores them, but children exec with the default action: the runtime
// resets handled signals at exec and keeps ignored ones.
func Restore() {
	once.Do(func() {
		for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGHUP} {
			if signal.Ignored(sig) {
				signal.Notify(make(chan os.Signal, 1), sig)
			}
		}
	})
}
