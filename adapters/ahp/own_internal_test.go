package ahp

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/app/hub"
)

// TestOwnMessagesAreTakenAtTheirPlacesInOrder: two goroutines queue a
// connection's own messages at once (the read loop's answers, a timer's
// notification); each place in the hub's queue is matched by the next
// message, and each sender's messages come in the order it queued them.
func TestOwnMessagesAreTakenAtTheirPlacesInOrder(t *testing.T) {
	c := &conn{sub: hub.NewSubscriber("c", 0)}
	c.sub.SetWake(func() {})
	const each = 200
	var senders sync.WaitGroup
	for who := range 2 {
		senders.Go(func() {
			for i := range each {
				if !c.queue([2]int{who, i}) {
					t.Error("the queue ended")
					return
				}
			}
		})
	}
	senders.Wait()
	next := [2]int{}
	places := 0
	for _, ev := range c.sub.Take() {
		require.True(t, ev.Own)
		places++
		m := c.nextOwn().([2]int)
		require.Equal(t, next[m[0]], m[1], "sender %d's messages in order", m[0])
		next[m[0]]++
	}
	require.Equal(t, 2*each, places)
	require.Nil(t, c.nextOwn(), "a message for every place, and no more")

	// A message whose place the bound refuses is not kept.
	small := &conn{sub: hub.NewSubscriber("s", 1000)}
	small.sub.SetWake(func() {})
	require.False(t, small.queueSized("big", 2000))
	require.Nil(t, small.nextOwn())
}
