package terminals_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/fdlimit"
	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/terminal"
)

// TestPersonAtMaxPerOwnerIsRefusedUntilOneIsDisposed: the cap counts the
// terminals one owner holds, exited ones too, and nobody else's.
func TestPersonAtMaxPerOwnerIsRefusedUntilOneIsDisposed(t *testing.T) {
	f := newHost(t, terminals.Config{MaxPerOwner: 2}, nil)
	first := f.create(terminals.Spec{Owner: "sam", Command: "true"})
	<-first.Done()
	f.create(terminals.Spec{Owner: "sam", Command: "read x"})

	_, err := f.host.Create(context.Background(), terminals.Spec{URI: "ahp-terminal:/third", Owner: "sam", Claim: terminal.ClientHolds("x")})
	require.ErrorIs(t, err, terminals.ErrTooManyTerminals)
	require.Equal(t, "sam already holds 2 terminals, this host's max_terminals_per_person; dispose of one (disposeTerminal) and try again", err.Error())
	_, err = f.host.Get("ahp-terminal:/third")
	require.ErrorIs(t, err, terminals.ErrNotFound, "nothing was opened")

	f.create(terminals.Spec{Owner: "ana", Command: "read x"}) // another person is not held back
	f.create(terminals.Spec{Command: "read x"})               // nor a terminal that counts against nobody
	// An admin is not capped.
	f.create(terminals.Spec{Owner: "root", Reserve: true, Command: "read x"})
	f.create(terminals.Spec{Owner: "root", Reserve: true, Command: "read x"})
	f.create(terminals.Spec{Owner: "root", Reserve: true, Command: "read x"})

	require.NoError(t, f.host.Dispose(first.URI()))
	f.create(terminals.Spec{Owner: "sam", Command: "read x"})
}

// fakeDescriptors reports a fixed number of free descriptors.
type fakeDescriptors struct{ free, limit int }

func (d fakeDescriptors) Free() (int, int, error) { return d.free, d.limit, nil }

// TestLastOpenFilesAreKeptForAdmins: near the open-file limit a start is
// refused with a reason, except an admin's while the reserve lasts.
func TestLastOpenFilesAreKeptForAdmins(t *testing.T) {
	cases := []struct {
		name    string
		free    int
		reserve bool
		refused string // "" when it starts
	}{
		{"plenty for anyone", 1000, false, ""},
		{"within the reserve, not an admin", 30, false, "the daemon has 30 of its 1024 open files left, and keeps the last 32 for admins; dispose of terminals you no longer need, or ask an admin to"},
		{"within the reserve, an admin", 30, true, ""},
		{"too few even for an admin", 3, true, "the daemon has 3 of its 1024 open files left, too few to start a terminal; dispose of terminals nobody needs, or raise the daemon's open-file limit (ulimit -n)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newHost(t, terminals.Config{Descriptors: fakeDescriptors{c.free, 1024}, DescriptorReserve: 32}, nil)
			term, err := f.host.Create(context.Background(), terminals.Spec{URI: "ahp-terminal:/t", Reserve: c.reserve, Claim: terminal.ClientHolds("x"), Command: "true"})
			if c.refused == "" {
				require.NoError(t, err)
				<-term.Done()
				return
			}
			require.ErrorIs(t, err, terminals.ErrLowOnFiles)
			require.Equal(t, c.refused, err.Error())
			require.Empty(t, f.host.List(), "nothing was opened")
		})
	}
}

// TestProcessDescriptorsCountWhatThisProcessOpens: the adapter's count
// moves with the files this process opens.
func TestProcessDescriptorsCountWhatThisProcessOpens(t *testing.T) {
	before, limit, err := fdlimit.New().Free()
	require.NoError(t, err)
	require.Positive(t, limit)
	f := newHost(t, terminals.Config{}, nil)
	term := f.create(terminals.Spec{Command: "read x"})
	after, _, err := fdlimit.New().Free()
	require.NoError(t, err)
	require.Less(t, after, before, "a live terminal holds open files")
	require.NoError(t, f.host.Dispose(term.URI()))
	<-term.Done()
}
