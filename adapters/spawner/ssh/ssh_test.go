package ssh_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/shellgate/shellgate/adapters/spawner/contract"
	sshspawner "github.com/shellgate/shellgate/adapters/spawner/ssh"
	"github.com/shellgate/shellgate/adapters/spawner/ssh/sshtest"
	"github.com/shellgate/shellgate/ports"
)

// server is the package's sshd, and shared the one spawner (so one
// connection) every contract case runs on.
var (
	server *sshtest.Server
	shared *sshspawner.Spawner
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(contract.NoChildrenLeft(withServer{m}))
}

// withServer starts sshd before the tests and stops it, and closes the
// shared spawner, before the leak checks run.
type withServer struct{ m *testing.M }

func (w withServer) Run() int {
	dir, err := os.MkdirTemp("", "shellgate-sshd-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	server, err = sshtest.New(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	shared = newSpawner(server)
	code := w.m.Run()
	if err := shared.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "closing the spawner:", err)
		code = 1
	}
	if err := server.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	return code
}

func newSpawner(s *sshtest.Server) *sshspawner.Spawner {
	return sshspawner.New(sshspawner.Config{
		Name: "frontend", Addr: s.Addr, User: s.User,
		IdentityFile: s.IdentityFile, KnownHosts: s.KnownHosts,
	})
}

func harness(pty bool) contract.Harness {
	return contract.Shell(func(*testing.T) ports.Spawner { return shared }, pty)
}

func TestSSHPipesContract(t *testing.T) { contract.Run(t, harness(false)) }

func TestSSHPTYContract(t *testing.T) { contract.Run(t, harness(true)) }
