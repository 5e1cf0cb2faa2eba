package httpserver

import (
	"log/slog"
	"net/http"

	"go.uber.org/fx"
)

// Module provides the *Server over the graph's http.Handler with the
// graph's Options; it binds at start and drains at stop. A stop hook that
// must run before the drain (closing long requests) depends on *Server,
// so that it registers after this one.
var Module = fx.Module("http",
	fx.Provide(func(lc fx.Lifecycle, opts Options, h http.Handler, log *slog.Logger) *Server {
		s := New(opts, h, log)
		lc.Append(fx.StartStopHook(s.Start, s.Stop))
		return s
	}),
)
