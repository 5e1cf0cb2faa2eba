package risk

import (
	"testing"

	"go.uber.org/goleak"
)

// Classify must not leave goroutines behind; goleak checks after every test.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
