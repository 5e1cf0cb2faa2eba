package terminals_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/terminal"
)

// takenRecorder collects what Feed and EndInput tell their senders.
type takenRecorder chan fedAnswer

type fedAnswer struct {
	length int64
	err    error
}

func (r takenRecorder) taken(length int64, err error) { r <- fedAnswer{length, err} }

// next waits for the next answer.
func (r takenRecorder) next(t *testing.T, what string) error {
	t.Helper()
	return r.nextAnswer(t, what).err
}

// nextAt waits for the next answer and checks the stream's length it
// tells.
func (r takenRecorder) nextAt(t *testing.T, what string, length int64) {
	t.Helper()
	a := r.nextAnswer(t, what)
	require.NoError(t, a.err, what)
	require.Equal(t, length, a.length, "the stream's length after %s", what)
}

func (r takenRecorder) nextAnswer(t *testing.T, what string) fedAnswer {
	t.Helper()
	select {
	case a := <-r:
		return a
	case <-time.After(waitFor):
		t.Fatalf("%s was never answered", what)
		return fedAnswer{}
	}
}

func TestFedInputReachesAPipeByteForByteAndItsEndClosesThePipe(t *testing.T) {
	f := newHost(t, terminals.Config{}, nil)
	term := f.create(terminals.Spec{Command: "exec od -An -tx1"})
	w := f.watch(term.URI())
	r := make(takenRecorder, 4)

	// A ^C in a file is data, not an interrupt; a byte that is not UTF-8
	// arrives as it is.
	require.NoError(t, f.host.Feed(term.URI(), 0, []byte("a\x03\xffb"), r.taken))
	require.NoError(t, r.next(t, "the feed"))
	require.NoError(t, f.host.EndInput(term.URI(), 4, r.taken))
	require.NoError(t, r.next(t, "the end"))
	require.Equal(t, terminal.ExitedWith(0), exitOf(t, term), "od saw the end of its input")
	w.untilOutput("\n")
	require.Equal(t, "61 03 ff 62", strings.TrimSpace(w.text.String()))
	require.ErrorIs(t, f.host.Feed(term.URI(), 4, []byte("late"), r.taken), terminals.ErrExited)
	require.ErrorIs(t, f.host.EndInput(term.URI(), 4, r.taken), terminals.ErrExited)
}

func TestFeedSkipsWhatWasTakenAndSaysWhereAGapWouldBe(t *testing.T) {
	f := newHost(t, terminals.Config{}, nil)
	// It outlives its input, so that a second end meets a live process.
	term := f.create(terminals.Spec{Command: "cat; echo cat-done; exec sleep 1000"})
	w := f.watch(term.URI())
	r := make(takenRecorder, 8)

	require.NoError(t, f.host.Feed(term.URI(), 0, []byte("abc"), r.taken))
	r.nextAt(t, "the first feed", 3)
	// Sent again from an older offset, as after a lost answer: only the
	// part not yet taken is written.
	require.NoError(t, f.host.Feed(term.URI(), 1, []byte("bcdef\n"), r.taken))
	r.nextAt(t, "the overlapping feed", 7)
	require.NoError(t, f.host.Feed(term.URI(), 2, []byte("cd"), r.taken))
	r.nextAt(t, "a feed taken whole before", 7)

	var gap *terminals.GapError
	require.ErrorAs(t, f.host.Feed(term.URI(), 9, []byte("x"), r.taken), &gap)
	require.Equal(t, int64(7), gap.Want)
	require.Contains(t, gap.Error(), "offset 7")
	require.ErrorAs(t, f.host.EndInput(term.URI(), 3, r.taken), &gap, "an end short of what was taken")

	// -1 goes on from wherever the stream is.
	require.NoError(t, f.host.Feed(term.URI(), -1, []byte("g\n"), r.taken))
	r.nextAt(t, "a feed without an offset", 9)
	w.untilOutput("g\n")
	require.Equal(t, "abcdef\ng\n", w.text.String())

	require.NoError(t, f.host.EndInput(term.URI(), -1, r.taken))
	r.nextAt(t, "the end", 9)
	require.NoError(t, f.host.EndInput(term.URI(), 9, r.taken), "a second end changes nothing")
	r.nextAt(t, "the second end", 9)
	w.untilOutput("cat-done")
	require.ErrorIs(t, f.host.Feed(term.URI(), 9, []byte("late"), r.taken), terminals.ErrInputEnded)
	require.ErrorIs(t, f.host.Apply(terminals.Dispatch{URI: term.URI(), Action: terminal.Input{Data: "typed"}}), terminals.ErrInputEnded,
		"typed input after the end is refused too")
	require.NoError(t, f.host.Dispose(term.URI()))
	require.ErrorIs(t, f.host.Feed("ahp-terminal:/nothing", 0, []byte("x"), r.taken), terminals.ErrNotFound)
}

// A feed is answered once the process has its bytes, not when they are
// queued: a sender that waits for answers sends no faster than the process
// reads, which is what bounds a large file piped in.
func TestFeedIsAnsweredOnlyOnceTheProcessTookTheBytes(t *testing.T) {
	dir := t.TempDir()
	f := newHost(t, terminals.Config{Dir: dir}, nil)
	gate := filepath.Join(dir, "gate")
	require.NoError(t, syscall.Mkfifo(gate, 0o600))
	term := f.create(terminals.Spec{Command: "echo started; cat gate >/dev/null; exec wc -c"})
	w := f.watch(term.URI())
	w.untilOutput("started")

	// Four pipe buffers' worth: the pipe cannot hold the last one while
	// nothing reads it.
	const chunk, chunks = 64 << 10, 4
	r := make(takenRecorder, chunks+1)
	for i := range chunks {
		require.NoError(t, f.host.Feed(term.URI(), int64(i*chunk), []byte(strings.Repeat("x", chunk)), r.taken))
	}
	require.NoError(t, f.host.EndInput(term.URI(), chunks*chunk, r.taken), "the end waits behind the bytes")
	require.LessOrEqual(t, len(r), 1, "only what the pipe holds is answered before the process reads")

	g, err := os.OpenFile(gate, os.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, g.Close())
	for i := range chunks + 1 {
		require.NoError(t, r.next(t, fmt.Sprintf("answer %d", i)))
	}
	require.Equal(t, terminal.ExitedWith(0), exitOf(t, term))
	w.untilOutput(fmt.Sprint(chunks * chunk))
}

func TestEndOfFedInputOnAPtyIsTypedOnALineOfItsOwn(t *testing.T) {
	f := newHost(t, terminals.Config{}, nil)
	// No newline at the end: the first ^D hands "hello" over, the second is
	// the end of input.
	term := f.create(terminals.Spec{Command: "stty -echo; echo ready; exec wc -c", PTY: true})
	w := f.watch(term.URI())
	w.untilOutput("ready")
	r := make(takenRecorder, 2)
	require.NoError(t, f.host.Feed(term.URI(), 0, []byte("hello"), r.taken))
	require.NoError(t, r.next(t, "the feed"))
	require.NoError(t, f.host.EndInput(term.URI(), 5, r.taken))
	require.NoError(t, r.next(t, "the end"))
	require.Equal(t, terminal.ExitedWith(0), exitOf(t, term))
	w.untilOutput("5")
	require.Equal(t, "5", strings.TrimSpace(strings.TrimPrefix(w.text.String(), "ready\r\n")))
}

func TestFedInputWaitingForAProcessThatEndsIsAnsweredWithItsExit(t *testing.T) {
	dir := t.TempDir()
	f := newHost(t, terminals.Config{Dir: dir}, nil)
	gate := filepath.Join(dir, "gate")
	require.NoError(t, syscall.Mkfifo(gate, 0o600))
	// It never reads its input, and ends when the gate opens.
	term := f.create(terminals.Spec{Command: "echo started; exec cat gate"})
	f.watch(term.URI()).untilOutput("started")
	const chunk, chunks = 64 << 10, 3
	r := make(takenRecorder, chunks)
	for i := range chunks {
		require.NoError(t, f.host.Feed(term.URI(), int64(i*chunk), []byte(strings.Repeat("x", chunk)), r.taken))
	}
	g, err := os.OpenFile(gate, os.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, g.Close())
	exitOf(t, term)
	var refused int
	for i := range chunks {
		if err := r.next(t, fmt.Sprintf("answer %d", i)); err != nil {
			require.ErrorIs(t, err, terminals.ErrExited)
			refused++
		}
	}
	require.NotZero(t, refused, "what the process never read is answered with its exit")
}
