package hub

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// woken reports whether a goroutine waiting in Next would be woken now.
func woken(s *Subscriber) bool { return len(s.wake) > 0 }

func TestHeldPushesWakeNobodyAndTakeHeldSendsThemInOrder(t *testing.T) {
	s := NewSubscriber("c", 0)
	s.Hold()
	require.True(t, s.Reply("a"))
	require.True(t, s.Reply("b"))
	require.False(t, woken(s), "the consumer holding the queue sends it itself")

	batch := s.TakeHeld()
	require.Len(t, batch, 2)
	require.Equal(t, "a", batch[0].Reply)
	require.Equal(t, "b", batch[1].Reply)

	require.True(t, s.Reply("c"))
	require.True(t, woken(s), "after TakeHeld, pushes wake Next again")
}

func TestReleaseWakesNextForWhatWasQueuedWhileHeld(t *testing.T) {
	s := NewSubscriber("c", 0)
	s.Hold()
	s.Release()
	require.False(t, woken(s), "nothing queued, nobody to wake")

	s.Hold()
	require.True(t, s.Reply("a"))
	s.Release()
	require.True(t, woken(s))
	batch, err := s.Next(context.Background())
	require.NoError(t, err)
	require.Len(t, batch, 1)
}

func TestWaitLeavesTheQueueAndTakeEmptiesIt(t *testing.T) {
	s := NewSubscriber("c", 0)
	require.True(t, s.Reply("a"))
	require.NoError(t, s.Wait(context.Background()))
	require.NoError(t, s.Wait(context.Background()), "Wait takes nothing")
	require.Len(t, s.Take(), 1)
	require.Empty(t, s.Take())

	s.end(ErrUnsubscribed)
	require.ErrorIs(t, s.Wait(context.Background()), ErrUnsubscribed)
	require.Nil(t, s.TakeHeld(), "an ended subscriber has nothing to send")
}

func TestReplySizeCountsAgainstTheBound(t *testing.T) {
	s := NewSubscriber("c", 1000)
	require.True(t, s.ReplySized("small", 100))
	require.False(t, s.ReplySized("big", 2000), "an answer larger than the bound ends the subscriber")
	var slow *SlowError
	require.ErrorAs(t, s.Err(), &slow)
}
