package terminals_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/app/hub"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/terminal"
)

func TestResumeReplaysWhatWasMissedNamesWhatIsGoneAndRejoins(t *testing.T) {
	f := newHost(t, terminals.Config{}, nil)
	kept := f.create(terminals.Spec{Command: "read x"})
	gone := f.create(terminals.Spec{Command: "read x"})
	var lastSeen uint64
	f.hub.Update(func(tx hub.Tx) { lastSeen = tx.Seq() })
	require.NoError(t, f.host.Dispose(gone.URI()))
	require.NoError(t, f.host.Apply(terminals.Dispatch{URI: kept.URI(), Action: terminal.TitleChanged{Title: "renamed"}}))

	s := hub.NewSubscriber("c", 0)
	defer f.hub.Remove(s)
	uris := []string{terminals.RootChannel, kept.URI(), gone.URI()}
	var res terminals.ResumeResult
	f.host.Resume(s, lastSeen, uris, func(r terminals.ResumeResult) { res = r })
	require.True(t, res.Replay)
	require.Equal(t, []string{gone.URI()}, res.Missing)
	require.Empty(t, res.Snapshots)
	var titles []terminal.Action
	for _, ev := range res.Events {
		require.Greater(t, ev.Seq, lastSeen)
		require.NotEqual(t, gone.URI(), ev.Channel)
		if ev.Channel == kept.URI() {
			titles = append(titles, ev.Action)
		}
	}
	require.Equal(t, []terminal.Action{terminal.TitleChanged{Title: "renamed"}}, titles)

	require.NoError(t, f.host.Apply(terminals.Dispatch{URI: kept.URI(), Action: terminal.TitleChanged{Title: "live"}}))
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	batch, err := next(ctx, s)
	require.NoError(t, err)
	require.Equal(t, terminal.TitleChanged{Title: "live"}, batch[0].Action, "resuming rejoins the channel")

	// A client that claims to have seen more than was ever sent gets fresh
	// state instead of a replay.
	late := hub.NewSubscriber("late", 0)
	defer f.hub.Remove(late)
	f.host.Resume(late, res.Seq+1000, uris, func(r terminals.ResumeResult) { res = r })
	require.False(t, res.Replay)
	require.Equal(t, []string{gone.URI()}, res.Missing)
	require.Len(t, res.Snapshots, 2)
	require.True(t, res.Snapshots[0].IsRoot())
	require.Len(t, res.Snapshots[0].Root, 1)
	require.Equal(t, "live", res.Snapshots[1].Terminal.Title)
}
