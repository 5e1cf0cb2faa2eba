package ssh_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	xssh "golang.org/x/crypto/ssh"

	"github.com/shellgate/shellgate/adapters/shellinit"
	"github.com/shellgate/shellgate/adapters/spawner/contract"
	sshspawner "github.com/shellgate/shellgate/adapters/spawner/ssh"
	"github.com/shellgate/shellgate/adapters/spawner/ssh/sshtest"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

func ownSpawner(t *testing.T, s *sshtest.Server) *sshspawner.Spawner {
	t.Helper()
	sp := newSpawner(s)
	t.Cleanup(func() { require.NoError(t, sp.Close()) })
	return sp
}

func TestSSHHostKeyThatIsNotKnownIsRefused(t *testing.T) {
	tests := []struct {
		name, knownHosts, want string
	}{
		{"a different key", "different", "does not match"},
		{"no key at all", "empty", "never trusts a key on first use"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sshtest.Start(t)
			switch tt.knownHosts {
			case "different":
				other, _, err := ed25519.GenerateKey(rand.Reader)
				require.NoError(t, err)
				pub, err := xssh.NewPublicKey(other)
				require.NoError(t, err)
				require.NoError(t, s.WriteKnownHosts(pub))
			case "empty":
				require.NoError(t, os.WriteFile(s.KnownHosts, nil, 0o600))
			}
			sp := ownSpawner(t, s)

			p, err := sp.Spawn(context.Background(), contract.ShellSpec(`echo must not run`))

			require.Nil(t, p)
			require.ErrorContains(t, err, tt.want)
			require.ErrorContains(t, err, "frontend", "the error names the host")
			h := sp.Health()
			require.False(t, h.Connected)
			require.Contains(t, h.LastError, tt.want)
		})
	}
}

func TestSSHUnreachableHostIsAClearError(t *testing.T) {
	s := sshtest.Start(t)
	sp := ownSpawner(t, s)
	require.NoError(t, s.Kill())

	p, err := sp.Spawn(context.Background(), contract.ShellSpec(`echo must not run`))

	require.Nil(t, p)
	require.ErrorContains(t, err, "host frontend ("+s.Addr+") is unreachable")
}

func TestSSHServerGoneEndsTheProcessWithAReasonAndTheHostComesBack(t *testing.T) {
	s := sshtest.Start(t)
	sp := ownSpawner(t, s)
	h := contract.Shell(func(*testing.T) ports.Spawner { return sp }, false)
	h.Real = false // the remote processes die with the server, out of the test's reach
	p := contract.Start(t, h, contract.ShellSpec(`echo "at $SSH_CONNECTION"; sleep 1000`))
	p.WaitOutput("at 127.0.0.1")
	require.True(t, sp.Health().Connected)

	require.NoError(t, s.Kill())

	require.Equal(t, terminal.ExitedWith(sshspawner.ExitLost), p.WaitExit())
	require.Contains(t, p.WaitEOF(), "shellgate: lost the connection to host frontend")
	require.False(t, sp.Health().Connected)
	require.NotEmpty(t, sp.Health().LastError)

	require.NoError(t, s.Restart())
	again := contract.Start(t, h, contract.ShellSpec(`echo back`))
	require.Contains(t, again.WaitEOF(), "back")
	require.Equal(t, terminal.ExitedWith(0), again.WaitExit())
	require.True(t, sp.Health().Connected)
}

func TestSSHSignalsReachTheRemoteGroup(t *testing.T) {
	// SIGSTOP and SIGCONT are not among the signals RFC 4254 lets a request
	// name, so they go through kill(1) on the host.
	p := contract.Start(t, harness(false), contract.ShellSpec(
		`trap 'echo got-int' INT; trap 'echo got-usr1' USR1; echo ready; while :; do sleep 0.1; done`))
	p.WaitOutput("ready")

	require.NoError(t, p.Signal(syscall.SIGUSR1))
	p.WaitOutput("got-usr1")
	require.NoError(t, p.Signal(syscall.SIGSTOP))
	require.NoError(t, p.Signal(syscall.SIGCONT))
	require.NoError(t, p.Signal(syscall.SIGINT))
	p.WaitOutput("got-int")
	require.NoError(t, p.Signal(syscall.SIGKILL))
	require.Equal(t, terminal.KilledBy("SIGKILL"), p.WaitExit())
}

func TestSSHSessionsShareOneConnection(t *testing.T) {
	s := sshtest.Start(t)
	sp := ownSpawner(t, s)
	h := contract.Shell(func(*testing.T) ports.Spawner { return sp }, false)
	var conns []string
	for range 3 {
		p := contract.Start(t, h, contract.ShellSpec(`echo "$SSH_CONNECTION"`))
		conns = append(conns, p.WaitEOF())
		p.WaitExit()
	}
	require.Equal(t, conns[0], conns[1], "the same client port: one connection")
	require.Equal(t, conns[0], conns[2])
}

func TestSSHMoreTerminalsThanTheServersMaxSessionsOpenMoreConnections(t *testing.T) {
	s := sshtest.StartWith(t, sshtest.Options{MaxSessions: 2})
	sp := ownSpawner(t, s)
	h := contract.Shell(func(*testing.T) ports.Spawner { return sp }, false)
	conns := map[string]bool{}
	var procs []*contract.Proc
	for range 5 {
		p := contract.Start(t, h, contract.ShellSpec(`echo "from $SSH_CONNECTION"; read line; exit 0`))
		p.WaitOutput("from ")
		procs = append(procs, p)
	}
	for _, p := range procs {
		conns[p.Output()] = true
	}
	require.Len(t, conns, 3, "two sessions per connection: five terminals need three")
	require.Equal(t, 3, sp.Connections())
	for _, p := range procs {
		require.NoError(t, p.CloseInput())
		require.Equal(t, terminal.ExitedWith(0), p.WaitExit())
	}
}

func TestSSHShellIntegrationScriptsTravelWithTheSpecAndRemoveThemselves(t *testing.T) {
	for _, shell := range []string{"bash", "zsh"} {
		t.Run(shell, func(t *testing.T) {
			program, err := exec.LookPath(shell)
			if err != nil {
				t.Skipf("%s is not installed", shell)
			}
			args, env, files, ok := shellinit.PrepareRemote(program, []string{"-i"}, append(contract.ShellEnv(), "HOME="+t.TempDir()))
			require.True(t, ok)
			spec := ports.SpawnSpec{Program: program, Args: args, Env: env, Files: files}
			// sshd's sessions have no TMPDIR: the directory is made in /tmp
			// (the server is this machine, so the test can look).
			before, err := filepath.Glob("/tmp/shellgate.*")
			require.NoError(t, err)
			p := contract.Start(t, harness(true), spec)

			_, err = p.Write([]byte("echo up-$((6*7)); exit\n"))
			require.NoError(t, err)

			out := p.WaitEOF()
			require.Contains(t, out, "up-42")
			require.Contains(t, out, "\x1b]133;", "the shell reports command boundaries")
			require.Equal(t, terminal.ExitedWith(0), p.WaitExit())
			after, err := filepath.Glob("/tmp/shellgate.*")
			require.NoError(t, err)
			require.Subset(t, before, after, "the scripts' directory is gone once the shell has read them")
		})
	}
}

func TestSSHHostDownAtTheFirstDialIsDialledAgainInTheBackground(t *testing.T) {
	s := sshtest.Start(t)
	require.NoError(t, s.Kill())
	sp := ownSpawner(t, s)
	require.Error(t, sp.Connect(context.Background()))

	require.NoError(t, s.Restart())

	// Nothing asks for the host; the spawner's own redial brings it back.
	require.Eventually(t, func() bool { return sp.Health().Connected }, contract.DefaultTimeout, 50*time.Millisecond)
}
