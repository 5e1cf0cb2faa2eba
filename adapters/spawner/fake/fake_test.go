package fake_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shellgate/shellgate/adapters/spawner/contract"
	"github.com/shellgate/shellgate/adapters/spawner/fake"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const missingDir = "/nonexistent/fake-contract"

var errNoSuchProgram = errors.New("no such program")

// newContractSpawner scripts the programs the contract harness names.
func newContractSpawner(*testing.T) ports.Spawner {
	s := fake.New()
	s.FailWhen(func(spec ports.SpawnSpec) bool { return spec.Dir == missingDir }, os.ErrNotExist)
	s.FailWhen(func(spec ports.SpawnSpec) bool { return spec.Program == "no-such-program" }, errNoSuchProgram)
	s.Register("print", func(p *fake.Process) terminal.ExitStatus { return fake.Print(p.Spec().Args[0])(p) })
	s.Register("cat", fake.Cat())
	s.Register("exit", func(p *fake.Process) terminal.ExitStatus {
		code, err := strconv.Atoi(p.Spec().Args[0])
		if err != nil {
			return terminal.ExitedWith(2)
		}
		return terminal.ExitedWith(code)
	})
	s.Register("block", func(p *fake.Process) terminal.ExitStatus {
		// The held output stands for Block's own child in its group.
		p.HoldOutput()
		if p.Emit("ready\n") != nil {
			return terminal.ExitedWith(1)
		}
		<-p.Done()
		return terminal.ExitedWith(0)
	})
	s.Register("printenv", func(p *fake.Process) terminal.ExitStatus {
		prefix := p.Spec().Args[0] + "="
		value := ""
		for _, kv := range p.Spec().Env {
			if v, ok := strings.CutPrefix(kv, prefix); ok {
				value = v
			}
		}
		_ = p.Emit(value + "\n")
		return terminal.ExitedWith(0)
	})
	s.Register("pwd", func(p *fake.Process) terminal.ExitStatus {
		_ = p.Emit(p.Spec().Dir + "\n")
		return terminal.ExitedWith(0)
	})
	s.Register("streams", func(p *fake.Process) terminal.ExitStatus {
		args := p.Spec().Args
		if p.Emit(args[0]) != nil || p.EmitStderr(args[1]) != nil {
			return terminal.ExitedWith(1)
		}
		return terminal.ExitedWith(0)
	})
	s.Register("size", func(p *fake.Process) terminal.ExitStatus {
		if _, err := readLine(p); err != nil {
			return terminal.ExitedWith(1)
		}
		size := p.Size()
		_ = p.Emit(itoa(int(size.Rows)) + " " + itoa(int(size.Cols)) + "\n")
		return terminal.ExitedWith(0)
	})
	return s
}

func fakeHarness(pty bool) contract.Harness {
	spec := func(program string, args ...string) ports.SpawnSpec {
		return ports.SpawnSpec{Program: program, Args: args}
	}
	return contract.Harness{
		New:        newContractSpawner,
		PTY:        pty,
		Print:      func(text string) ports.SpawnSpec { return spec("print", text) },
		Cat:        func() ports.SpawnSpec { return spec("cat") },
		Exit:       func(code int) ports.SpawnSpec { return spec("exit", itoa(code)) },
		Block:      func() ports.SpawnSpec { return spec("block") },
		PrintEnv:   func(name string) ports.SpawnSpec { return spec("printenv", name) },
		Pwd:        func() ports.SpawnSpec { return spec("pwd") },
		Size:       func() ports.SpawnSpec { return spec("size") },
		MissingDir: func() ports.SpawnSpec { s := spec("print", "x"); s.Dir = missingDir; return s },
		NotFound:   func() ports.SpawnSpec { return spec("no-such-program") },
		PrintStreams: func(stdout, stderr string) ports.SpawnSpec {
			return spec("streams", stdout, stderr)
		},
	}
}

func TestFakeContractOnPipes(t *testing.T) { contract.Run(t, fakeHarness(false)) }

func TestFakeContractOnAPTY(t *testing.T) { contract.Run(t, fakeHarness(true)) }

func TestFakeUnregisteredProgramIsDrivenByTheTest(t *testing.T) {
	ctx := testContext(t)
	s := fake.New()
	proc, err := s.Spawn(ctx, ports.SpawnSpec{Program: "bash", Args: []string{"-l"}})
	require.NoError(t, err)

	p, err := s.Next(ctx)
	require.NoError(t, err)
	require.Same(t, proc, ports.Process(p))
	require.Equal(t, []string{"-l"}, p.Spec().Args)
	require.Equal(t, fake.FirstPid, p.Pid())

	require.NoError(t, p.Emit("$ "))
	buf := make([]byte, 16)
	n, err := proc.Read(buf)
	require.NoError(t, err)
	require.Equal(t, "$ ", string(buf[:n]))

	_, err = proc.Write([]byte("ls\n"))
	require.NoError(t, err)
	require.NoError(t, p.WaitInput(ctx, "ls\n"))
	require.Equal(t, "ls\n", p.Input())

	p.Exit(3)
	require.Equal(t, terminal.ExitedWith(3), proc.Wait())
	n, err = proc.Read(buf)
	require.Zero(t, n)
	require.ErrorIs(t, err, io.EOF)
}

func TestFakeNextReturnsProcessesInSpawnOrder(t *testing.T) {
	ctx := testContext(t)
	s := fake.New()
	for _, name := range []string{"first", "second"} {
		_, err := s.Spawn(ctx, ports.SpawnSpec{Program: name})
		require.NoError(t, err)
	}

	first, err := s.Next(ctx)
	require.NoError(t, err)
	second, err := s.Next(ctx)
	require.NoError(t, err)

	require.Equal(t, "first", first.Spec().Program)
	require.Equal(t, "second", second.Spec().Program)
	require.Equal(t, first.Pid()+1, second.Pid())
	require.Equal(t, []*fake.Process{first, second}, s.Processes())
	first.Exit(0)
	second.Exit(0)
}

func TestFakeNextWaitsForASpawn(t *testing.T) {
	ctx := testContext(t)
	s := fake.New()
	spawned := make(chan error, 1)
	go func() {
		_, err := s.Spawn(ctx, ports.SpawnSpec{Program: "later"})
		spawned <- err
	}()

	p, err := s.Next(ctx)

	require.NoError(t, err)
	require.Equal(t, "later", p.Spec().Program)
	require.NoError(t, <-spawned)
	p.Exit(0)
}

func TestFakeNextGivesUpWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	_, err := fake.New().Next(ctx)

	require.ErrorIs(t, err, context.Canceled)
}

func TestFakeRegisteredProgramMatchesByBaseName(t *testing.T) {
	ctx := testContext(t)
	s := fake.New()
	s.Register("sh", fake.Print("from sh\n"))

	p, err := s.Spawn(ctx, ports.SpawnSpec{Program: "/bin/sh"})
	require.NoError(t, err)

	out, err := io.ReadAll(p)
	require.NoError(t, err)
	require.Equal(t, "from sh\n", string(out))
	require.Equal(t, terminal.ExitedWith(0), p.Wait())
}

func TestFakeRegisterNilRestoresTheDefault(t *testing.T) {
	ctx := testContext(t)
	s := fake.New()
	s.Register("tool", fake.Exit(9))
	s.Register("tool", nil)

	_, err := s.Spawn(ctx, ports.SpawnSpec{Program: "tool"})
	require.NoError(t, err)
	p, err := s.Next(ctx)
	require.NoError(t, err)

	select {
	case <-p.Done():
		t.Fatal("an unregistered program runs until it is ended")
	default:
	}
	p.Exit(0)
}

func TestFakeFailWhenRefusesMatchingSpecs(t *testing.T) {
	ctx := testContext(t)
	s := fake.New()
	boom := errors.New("boom")
	s.FailWhen(func(spec ports.SpawnSpec) bool { return spec.Dir == "/gone" }, boom)

	p, err := s.Spawn(ctx, ports.SpawnSpec{Program: "sh", Dir: "/gone"})
	require.ErrorIs(t, err, boom)
	require.Nil(t, p)
	require.Empty(t, s.Processes(), "a failed spawn starts nothing")

	p, err = s.Spawn(ctx, ports.SpawnSpec{Program: "sh", Dir: "/here"})
	require.NoError(t, err)
	p.(*fake.Process).Exit(0)
}

func TestFakeRecordsResizesAndSignals(t *testing.T) {
	tests := []struct {
		name        string
		pty         bool
		wantSignals []syscall.Signal
	}{
		{name: "pipes", wantSignals: []syscall.Signal{syscall.SIGCONT}},
		{name: "pty resizes also send SIGWINCH", pty: true, wantSignals: []syscall.Signal{syscall.SIGWINCH, syscall.SIGCONT, syscall.SIGWINCH}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			s := fake.New()
			proc, err := s.Spawn(ctx, ports.SpawnSpec{Program: "vim", PTY: tt.pty, Cols: 90, Rows: 30})
			require.NoError(t, err)
			p, err := s.Next(ctx)
			require.NoError(t, err)
			require.Equal(t, fake.Size{Cols: 90, Rows: 30}, p.Size())

			require.NoError(t, proc.Resize(100, 40))
			require.NoError(t, proc.(*fake.Process).Signal(syscall.SIGCONT))
			require.NoError(t, proc.Resize(120, 50))

			require.Equal(t, []fake.Size{{Cols: 100, Rows: 40}, {Cols: 120, Rows: 50}}, p.Resizes())
			require.Equal(t, fake.Size{Cols: 120, Rows: 50}, p.Size())
			require.Equal(t, tt.wantSignals, p.Signals())
			for _, want := range tt.wantSignals {
				got, err := p.NextSignal(ctx)
				require.NoError(t, err)
				require.Equal(t, want, got)
			}
			p.Exit(0)
		})
	}
}

func TestFakeDefaultSizeIs80x24(t *testing.T) {
	ctx := testContext(t)
	s := fake.New()
	_, err := s.Spawn(ctx, ports.SpawnSpec{Program: "sh", PTY: true})
	require.NoError(t, err)
	p, err := s.Next(ctx)
	require.NoError(t, err)

	require.Equal(t, fake.Size{Cols: 80, Rows: 24}, p.Size())
	p.Exit(0)
}

func TestFakeTrappedSignalDoesNotEndTheProcess(t *testing.T) {
	ctx := testContext(t)
	s := fake.New()
	s.Register("shell", func(p *fake.Process) terminal.ExitStatus {
		p.Trap(syscall.SIGINT)
		_ = p.Emit("$ ")
		for {
			sig, err := p.NextSignal(ctx)
			if err != nil {
				return terminal.ExitedWith(1)
			}
			if sig == syscall.SIGINT {
				_ = p.Emit("^C\n$ ")
			}
		}
	})
	proc, err := s.Spawn(ctx, ports.SpawnSpec{Program: "shell"})
	require.NoError(t, err)
	p, err := s.Next(ctx)
	require.NoError(t, err)
	readUntil(t, proc, "$ ") // like a real shell, the trap is set before the prompt

	require.NoError(t, proc.(*fake.Process).Signal(syscall.SIGINT))

	readUntil(t, proc, "^C")
	select {
	case <-p.Done():
		t.Fatal("a trapped SIGINT ended the process")
	default:
	}

	require.NoError(t, proc.(*fake.Process).Signal(syscall.SIGKILL))
	require.Equal(t, terminal.KilledBy("SIGKILL"), proc.Wait())
}

func TestFakeSIGKILLAndSIGSTOPCannotBeTrapped(t *testing.T) {
	ctx := testContext(t)
	s := fake.New()
	_, err := s.Spawn(ctx, ports.SpawnSpec{Program: "x"})
	require.NoError(t, err)
	p, err := s.Next(ctx)
	require.NoError(t, err)

	require.Panics(t, func() { p.Trap(syscall.SIGKILL) })
	require.Panics(t, func() { p.Trap(syscall.SIGSTOP) })
	p.Exit(0)
}

func TestFakeHeldOutputDelaysEOFLikeABackgroundJob(t *testing.T) {
	ctx := testContext(t)
	s := fake.New()
	proc, err := s.Spawn(ctx, ports.SpawnSpec{Program: "sh"})
	require.NoError(t, err)
	p, err := s.Next(ctx)
	require.NoError(t, err)

	release := p.HoldOutput()
	require.NoError(t, p.Emit("early\n"))
	p.Exit(0)
	require.Equal(t, terminal.ExitedWith(0), proc.Wait())
	require.NoError(t, p.Emit("late\n"), "the job still writes after the shell exits")
	release()
	release()

	out, err := io.ReadAll(proc)
	require.NoError(t, err)
	require.Equal(t, "early\nlate\n", string(out))
	require.ErrorIs(t, proc.(*fake.Process).Signal(syscall.SIGTERM), os.ErrProcessDone)
}

func TestFakeSignalToTheGroupEndsHeldOutput(t *testing.T) {
	ctx := testContext(t)
	s := fake.New()
	proc, err := s.Spawn(ctx, ports.SpawnSpec{Program: "sh"})
	require.NoError(t, err)
	p, err := s.Next(ctx)
	require.NoError(t, err)
	p.HoldOutput()
	p.Exit(0)

	require.NoError(t, proc.(*fake.Process).Signal(syscall.SIGKILL), "the group still has a member")

	out, err := io.ReadAll(proc)
	require.NoError(t, err)
	require.Empty(t, out)
	require.Equal(t, terminal.ExitedWith(0), proc.Wait(), "the shell had already exited")
}

func TestFakeDieReportsTheSignalWithoutEndingTheGroup(t *testing.T) {
	ctx := testContext(t)
	s := fake.New()
	proc, err := s.Spawn(ctx, ports.SpawnSpec{Program: "sh"})
	require.NoError(t, err)
	p, err := s.Next(ctx)
	require.NoError(t, err)
	release := p.HoldOutput()

	p.Die(syscall.SIGSEGV)
	p.Exit(0) // too late: the first ending stands

	require.Equal(t, terminal.KilledBy("SIGSEGV"), proc.Wait())
	require.NoError(t, p.Emit("still here\n"))
	release()
	out, err := io.ReadAll(proc)
	require.NoError(t, err)
	require.Equal(t, "still here\n", string(out))
}

func TestFakeWriteAfterExitFails(t *testing.T) {
	tests := []struct {
		name string
		pty  bool
		want error
	}{
		{name: "pipes", want: syscall.EPIPE},
		{name: "pty", pty: true, want: syscall.EIO},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			proc, err := fake.New().Spawn(ctx, ports.SpawnSpec{Program: "true", PTY: tt.pty})
			require.NoError(t, err)
			proc.(*fake.Process).Exit(0)

			_, err = proc.Write([]byte("x"))

			require.ErrorIs(t, err, tt.want)
		})
	}
}

func TestFakeCloseEndsTheChildsInputAndIsVisible(t *testing.T) {
	ctx := testContext(t)
	s := fake.New()
	s.Register("cat", fake.Cat())
	proc, err := s.Spawn(ctx, ports.SpawnSpec{Program: "cat"})
	require.NoError(t, err)
	p, err := s.Next(ctx)
	require.NoError(t, err)

	require.NoError(t, proc.Close())

	require.True(t, p.Closed())
	require.True(t, p.InputClosed())
	require.Equal(t, terminal.ExitedWith(0), proc.Wait(), "cat saw the end of its input")
	_, err = proc.Read(make([]byte, 1))
	require.ErrorIs(t, err, os.ErrClosed)
	require.ErrorIs(t, p.Emit("x"), syscall.EPIPE)
}

func TestFakeChildSideWaitsEndWithTheProcess(t *testing.T) {
	ctx := testContext(t)
	s := fake.New()
	_, err := s.Spawn(ctx, ports.SpawnSpec{Program: "x"})
	require.NoError(t, err)
	p, err := s.Next(ctx)
	require.NoError(t, err)
	p.Exit(0)

	require.ErrorIs(t, p.WaitInput(ctx, "never"), fake.ErrExited)
	_, err = p.NextSignal(ctx)
	require.ErrorIs(t, err, fake.ErrExited)
	n, err := p.ReadInput(make([]byte, 4))
	require.Zero(t, n)
	require.ErrorIs(t, err, io.EOF)
}

func TestFakeSpawnCopiesTheSpec(t *testing.T) {
	ctx := testContext(t)
	s := fake.New()
	args := []string{"a"}
	_, err := s.Spawn(ctx, ports.SpawnSpec{Program: "x", Args: args})
	require.NoError(t, err)
	args[0] = "changed"

	p, err := s.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, p.Spec().Args)
	p.Exit(0)
}

// readUntil reads proc until its output contains want, failing (and closing
// proc, which releases the Read) if that takes longer than the deadline.
func readUntil(t *testing.T, proc ports.Process, want string) {
	t.Helper()
	found := make(chan error, 1)
	go func() {
		var out []byte
		buf := make([]byte, 16)
		for !strings.Contains(string(out), want) {
			n, err := proc.Read(buf)
			if err != nil {
				found <- fmt.Errorf("output %q ended without %q: %w", out, want, err)
				return
			}
			out = append(out, buf[:n]...)
		}
		found <- nil
	}()
	timer := time.NewTimer(contract.DefaultTimeout)
	defer timer.Stop()
	select {
	case err := <-found:
		require.NoError(t, err)
	case <-timer.C:
		_ = proc.Close()
		<-found
		t.Fatalf("no %q in the output", want)
	}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), contract.DefaultTimeout)
	t.Cleanup(cancel)
	return ctx
}

func readLine(p *fake.Process) (string, error) {
	var line []byte
	b := make([]byte, 1)
	for {
		n, err := p.ReadInput(b)
		if n > 0 {
			if b[0] == '\n' {
				return string(line), nil
			}
			line = append(line, b[0])
		}
		if err != nil {
			return string(line), err
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
