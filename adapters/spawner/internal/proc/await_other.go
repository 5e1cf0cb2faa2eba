//go:build !linux

package proc

// Without epoll a quiet reader keeps its goroutine: ReadLentQuiet never
// gives up.
const canWatch = false

type outputWatch struct{}

var watch outputWatch

func (*outputWatch) add(int32, func()) bool { return false }

func (*outputWatch) cancel(int32) func() { return nil }
