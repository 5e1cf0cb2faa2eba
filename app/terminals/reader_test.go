package terminals_test

import "github.com/shellgate/shellgate/app/hub/hubtest"

// next drains a subscriber as a connection's writer does.
var next = hubtest.Next
