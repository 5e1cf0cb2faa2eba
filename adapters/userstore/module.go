package userstore

import (
	"go.uber.org/fx"

	"github.com/shellgate/shellgate/ports"
)

// Path is the users file, as the graph supplies it.
type Path string

// Module provides the *Store of the users file at the graph's Path, also
// as the ports.UserStore; it stops watching the file at stop.
var Module = fx.Module("userstore",
	fx.Provide(
		func(lc fx.Lifecycle, path Path) (*Store, error) {
			s, err := Open(string(path))
			if err != nil {
				return nil, err
			}
			lc.Append(fx.StopHook(s.Close))
			return s, nil
		},
		func(s *Store) ports.UserStore { return s },
	),
)
