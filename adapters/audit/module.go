package audit

import (
	"context"
	"log/slog"

	"go.uber.org/fx"

	"github.com/shellgate/shellgate/ports"
)

// Path is where the audit log lives, as the graph supplies it.
type Path string

// Module provides the *Log at the graph's Path with its Options, repaired
// of what a crash left in it (see Recover), also as the ports.AuditSink.
// Closing it is the owner's: the agent gate must close first.
var Module = fx.Module("audit",
	fx.Provide(
		openRecovered,
		func(l *Log) ports.AuditSink { return l },
	),
)

// openRecovered opens the log and records what the previous run left
// unfinished in it.
func openRecovered(path Path, opts Options, clk ports.Clock, log *slog.Logger) (*Log, error) {
	l, err := OpenWith(string(path), opts)
	if err != nil {
		return nil, err
	}
	rec, err := l.Recover(context.Background(), clk.Now())
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	if rec.TornBytes > 0 {
		log.Warn("audit log ended inside a line; cut it off and recorded that", "bytes", rec.TornBytes)
	}
	if len(rec.Lost) > 0 {
		log.Warn("agent commands of a previous run never got a result; recorded them lost", "count", len(rec.Lost))
	}
	return l, nil
}
