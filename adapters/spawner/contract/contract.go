// Package contract is the behaviour every ports.Spawner must show, written
// once and run against each adapter (pipe, pty, fake): each adapter's tests
// call Run with a Harness that says how to express a few programs for that
// spawner. It lives outside _test files so that the adapters' tests can
// import it; nothing in the daemon does.
package contract

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

// DefaultTimeout bounds every wait in the suite. It is generous on purpose:
// the suite waits on events, never on time, and a loaded machine must not
// make it flaky.
const DefaultTimeout = time.Minute

// Harness tells the suite how to drive one spawner. The spec builders return
// a fresh spec on each call; the suite sets PTY itself, may append to Env and
// may set Dir.
type Harness struct {
	// New returns the spawner under test; it is called once per case.
	New func(t *testing.T) ports.Spawner
	// PTY says whether the processes run under a pseudoterminal: specs ask
	// for one and IsPTY must report it.
	PTY bool
	// Real says the processes are OS processes: Pid must be positive, and
	// after each case neither the process nor any member of its process group
	// may be left running.
	Real bool
	// Timeout bounds each wait; zero means DefaultTimeout.
	Timeout time.Duration

	// Print writes text to its output and exits 0.
	Print func(text string) ports.SpawnSpec
	// Cat copies its input to its output until input ends, then exits 0.
	Cat func() ports.SpawnSpec
	// Exit exits with code at once.
	Exit func(code int) ports.SpawnSpec
	// Block writes "ready" and then runs until a signal ends it. It has a
	// child of its own, in its process group, that holds the output open, so
	// an end of output after a signal proves the whole group received it.
	Block func() ports.SpawnSpec
	// PrintEnv writes the value of the environment variable name and exits 0.
	PrintEnv func(name string) ports.SpawnSpec
	// Pwd writes its working directory and exits 0.
	Pwd func() ports.SpawnSpec
	// Size waits for one line of input, then writes its window size as
	// "rows cols" (as `stty size` does) and exits 0. Nil when the child of
	// this spawner cannot see a window size; Resize must then still succeed.
	Size func() ports.SpawnSpec
	// MissingDir is any program, run in a directory that does not exist.
	MissingDir func() ports.SpawnSpec
	// NotFound names a program that does not exist.
	NotFound func() ports.SpawnSpec
	// PrintStreams writes stdout to its standard output, then stderr to its
	// standard error, and exits 0. Nil skips the SeparateStderr case.
	PrintStreams func(stdout, stderr string) ports.SpawnSpec
}

func (h Harness) timeout() time.Duration {
	if h.Timeout > 0 {
		return h.Timeout
	}
	return DefaultTimeout
}

func (h Harness) validate(t *testing.T) {
	t.Helper()
	missing := []string{}
	for name, ok := range map[string]bool{
		"New": h.New != nil, "Print": h.Print != nil, "Cat": h.Cat != nil,
		"Exit": h.Exit != nil, "Block": h.Block != nil, "PrintEnv": h.PrintEnv != nil,
		"Pwd": h.Pwd != nil, "MissingDir": h.MissingDir != nil, "NotFound": h.NotFound != nil,
	} {
		if !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("contract: the harness lacks %v", missing)
	}
}

// Run runs the whole contract against the spawner h describes, one subtest
// per behaviour.
func Run(t *testing.T, h Harness) {
	t.Helper()
	h.validate(t)
	cases := []struct {
		name string
		run  func(*testing.T, Harness)
	}{
		{"OutputIsReadThenEOF", outputIsReadThenEOF},
		{"OutputLargerThanAPipeBufferArrivesWhole", largeOutput},
		{"ExitCodeIsReported", exitCodeIsReported},
		{"KilledBySignalReports128AndTheSignalName", killedBySignal},
		{"SignalReachesTheWholeGroup", signalReachesTheWholeGroup},
		{"SignalAfterTheGroupIsGoneReportsProcessDone", signalAfterExit},
		{"InputAfterTheExitIsDroppedOrProcessGone", inputAfterExit},
		{"WaitIsSafeTwiceAndConcurrently", waitTwiceAndConcurrently},
		{"WriteIsReadBackThroughCat", writeReadBackThroughCat},
		{"CloseInputEndsCat", closeInputEndsCat},
		{"TryWriteIsReadBackThroughCat", tryWriteReadBackThroughCat},
		{"TryWriteToAChildThatDoesNotReadNeverWaits", tryWriteNeverWaits},
		{"SpawnInAMissingDirectoryFails", spawnFails(func(h Harness) ports.SpawnSpec { return h.MissingDir() })},
		{"SpawnOfAMissingProgramFails", spawnFails(func(h Harness) ports.SpawnSpec { return h.NotFound() })},
		{"SpawnWithADoneContextStartsNothing", spawnWithDoneContext},
		{"EnvIsHonoured", envIsHonoured},
		{"EnvIsTheCompleteEnvironment", envIsComplete},
		{"DirIsHonoured", dirIsHonoured},
		{"PidAndIsPTYDescribeTheProcess", pidAndIsPTY},
		{"ResizeWorks", resizeWorks},
		{"CloseReleasesTheProcess", closeReleases},
		{"SeparateStderrKeepsTheStreamsApartOnPipes", separateStderr},
		{"IdleProcessesDoNotHoldAThreadEach", idleProcessesHoldNoThreadEach},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, h) })
	}
}

func outputIsReadThenEOF(t *testing.T, h Harness) {
	const text = "hello from the contract\n"
	p := Start(t, h, h.Print(text))

	out := p.WaitEOF()
	if h.PTY {
		require.Contains(t, out, text)
	} else {
		require.Equal(t, text, out)
	}
	n, err := p.Read(make([]byte, 16))
	require.Zero(t, n)
	require.ErrorIs(t, err, io.EOF, "a Read after the end still reports io.EOF")
	require.Equal(t, terminal.ExitedWith(0), p.WaitExit())
}

func largeOutput(t *testing.T, h Harness) {
	// More than a pipe's 64 KiB buffer, within one argument's 128 KiB limit.
	text := strings.Repeat("x", 100_000)
	p := Start(t, h, h.Print(text))

	out := p.WaitEOF()
	require.Equal(t, len(text), strings.Count(out, "x"))
	require.Equal(t, terminal.ExitedWith(0), p.WaitExit())
}

func exitCodeIsReported(t *testing.T, h Harness) {
	for _, code := range []int{0, 1, 3, 42, 127, 255} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			p := Start(t, h, h.Exit(code))
			require.Equal(t, terminal.ExitedWith(code), p.WaitExit())
			p.WaitEOF()
		})
	}
}

func killedBySignal(t *testing.T, h Harness) {
	tests := []struct {
		send func(ports.Process) error
		name string
	}{
		{ports.Process.Terminate, "SIGTERM"},
		{ports.Process.Kill, "SIGKILL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Start(t, h, h.Block())
			p.WaitOutput("ready")

			require.NoError(t, tt.send(p))

			got := p.WaitExit()
			require.Equal(t, terminal.KilledBy(tt.name), got)
			require.Equal(t, terminal.ExitSignaled, got.Code)
		})
	}
}

func signalReachesTheWholeGroup(t *testing.T, h Harness) {
	p := Start(t, h, h.Block())
	p.WaitOutput("ready")

	require.NoError(t, p.Terminate())

	// Block's own child holds the output: EOF means it died too.
	p.WaitEOF()
	require.Equal(t, terminal.KilledBy("SIGTERM"), p.WaitExit())
}

func signalAfterExit(t *testing.T, h Harness) {
	p := Start(t, h, h.Exit(0))
	p.WaitEOF()
	p.WaitExit()

	err := p.Terminate()
	require.ErrorIs(t, err, os.ErrProcessDone)
	// The core reads it in its own terms, whatever the spawner said.
	for name, send := range map[string]func() error{"Interrupt": p.Interrupt, "Terminate": p.Terminate, "Kill": p.Kill} {
		require.ErrorIs(t, send(), ports.ErrProcessGone, name)
	}
}

// inputAfterExit: what is typed into a process that has ended is taken
// and lost (a pty's buffer, an SSH channel's queue) or refused with an
// error matching ports.ErrProcessGone (a pipe's EPIPE), never an error
// the terminal host would have to know the spawner's errno to drop.
func inputAfterExit(t *testing.T, h Harness) {
	p := Start(t, h, h.Exit(0))
	p.WaitEOF()
	p.WaitExit()
	var err error
	p.WaitCall("Write after exit", func() { _, err = p.Write([]byte("too late\n")) })
	if err != nil {
		require.ErrorIs(t, err, ports.ErrProcessGone)
	}
	if tw, ok := p.Process.(ports.InputTrier); ok {
		p.WaitCall("TryWrite after exit", func() { _, err = tw.TryWrite([]byte("too late\n")) })
		if err != nil {
			require.ErrorIs(t, err, ports.ErrProcessGone)
		}
	}
}

func waitTwiceAndConcurrently(t *testing.T, h Harness) {
	p := Start(t, h, h.Exit(7))
	want := terminal.ExitedWith(7)

	const waiters = 8
	got := make([]terminal.ExitStatus, waiters)
	p.WaitCall("concurrent Wait", func() {
		var wg sync.WaitGroup
		for i := range waiters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i] = p.Wait()
			}()
		}
		wg.Wait()
	})
	for i := range waiters {
		require.Equal(t, want, got[i], "waiter %d", i)
	}
	p.WaitCall("Wait after exit", func() {
		require.Equal(t, want, p.Wait())
		require.Equal(t, want, p.Wait())
	})
	p.WaitEOF()
}

func writeReadBackThroughCat(t *testing.T, h Harness) {
	p := Start(t, h, h.Cat())

	_, err := p.Write([]byte("ping\n"))
	require.NoError(t, err)
	p.WaitOutput("ping\n")

	_, err = p.Write([]byte("pong\n"))
	require.NoError(t, err)
	p.WaitOutput("pong\n")

	require.NoError(t, p.CloseInput())
	out := p.WaitEOF()
	if !h.PTY {
		require.Equal(t, "ping\npong\n", out)
	}
	require.Equal(t, terminal.ExitedWith(0), p.WaitExit())
}

// trier is the process's InputTrier; every spawner must offer one.
func trier(t *testing.T, p *Proc) ports.InputTrier {
	t.Helper()
	tw, ok := p.Process.(ports.InputTrier)
	require.True(t, ok, "%T does not implement ports.InputTrier", p.Process)
	return tw
}

func tryWriteReadBackThroughCat(t *testing.T, h Harness) {
	p := Start(t, h, h.Cat())
	tw := trier(t, p)

	n, err := tw.TryWrite([]byte("ping\n"))
	require.NoError(t, err)
	require.Equal(t, 5, n, "an empty input buffer takes a short line whole")
	p.WaitOutput("ping\n")

	require.NoError(t, p.CloseInput())
	p.WaitEOF()
	require.Equal(t, terminal.ExitedWith(0), p.WaitExit())
}

func tryWriteNeverWaits(t *testing.T, h Harness) {
	p := Start(t, h, h.Block())
	p.WaitOutput("ready")
	tw := trier(t, p)

	// Far more than any pipe or pty buffer holds, to a child that never
	// reads: a real one takes part and says how much, at once.
	big := []byte(strings.Repeat("x", 4<<20))
	var n int
	var err error
	p.WaitCall("TryWrite to a child that does not read", func() { n, err = tw.TryWrite(big) })
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, 0)
	require.LessOrEqual(t, n, len(big))
	if h.Real {
		require.Less(t, n, len(big), "the child's input buffer cannot hold 4 MiB")
		p.WaitCall("TryWrite again", func() { n, err = tw.TryWrite(big) })
		require.NoError(t, err)
		require.Less(t, n, len(big))
	}

	require.NoError(t, p.Kill())
	p.WaitEOF()
	p.WaitExit()
}

func closeInputEndsCat(t *testing.T, h Harness) {
	p := Start(t, h, h.Cat())

	require.NoError(t, p.CloseInput())

	require.Equal(t, terminal.ExitedWith(0), p.WaitExit())
	p.WaitEOF()
}

func spawnFails(spec func(Harness) ports.SpawnSpec) func(*testing.T, Harness) {
	return func(t *testing.T, h Harness) {
		s := spec(h)
		s.PTY = h.PTY
		ctx, cancel := context.WithTimeout(context.Background(), h.timeout())
		defer cancel()

		p, err := h.New(t).Spawn(ctx, s)

		require.Error(t, err)
		require.Nil(t, p, "a failed spawn returns no process")
	}
}

func spawnWithDoneContext(t *testing.T, h Harness) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	spec := h.Print("must not run\n")
	spec.PTY = h.PTY

	p, err := h.New(t).Spawn(ctx, spec)

	require.ErrorIs(t, err, context.Canceled)
	require.Nil(t, p)
}

func envIsHonoured(t *testing.T, h Harness) {
	spec := h.PrintEnv("SHELLGATE_CONTRACT")
	spec.Env = append(spec.Env, "SHELLGATE_CONTRACT=it works")
	p := Start(t, h, spec)

	require.Contains(t, p.WaitEOF(), "it works")
	require.Equal(t, terminal.ExitedWith(0), p.WaitExit())
}

func envIsComplete(t *testing.T, h Harness) {
	// Only in the test process's environment, never in the spec's.
	t.Setenv("SHELLGATE_CONTRACT_LEAK", "leaked")
	p := Start(t, h, h.PrintEnv("SHELLGATE_CONTRACT_LEAK"))

	require.NotContains(t, p.WaitEOF(), "leaked")
	require.Equal(t, terminal.ExitedWith(0), p.WaitExit())
}

func dirIsHonoured(t *testing.T, h Harness) {
	dir := t.TempDir()
	spec := h.Pwd()
	spec.Dir = dir
	p := Start(t, h, spec)

	got := strings.TrimSpace(p.WaitEOF())
	require.Equal(t, terminal.ExitedWith(0), p.WaitExit())
	require.Equal(t, realPath(t, dir), realPath(t, got))
}

func pidAndIsPTY(t *testing.T, h Harness) {
	p := Start(t, h, h.Cat())

	if h.Real {
		require.Positive(t, p.Pid())
	}
	require.Equal(t, h.PTY, p.IsPTY())

	require.NoError(t, p.CloseInput())
	p.WaitEOF()
	p.WaitExit()
	require.Equal(t, h.PTY, p.IsPTY(), "IsPTY does not change at exit")
}

func resizeWorks(t *testing.T, h Harness) {
	if h.Size == nil {
		p := Start(t, h, h.Cat())
		require.NoError(t, p.Resize(100, 40))
		require.NoError(t, p.CloseInput())
		p.WaitEOF()
		require.Equal(t, terminal.ExitedWith(0), p.WaitExit())
		return
	}
	spec := h.Size()
	spec.Cols, spec.Rows = 80, 24
	p := Start(t, h, spec)

	require.NoError(t, p.Resize(100, 40))
	_, err := p.Write([]byte("\n"))
	require.NoError(t, err)

	require.Contains(t, p.WaitEOF(), "40 100")
	require.Equal(t, terminal.ExitedWith(0), p.WaitExit())
}

func closeReleases(t *testing.T, h Harness) {
	countFDs := func() int { return -1 }
	if h.Real {
		if _, err := openFDs(); err != nil {
			t.Logf("not counting descriptors: %v", err)
		} else {
			countFDs = func() int {
				n, err := openFDs()
				require.NoError(t, err)
				return n
			}
			// A first process lets the runtime open what it keeps (the
			// poller's descriptors), so the count below is only ours.
			warm := Start(t, h, h.Print("warm\n"))
			warm.WaitEOF()
			warm.WaitExit()
			require.NoError(t, warm.Close())
		}
	}
	before := countFDs()

	p := Start(t, h, h.Print("bye\n"))
	p.WaitEOF()
	p.WaitExit()
	require.NoError(t, p.Close())
	require.NoError(t, p.Close(), "Close is idempotent")

	require.Equal(t, before, countFDs(), "Close releases every descriptor")
	n, err := p.Read(make([]byte, 16))
	require.Zero(t, n)
	require.Error(t, err, "Read after Close fails")
}

func separateStderr(t *testing.T, h Harness) {
	if h.PrintStreams == nil {
		t.Skip("the harness has no PrintStreams")
	}
	spec := h.PrintStreams("to stdout\n", "to stderr\n")
	spec.SeparateStderr = true
	p := Start(t, h, spec)

	var stderr io.Reader
	if src, ok := p.Process.(ports.StderrSource); ok {
		stderr = src.Stderr()
	}
	if h.PTY {
		require.Nil(t, stderr, "under a pty both streams are the terminal")
		out := p.WaitEOF()
		require.Contains(t, out, "to stdout\n")
		require.Contains(t, out, "to stderr\n")
		require.Equal(t, terminal.ExitedWith(0), p.WaitExit())
		return
	}
	require.NotNil(t, stderr, "a process on pipes hands out its stderr when asked")
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(stderr)
		got <- string(b)
	}()
	require.Equal(t, "to stdout\n", p.WaitEOF(), "Read has standard output alone")
	var errText string
	p.WaitCall("reading stderr to its end", func() { errText = <-got })
	require.Equal(t, "to stderr\n", errText)
	require.Equal(t, terminal.ExitedWith(0), p.WaitExit())
}

// idleProcesses is how many children idleProcessesHoldNoThreadEach keeps
// running at once: enough that a thread each would stand out from the
// handful the runtime starts for itself (runs here counted no new thread
// at all with 200 idle children), few enough that the sandbox's and SSH's
// runs of the contract, whose every start costs a confined helper or a
// session, do not spend a minute each on starts alone.
const idleProcesses = 64

func idleProcessesHoldNoThreadEach(t *testing.T, h Harness) {
	before, err := threadCount()
	if err != nil {
		t.Skipf("cannot count this process's threads: %v", err)
	}
	procs := make([]*Proc, idleProcesses)
	for i := range procs {
		procs[i] = Start(t, h, h.Cat())
	}
	// A round trip through every child proves each is up and idle, and gives
	// a wait that blocks its thread ample time to have cost one.
	for _, p := range procs {
		_, err := p.Write([]byte("up\n"))
		require.NoError(t, err)
	}
	for _, p := range procs {
		p.WaitOutput("up\n")
	}

	after, err := threadCount()
	require.NoError(t, err)
	t.Logf("OS threads: %d before, %d with %d idle children", before, after, idleProcesses)
	require.Less(t, after-before, idleProcesses/4,
		"%d idle children took the test binary from %d to %d OS threads", idleProcesses, before, after)

	for _, p := range procs {
		require.NoError(t, p.CloseInput())
	}
	for _, p := range procs {
		p.WaitEOF()
		require.Equal(t, terminal.ExitedWith(0), p.WaitExit())
	}
}

func realPath(t *testing.T, path string) string {
	t.Helper()
	if !filepath.IsAbs(path) {
		return path
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return path
	}
	return resolved
}
