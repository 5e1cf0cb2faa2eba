package hub_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/domain/terminal"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// drain reads events until n have arrived.
func drain(t *testing.T, s *hub.Subscriber, n int) []hub.Event {
	var got []hub.Event
	for len(got) < n {
		batch, err := next(ctx(t), s)
		require.NoError(t, err)
		got = append(got, batch...)
	}
	return got
}

// subscribe joins s to an open channel the way the daemon does, inside an
// Update, and fails the test if the hub refuses.
func subscribe(t *testing.T, h *hub.Hub, s *hub.Subscriber, channel string) {
	t.Helper()
	var ok bool
	h.Update(func(tx hub.Tx) { ok = tx.Subscribe(s, channel) })
	require.True(t, ok, "subscribe to %s", channel)
}

// replay is what s missed on channels since seq, as a reconnecting client
// is given it, or false when the ring no longer reaches back that far.
func replay(h *hub.Hub, s *hub.Subscriber, seq uint64, channels ...string) ([]hub.Event, bool) {
	want := make(map[string]bool, len(channels))
	for _, c := range channels {
		want[c] = true
	}
	var events []hub.Event
	var ok bool
	h.Update(func(tx hub.Tx) { events, ok = tx.Resume(s, seq, want) })
	return events, ok
}

func TestSnapshotAndLiveStreamJoinWithNothingLostOrDoubled(t *testing.T) {
	h := hub.New(hub.Options{})
	state := terminal.New(terminal.Options{Title: "t"})
	h.Update(func(tx hub.Tx) { tx.Open("T") })

	const chunks = 2000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < chunks; i++ {
			h.Update(func(tx hub.Tx) {
				a := terminal.Data{Data: string(rune('a' + i%26))}
				state.Apply(a)
				tx.Publish("T", a, nil, "")
			})
		}
	}()
	// Subscribe while output is flowing: snapshot text + live text must be
	// exactly the whole stream.
	s := hub.NewSubscriber("c1", 0)
	var snap terminal.Snapshot
	var fromSeq uint64
	var ok bool
	h.Update(func(tx hub.Tx) {
		snap, ok, fromSeq = state.Snapshot(), tx.Subscribe(s, "T"), tx.Seq()
	})
	require.True(t, ok)
	wg.Wait()
	text := terminal.Text(snap.Content)
	seen := len(text)
	var live strings.Builder
	for _, ev := range drain(t, s, chunks-seen) {
		require.Greater(t, ev.Seq, fromSeq)
		live.WriteString(ev.Action.(terminal.Data).Data)
	}
	var want strings.Builder
	for i := 0; i < chunks; i++ {
		want.WriteRune(rune('a' + i%26))
	}
	require.Equal(t, want.String(), text+live.String())
	h.Remove(s)
}

func TestSlowSubscriberIsDroppedAndOthersKeepReceiving(t *testing.T) {
	h := hub.New(hub.Options{})
	h.Update(func(tx hub.Tx) { tx.Open("T") })
	slow := hub.NewSubscriber("slow", 4096)
	fast := hub.NewSubscriber("fast", 0)
	for _, s := range []*hub.Subscriber{slow, fast} {
		subscribe(t, h, s, "T")
	}
	chunk := strings.Repeat("x", 1000)
	for i := 0; i < 20; i++ {
		h.Update(func(tx hub.Tx) { tx.Publish("T", terminal.Data{Data: chunk}, nil, "") })
		got := drain(t, fast, 1)
		require.Len(t, got, 1)
	}
	<-slow.Done()
	var slowErr *hub.SlowError
	require.ErrorAs(t, slow.Err(), &slowErr)
	require.Contains(t, slow.Err().Error(), "reconnect")
	_, err := next(ctx(t), slow)
	require.ErrorAs(t, err, &slowErr)
	h.Remove(fast)
}

func TestRejectionTakesItsOwnSequenceNumberAndReachesItsSenderAlone(t *testing.T) {
	h := hub.New(hub.Options{})
	h.Update(func(tx hub.Tx) { tx.Open("T") })
	a, b := hub.NewSubscriber("a", 0), hub.NewSubscriber("b", 0)
	for _, s := range []*hub.Subscriber{a, b} {
		subscribe(t, h, s, "T")
	}
	var before, rejected, after uint64
	h.Update(func(tx hub.Tx) {
		before = tx.Publish("T", terminal.Data{Data: "x"}, nil, "")
		rejected = tx.Reject(a, "T", terminal.Input{Data: "ls"}, &hub.Origin{ClientID: "a", ClientSeq: 1}, "no")
		require.Equal(t, rejected, tx.Seq())
		after = tx.Publish("T", terminal.Data{Data: "y"}, nil, "")
	})
	require.Equal(t, []uint64{before + 1, before + 2}, []uint64{rejected, after}, "one number each, in order")
	got := drain(t, a, 3)
	require.Equal(t, "no", got[1].Rejection)
	require.Equal(t, rejected, got[1].Seq)
	require.Len(t, drain(t, b, 2), 2, "b sees the output, not a's rejection")

	events, ok := replay(h, a, before, "T")
	require.True(t, ok)
	require.Len(t, events, 2, "a is replayed its own rejection")
	require.Equal(t, "no", events[0].Rejection)
	events, ok = replay(h, b, before, "T")
	require.True(t, ok)
	require.Len(t, events, 1, "b is never replayed a's rejection")
}

func TestRepeatEchoIsNumberedAndCarriesNoReason(t *testing.T) {
	h := hub.New(hub.Options{})
	h.Update(func(tx hub.Tx) { tx.Open("T") })
	a := hub.NewSubscriber("a", 0)
	var seq uint64
	h.Update(func(tx hub.Tx) {
		seq = tx.Echo(a, "T", terminal.Input{Data: "ls"}, &hub.Origin{ClientID: "a", ClientSeq: 4}, "")
	})
	got := drain(t, a, 1)
	require.Equal(t, seq, got[0].Seq)
	require.Empty(t, got[0].Rejection)
	require.Equal(t, int64(4), got[0].Origin.ClientSeq)
	h.Remove(a)
}

func TestAudienceLimitsDeliveryAndReplay(t *testing.T) {
	h := hub.New(hub.Options{})
	h.Update(func(tx hub.Tx) { tx.Open("T") })
	a, b := hub.NewSubscriber("a", 0), hub.NewSubscriber("b", 0)
	for _, s := range []*hub.Subscriber{a, b} {
		subscribe(t, h, s, "T")
	}
	h.Update(func(tx hub.Tx) {
		tx.Publish("T", terminal.Input{Data: "secret"}, &hub.Origin{ClientID: "a", ClientSeq: 1}, "a")
		tx.Publish("T", terminal.Data{Data: "out"}, nil, "")
	})
	require.Len(t, drain(t, a, 2), 2)
	got := drain(t, b, 1)
	require.Equal(t, terminal.Data{Data: "out"}, got[0].Action)
	evB, ok := replay(h, b, 0, "T")
	require.True(t, ok)
	require.Len(t, evB, 1)
	h.Remove(a)
	h.Remove(b)
}

func TestResumeReplaysFromTheRingOrReportsTheGap(t *testing.T) {
	h := hub.New(hub.Options{ReplayEvents: 3})
	h.Update(func(tx hub.Tx) {
		tx.Open("T")
		tx.Open("U")
		for i := 0; i < 5; i++ {
			tx.Publish("T", terminal.Data{Data: "x"}, nil, "")
		}
		tx.Close("U")
	})
	s := hub.NewSubscriber("c", 0)
	_, ok := replay(h, s, 1, "T")
	require.False(t, ok, "events 2 and 3 are gone")

	// Replay and rejoin in one step, as the daemon does; U has closed, so
	// it cannot be rejoined.
	var events []hub.Event
	joined := map[string]bool{}
	h.Update(func(tx hub.Tx) {
		events, ok = tx.Resume(s, 3, map[string]bool{"T": true, "U": true})
		for _, c := range []string{"T", "U"} {
			joined[c] = tx.Subscribe(s, c)
		}
	})
	require.True(t, ok)
	require.Equal(t, map[string]bool{"T": true, "U": false}, joined, "U is missing")
	require.Len(t, events, 2)
	require.Equal(t, uint64(4), events[0].Seq)

	h.Update(func(tx hub.Tx) { tx.Publish("T", terminal.Data{Data: "live"}, nil, "") })
	got := drain(t, s, 1)
	require.Equal(t, uint64(6), got[0].Seq)
	h.Remove(s)
}

func TestSubscribeToAMissingChannelFails(t *testing.T) {
	h := hub.New(hub.Options{})
	var ok bool
	h.Update(func(tx hub.Tx) { ok = tx.Subscribe(hub.NewSubscriber("c", 0), "nope") })
	require.False(t, ok)
}

func TestNextReturnsWhenContextEnds(t *testing.T) {
	s := hub.NewSubscriber("c", 0)
	c, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := next(c, s)
	require.ErrorIs(t, err, context.Canceled)
}

type heavy struct{ size int }

func (heavy) Type() string           { return "root/terminalsChanged" }
func (h heavy) EncodedSizeHint() int { return h.size }

func TestReplayRingCountsWhatEventsWeigh(t *testing.T) {
	h := hub.New(hub.Options{ReplayEvents: 1000, ReplayBytes: 10_000})
	h.Update(func(tx hub.Tx) {
		tx.Open("R")
		for i := 0; i < 10; i++ {
			tx.Publish("R", heavy{size: 3000}, nil, "")
		}
	})
	s := hub.NewSubscriber("c", 0)
	_, ok := replay(h, s, 2, "R")
	require.False(t, ok, "heavy events push old ones out of the byte bound")
	events, ok := replay(h, s, 8, "R")
	require.True(t, ok)
	require.Len(t, events, 2)
}

type fullList struct{ n int }

func (fullList) Type() string            { return "root/terminalsChanged" }
func (fullList) SupersedesEarlier() bool { return true }
func (l fullList) EncodedSizeHint() int  { return 1000 * l.n }

func TestReplayKeepsOnlyTheNewestOfAFullList(t *testing.T) {
	h := hub.New(hub.Options{ReplayBytes: 20_000})
	h.Update(func(tx hub.Tx) {
		tx.Open("R")
		tx.Open("T")
		for i := 1; i <= 15; i++ {
			tx.Publish("R", fullList{n: i}, nil, "")
			tx.Publish("T", terminal.Data{Data: "x"}, nil, "")
		}
	})
	events, ok := replay(h, hub.NewSubscriber("c", 0), 0, "R", "T")
	require.True(t, ok, "superseded lists no longer crowd the ring")
	var lists []hub.Event
	for _, ev := range events {
		if _, isList := ev.Action.(fullList); isList {
			lists = append(lists, ev)
		}
	}
	require.Len(t, lists, 1)
	require.Equal(t, fullList{n: 15}, lists[0].Action)
	require.Len(t, events, 16, "every data event, and the newest list")
}

// TestReplayRingKeepsTheNewestInOrderLapAfterLap runs the ring round many
// times, with superseding lists among the data, and checks after each
// publish that a replay from just before the oldest kept event gives the
// newest events in order.
func TestReplayRingKeepsTheNewestInOrderLapAfterLap(t *testing.T) {
	const keep = 7
	h := hub.New(hub.Options{ReplayEvents: keep})
	h.Update(func(tx hub.Tx) { tx.Open("R") })
	s := hub.NewSubscriber("c", 0)
	var seqs []uint64
	for i := 1; i <= 50; i++ {
		h.Update(func(tx hub.Tx) {
			if i%5 == 0 {
				seqs = append(seqs, tx.Publish("R", fullList{n: i}, nil, ""))
			} else {
				seqs = append(seqs, tx.Publish("R", terminal.Data{Data: fmt.Sprint(i)}, nil, ""))
			}
		})
		kept := seqs[max(0, len(seqs)-keep):]
		from := kept[0] - 1
		events, ok := replay(h, s, from, "R")
		require.True(t, ok, "after %d publishes", i)
		var want []uint64
		newestList := uint64(0)
		for j, seq := range seqs {
			if (j+1)%5 == 0 {
				newestList = seq
			}
		}
		for j, seq := range kept {
			n := len(seqs) - len(kept) + j + 1
			if n%5 == 0 && seq != newestList {
				continue // superseded by the newer list
			}
			want = append(want, seq)
		}
		var got []uint64
		for _, ev := range events {
			got = append(got, ev.Seq)
		}
		require.Equal(t, want, got, "after %d publishes", i)
		if from > 0 {
			_, ok = replay(h, s, from-1, "R")
			require.False(t, ok, "after %d publishes, the event before the kept ones is gone", i)
		}
	}
	h.Remove(s)
}

// A closed channel's events can never be replayed (Resume takes only open
// channels), so the ring lets go of them: they no longer push other
// channels' events out, and a channel opened again under the same name is
// not replayed the old one's.
func TestClosingAChannelLetsTheRingGoOfItsEvents(t *testing.T) {
	h := hub.New(hub.Options{ReplayBytes: 2000}) // each event costs 160 bytes besides its data
	var before, first uint64
	h.Update(func(tx hub.Tx) {
		tx.Open("T")
		tx.Open("A")
		before = tx.Seq()
		first = tx.Publish("T", terminal.Data{Data: "x"}, nil, "")
		tx.Publish("A", terminal.Data{Data: strings.Repeat("a", 1000)}, nil, "")
		tx.Close("A")
		tx.Publish("T", terminal.Data{Data: strings.Repeat("t", 800)}, nil, "")
	})
	s := hub.NewSubscriber("c", 0)
	events, ok := replay(h, s, before, "T")
	require.True(t, ok, "T's first event was pushed out by a closed channel's")
	require.Len(t, events, 2)
	require.Equal(t, first, events[0].Seq)

	h.Update(func(tx hub.Tx) { tx.Open("A") })
	events, ok = replay(h, s, before, "A")
	require.True(t, ok)
	require.Empty(t, events, "the new A was replayed the closed one's output")
}
