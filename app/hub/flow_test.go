package hub_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/domain/terminal"
)

// flowHub is a hub with small marks: a subscriber is over at 1000 bytes
// held and back under at 200.
func flowHub(total int64) *hub.Hub {
	h := hub.New(hub.Options{HighWater: 1000, LowWater: 200, MaxClientBytes: total})
	h.Update(func(tx hub.Tx) { tx.Open("T") })
	return h
}

func publish(h *hub.Hub, channel string, n int) {
	h.Update(func(tx hub.Tx) { tx.Publish(channel, terminal.Data{Data: strings.Repeat("x", n)}, nil, "") })
}

// awaited reports whether AwaitFlow would return now (it is given a context
// that has already ended, so it cannot wait).
func awaited(h *hub.Hub, channel string) bool {
	c, cancel := context.WithCancel(context.Background())
	cancel()
	return h.AwaitFlow(c, channel) == nil
}

func TestChannelPausesOnlyWhileEverySubscriberIsPastTheHighWaterMark(t *testing.T) {
	h := flowHub(-1)
	a, b := hub.NewSubscriber("a", 0), hub.NewSubscriber("b", 0)
	subscribe(t, h, a, "T")
	subscribe(t, h, b, "T")

	publish(h, "T", 900) // 900 + the envelope's allowance: both over
	require.True(t, h.Paused("T"))
	require.False(t, awaited(h, "T"), "the producer waits")

	batch := a.Take()
	require.Len(t, batch, 1)
	require.True(t, h.Paused("T"), "what a took is still being written: it still counts")
	a.Settle()
	require.False(t, h.Paused("T"), "one subscriber that caught up is enough")
	require.True(t, awaited(h, "T"))
	require.NoError(t, a.Err())
	require.NoError(t, b.Err(), "the one behind is not dropped for being behind the pace")
	h.Remove(a)
	require.True(t, h.Paused("T"), "b alone is still past the mark")
	h.Remove(b)
	require.False(t, h.Paused("T"))
}

func TestPausedChannelResumesOnlyUnderTheLowWaterMark(t *testing.T) {
	h := flowHub(-1)
	s := hub.NewSubscriber("s", 0)
	subscribe(t, h, s, "T")
	publish(h, "T", 900)
	require.True(t, h.Paused("T"))

	_ = s.Take()
	publish(h, "T", 200) // taken or not, 360 bytes are still held
	s.Settle()
	require.EqualValues(t, 360, h.Held(), "s is the hub's only subscriber")
	require.True(t, h.Paused("T"), "above the low-water mark: still paused")
	_ = s.Take()
	s.Settle()
	require.Zero(t, h.Held())
	require.False(t, h.Paused("T"))
}

func TestAwaitFlowWakesWhenTheSubscriberCatchesUpLeavesAViewerJoinsOrTheChannelCloses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		leave func(h *hub.Hub, s *hub.Subscriber)
	}{
		{"catches up", func(_ *hub.Hub, s *hub.Subscriber) { _ = s.Take(); s.Settle() }},
		{"unsubscribes", func(h *hub.Hub, s *hub.Subscriber) { h.Unsubscribe(s, "T") }},
		{"is removed", func(h *hub.Hub, s *hub.Subscriber) { h.Remove(s) }},
		{"channel closes", func(h *hub.Hub, _ *hub.Subscriber) { h.Update(func(tx hub.Tx) { tx.Close("T") }) }},
		{"flow stops", func(h *hub.Hub, _ *hub.Subscriber) { h.StopFlow() }},
		{"a viewer joins", func(h *hub.Hub, _ *hub.Subscriber) {
			joined := hub.NewSubscriber("j", 0)
			h.Update(func(tx hub.Tx) { tx.Subscribe(joined, "T") })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := flowHub(-1)
			s := hub.NewSubscriber("s", 0)
			subscribe(t, h, s, "T")
			publish(h, "T", 900)
			waited := make(chan error, 1)
			go func() { waited <- h.AwaitFlow(ctx(t), "T") }()
			// Pauses counts the wait once AwaitFlow has taken the channel
			// that wakes it: from then on, only a wake lets it go.
			require.Eventually(t, func() bool { return h.Pauses() == 1 }, 10*time.Second, time.Millisecond)
			tc.leave(h, s)
			require.NoError(t, <-waited)
			h.Remove(s)
		})
	}
}

func TestChannelWithoutSubscribersNeverPauses(t *testing.T) {
	h := flowHub(-1)
	for range 10 {
		publish(h, "T", 5000)
	}
	require.False(t, h.Paused("T"))
	require.True(t, awaited(h, "T"))
}

func TestSubscriberAWholeBoundBehindTheOthersIsTheOnlyOneDropped(t *testing.T) {
	h := flowHub(-1)
	stalled, reading := subscribedToT(t, h, "stalled", 4000), subscribedToT(t, h, "reading", 4000)
	publishWhileReading(t, h, reading, 10)
	var slow *hub.SlowError
	require.ErrorAs(t, stalled.Err(), &slow)
	require.False(t, slow.Total)
	require.NoError(t, reading.Err())
	h.Remove(reading)
}

// subscribedToT is a new subscriber with the given bound, subscribed to T.
func subscribedToT(t *testing.T, h *hub.Hub, id string, limit int) *hub.Subscriber {
	t.Helper()
	s := hub.NewSubscriber(id, limit)
	subscribe(t, h, s, "T")
	return s
}

// publishWhileReading publishes n events of 760 bytes on T, each taken and
// written by reading before the next.
func publishWhileReading(t *testing.T, h *hub.Hub, reading *hub.Subscriber, n int) {
	t.Helper()
	for range n {
		require.True(t, awaited(h, "T"), "the reading subscriber keeps the channel going")
		publish(h, "T", 600)
		_, err := next(ctx(t), reading)
		require.NoError(t, err)
		reading.Settle() // written
	}
}

func TestTotalCapShedsTheSubscriberHoldingMostFirst(t *testing.T) {
	h := flowHub(3000)
	h.Update(func(tx hub.Tx) { tx.Open("U") })
	most, less := h.NewSubscriber("most", 0), h.NewSubscriber("less", 0)
	subscribe(t, h, most, "T")
	subscribe(t, h, less, "U")
	publish(h, "T", 1800)
	publish(h, "U", 500)
	require.NoError(t, most.Err())
	require.Equal(t, int64(1960+660), h.Held())

	publish(h, "U", 500) // 3280 held in all: past the cap
	var slow *hub.SlowError
	require.ErrorAs(t, most.Err(), &slow)
	require.True(t, slow.Total)
	require.Contains(t, slow.Error(), "furthest behind")
	require.NoError(t, less.Err())
	require.Equal(t, int64(2*660), h.Held(), "what the shed one held is no longer counted")
	h.Remove(most)
	h.Remove(less)
	require.Zero(t, h.Held())
}

func TestOneEventReachesEverySubscriberWithOneSharedEncoding(t *testing.T) {
	h := flowHub(-1)
	a, b := hub.NewSubscriber("a", 0), hub.NewSubscriber("b", 0)
	subscribe(t, h, a, "T")
	subscribe(t, h, b, "T")
	publish(h, "T", 10)
	ea, eb := drain(t, a, 1)[0], drain(t, b, 1)[0]
	require.NotNil(t, ea.Encoded)
	require.Same(t, ea.Encoded, eb.Encoded)
	calls := 0
	encode := func() ([]byte, error) { calls++; return []byte("enc"), nil }
	got, err := ea.Encoded.Get(encode)
	require.NoError(t, err)
	again, err := eb.Encoded.Get(encode)
	require.NoError(t, err)
	require.Equal(t, "enc", string(got))
	require.Equal(t, "enc", string(again))
	require.Equal(t, 1, calls, "encoded once for both")

	events, ok := replay(h, a, 0, "T")
	require.True(t, ok)
	require.Nil(t, events[0].Encoded, "the replay ring keeps no encoding alive")
	h.Remove(a)
	h.Remove(b)
}

func TestLoneIdleSubscriberIsHandedItsEventOnThePublishersGoroutine(t *testing.T) {
	for _, tc := range []struct {
		name   string
		others int  // other subscribers on the channel
		busy   bool // something is already held for it
		direct bool
	}{
		{"alone and idle", 0, false, true},
		{"with another viewer", 1, false, false},
		{"with a backlog", 0, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := flowHub(-1)
			s := hub.NewSubscriber("s", 0)
			var handed []hub.Event
			s.SetDirect(func() { handed = append(handed, s.TakeDirect()...) })
			subscribe(t, h, s, "T")
			for i := range tc.others {
				o := hub.NewSubscriber(fmt.Sprint("o", i), 0)
				subscribe(t, h, o, "T")
				defer h.Remove(o)
			}
			if tc.busy {
				publish(h, "T", 10)
				handed = nil
			}
			publish(h, "T", 10)
			if tc.direct {
				require.Len(t, handed, 1, "sent by the publisher, after the hub's lock")
				require.Empty(t, s.Take(), "nothing left for the consumer's goroutine")
			} else {
				require.Empty(t, handed)
				require.NotEmpty(t, s.Take(), "left for the consumer")
			}
			h.Remove(s)
		})
	}
}

func TestDirectSenderThatFindsTheConsumerBusyLeavesTheEventToIt(t *testing.T) {
	h := flowHub(-1)
	s := hub.NewSubscriber("s", 0)
	s.SetDirect(func() { s.ReleaseDirect() })
	subscribe(t, h, s, "T")
	publish(h, "T", 10)
	batch, err := next(ctx(t), s)
	require.NoError(t, err, "the consumer was woken for it")
	require.Len(t, batch, 1)
	h.Remove(s)
}

func TestSubscriberThatReadsOnIsGivenSlackAndOneThatStoppedIsNot(t *testing.T) {
	h := flowHub(-1)
	reading := hub.NewSubscriber("reading", 4000)
	stalled := hub.NewSubscriber("stalled", 4000)
	fastest := hub.NewSubscriber("fastest", 0)
	for _, s := range []*hub.Subscriber{reading, stalled, fastest} {
		subscribe(t, h, s, "T")
	}
	for range 12 { // 12 × 760 bytes: over two bounds
		publish(h, "T", 600)
		_, err := next(ctx(t), fastest)
		require.NoError(t, err)
		fastest.Settle()
		reading.Progress() // one more message of what it holds went out
	}
	var slow *hub.SlowError
	require.ErrorAs(t, stalled.Err(), &slow, "wrote nothing while a whole bound arrived")
	require.NoError(t, reading.Err(), "more than a bound behind, but reading")
	require.Greater(t, h.Held(), int64(4000), "all of it reading's: fastest settled, stalled was dropped")
	for range 20 {
		publish(h, "T", 600)
		reading.Progress()
	}
	require.ErrorAs(t, reading.Err(), &slow, "past ReadingSlack bounds even a reader is dropped")
	h.Remove(fastest)
}

// TestOutputArrivingWhileASnapshotIsWrittenIsNoStall: a subscriber writing
// a large answer (a snapshot of most of its bound) is not dropped for the
// output that arrives meanwhile, only once a whole bound more has arrived
// while it wrote nothing.
func TestOutputArrivingWhileASnapshotIsWrittenIsNoStall(t *testing.T) {
	h := flowHub(-1)
	viewer, fastest := subscribedToT(t, h, "viewer", 4000), subscribedToT(t, h, "fastest", 0)
	require.True(t, viewer.QueueOwn(3000), "most of the bound, in one answer")
	require.Len(t, viewer.Take(), 1, "and being written")
	publishWhileReading(t, h, fastest, 5) // 3800 bytes: under a bound since it was taken
	require.NoError(t, viewer.Err(), "output that arrived while the snapshot was written is no stall")
	publish(h, "T", 600) // a whole bound since: it wrote nothing all that while
	var slow *hub.SlowError
	require.ErrorAs(t, viewer.Err(), &slow)
	require.False(t, slow.Total)
	h.Remove(fastest)
}

func TestTotalCapShedsOneThatStoppedReadingBeforeAReaderHoldingMore(t *testing.T) {
	h := flowHub(3000)
	h.Update(func(tx hub.Tx) { tx.Open("U") })
	reader, stopped := h.NewSubscriber("reader", 0), h.NewSubscriber("stopped", 0)
	subscribe(t, h, reader, "T")
	subscribe(t, h, stopped, "U")
	publish(h, "U", 900) // 1060 held, over the mark from here on
	publish(h, "T", 500) // 660 held, under the mark
	reader.Take()        // it writes a large message of what it holds
	publish(h, "T", 900) // 1720 held: 2780 in all
	reader.Progress()    // a part of it went out
	publish(h, "U", 300) // past the cap
	var slow *hub.SlowError
	require.ErrorAs(t, stopped.Err(), &slow)
	require.True(t, slow.Total)
	require.NoError(t, reader.Err(), "the reader holds more, but it reads")
	h.Remove(reader)
	h.Remove(stopped)
}

// TestADeferredEchoLeavesWithTheNextEventOrAtFlush: what the consumer
// deferred (a keystroke's echo) wakes nobody; the next event carries it
// along, to the direct sender of a lone idle viewer or to the consumer;
// with no next event, Flush hands it to the consumer.
func TestADeferredEchoLeavesWithTheNextEventOrAtFlush(t *testing.T) {
	t.Run("the output carries it to the direct sender", func(t *testing.T) {
		h := flowHub(-1)
		s := hub.NewSubscriber("s", 0)
		var handed []hub.Event
		s.SetDirect(func() { handed = append(handed, s.TakeDirect()...) })
		subscribe(t, h, s, "T")
		s.Hold()
		require.True(t, s.QueueOwn(0))
		s.ReleaseDeferred()
		require.Empty(t, handed)
		publish(h, "T", 10)
		require.Len(t, handed, 2, "the echo and the output, in one hand-over")
		require.True(t, handed[0].Own, "the echo first")
		require.Empty(t, s.Take())
		h.Remove(s)
	})
	t.Run("the output wakes the consumer for both", func(t *testing.T) {
		h := flowHub(-1)
		s := hub.NewSubscriber("s", 0)
		woken := 0
		s.SetWake(func() { woken++ })
		subscribe(t, h, s, "T")
		other := hub.NewSubscriber("o", 0)
		subscribe(t, h, other, "T") // two viewers: no direct hand-over
		s.Hold()
		require.True(t, s.QueueOwn(0))
		s.ReleaseDeferred()
		require.Zero(t, woken, "a deferred echo wakes nobody")
		publish(h, "T", 10)
		require.Equal(t, 1, woken)
		require.Len(t, s.Take(), 2)
		h.Remove(s)
		h.Remove(other)
	})
	t.Run("with no output, Flush sends it", func(t *testing.T) {
		s := hub.NewSubscriber("s", 0)
		woken := 0
		s.SetWake(func() { woken++ })
		s.Hold()
		require.True(t, s.QueueOwn(0))
		s.ReleaseDeferred()
		require.Zero(t, woken)
		s.Flush()
		require.Equal(t, 1, woken)
		require.Len(t, s.Take(), 1)
		s.Flush()
		require.Equal(t, 1, woken, "a second Flush finds nothing deferred")
	})
}

// TestTotalCapShedsTheOneThatStoppedEvenIfItWroteMoreRecentlyThanAReader:
// a viewer that stopped reading can have written more recently than a
// reader busy with one large message (its socket's buffer took what it was
// given for a while); it has stayed over the high-water mark since, while
// the reader came back under it, so the stopped ones go first.
func TestTotalCapShedsTheOneThatStoppedEvenIfItWroteMoreRecentlyThanAReader(t *testing.T) {
	h := flowHub(7000)
	reader := h.NewSubscriber("reader", 0)
	stopped := []*hub.Subscriber{h.NewSubscriber("s1", 0), h.NewSubscriber("s2", 0)}
	for _, s := range append([]*hub.Subscriber{reader}, stopped...) {
		subscribe(t, h, s, "T")
	}
	publish(h, "T", 900) // 1060 each: all over the mark
	reader.Take()
	reader.Settle() // back under the low mark: the terminal reads on
	publish(h, "T", 900)
	for _, s := range stopped {
		s.Take()
		s.Progress() // their sockets still take a message
	}
	reader.Take()        // a large message, still being written
	publish(h, "T", 900) // 2120 for the reader, 3180 for each stopped one: past the cap
	shed := 0
	for _, s := range stopped {
		var slow *hub.SlowError
		if errors.As(s.Err(), &slow) && slow.Total {
			shed++
		}
	}
	require.Equal(t, 1, shed, "one of those over the mark since the start, which is enough")
	require.NoError(t, reader.Err(), "it came back under the mark since: it reads")
	h.Remove(reader)
	for _, s := range stopped {
		h.Remove(s)
	}
}
