package hub

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// wakes counts the calls of a subscriber's wake function.
func wakes(s *Subscriber) *int {
	n := new(int)
	s.SetWake(func() { *n++ })
	return n
}

func TestHeldPushesWakeNobodyAndTakeHeldSendsThemInOrder(t *testing.T) {
	s := NewSubscriber("c", 0)
	woken := wakes(s)
	s.Hold()
	require.True(t, s.QueueOwn(0))
	require.True(t, s.QueueOwn(0))
	require.Zero(t, *woken, "the consumer holding the queue sends it itself")

	batch := s.TakeHeld()
	require.Len(t, batch, 2)
	require.True(t, batch[0].Own)
	require.True(t, batch[1].Own)

	require.True(t, s.QueueOwn(0))
	require.Equal(t, 1, *woken, "after TakeHeld, pushes wake the consumer again")
}

func TestReleaseWakesTheConsumerForWhatWasQueuedWhileHeld(t *testing.T) {
	s := NewSubscriber("c", 0)
	woken := wakes(s)
	s.Hold()
	s.Release()
	require.Zero(t, *woken, "nothing queued, nobody to wake")

	s.Hold()
	require.True(t, s.QueueOwn(0))
	s.Release()
	require.Equal(t, 1, *woken)
	require.Len(t, s.Take(), 1)
}

func TestTakeEmptiesTheQueueAndAnEndedSubscriberHasNothing(t *testing.T) {
	s := NewSubscriber("c", 0)
	wakes(s)
	require.True(t, s.QueueOwn(0))
	require.True(t, s.Queued())
	require.True(t, s.Queued(), "asking takes nothing")
	require.Len(t, s.Take(), 1)
	require.Empty(t, s.Take())

	s.end(ErrUnsubscribed)
	require.ErrorIs(t, s.Err(), ErrUnsubscribed)
	require.Nil(t, s.TakeHeld(), "an ended subscriber has nothing to send")
}

func TestReplySizeCountsAgainstTheBound(t *testing.T) {
	s := NewSubscriber("c", 1000)
	require.True(t, s.QueueOwn(100))
	require.False(t, s.QueueOwn(2000), "an answer larger than the bound ends the subscriber")
	var slow *SlowError
	require.ErrorAs(t, s.Err(), &slow)
}
