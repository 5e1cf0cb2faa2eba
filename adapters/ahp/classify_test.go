package ahp_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/ahp"
	"github.com/shellgate/shellgate/app/gate"
)

// TestEveryServedMethodAndActionIsClassified fails when the router serves a
// method or an action type the gate has not classified.
func TestEveryServedMethodAndActionIsClassified(t *testing.T) {
	for _, m := range ahp.Methods() {
		require.True(t, gate.Classified(m), "the router serves %s but the gate has not classified it", m)
	}
	for _, a := range ahp.DispatchableActions() {
		require.True(t, gate.ClassifiedAction(a), "the router applies %s but the gate has not classified it", a)
	}
}
