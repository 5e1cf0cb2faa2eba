package clock

import (
	"go.uber.org/fx"

	"github.com/shellgate/shellgate/ports"
)

// Module provides the system clock as the ports.Clock.
var Module = fx.Module("clock", fx.Provide(fx.Annotate(System, fx.As(new(ports.Clock)))))
