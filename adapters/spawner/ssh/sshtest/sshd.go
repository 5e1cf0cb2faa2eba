// Package sshtest runs a real OpenSSH server for tests: sshd on a free
// loopback port, as the current user, with a host key, a client key and
// its authorized_keys generated into a temporary directory, and a config
// of its own (no PAM, no system file read or changed). Stop, or the end of
// the test, ends it and every process it started.
package sshtest

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
	"golang.org/x/sys/unix"
)

// SSHD is where sshd(8) is installed (it must be run by its absolute path).
const SSHD = "/usr/sbin/sshd"

// Server is one running sshd and what a client needs to reach it.
type Server struct {
	// Addr is 127.0.0.1:port.
	Addr string
	// User is the user to sign in as (the current one).
	User string
	// IdentityFile is the client's private key; KnownHosts holds the
	// server's host key for Addr.
	IdentityFile, KnownHosts string
	// Dir holds the keys and the config.
	Dir string

	config  string
	hostKey ed25519.PrivateKey
	opts    Options

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	logs *strings.Builder
	// logMu guards logs, written by the goroutine reading sshd's stderr.
	logMu sync.Mutex
}

// Available says whether sshd is installed; tests skip without it only
// when asked to (CI installs it).
func Available() error {
	if _, err := os.Stat(SSHD); err != nil {
		return fmt.Errorf("sshd is not installed at %s (apt-get install openssh-server): %w", SSHD, err)
	}
	return nil
}

// Start starts a server for t and stops it when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWith(t, Options{})
}

// Options change the server's config from the defaults below.
type Options struct {
	// MaxSessions is sshd's sessions per connection; zero means 1000.
	MaxSessions int
}

// StartWith is Start with opts.
func StartWith(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := NewWith(t.TempDir(), opts)
	if err != nil {
		t.Fatalf("sshtest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("sshtest: %v", err)
		}
	})
	return s
}

// New writes keys and a config into dir and starts sshd; Stop ends it.
func New(dir string) (*Server, error) { return NewWith(dir, Options{}) }

// NewWith is New with opts.
func NewWith(dir string, opts Options) (*Server, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	u, err := user.Current()
	if err != nil {
		return nil, err
	}
	if opts.MaxSessions == 0 {
		opts.MaxSessions = 1000
	}
	s := &Server{User: u.Username, Dir: dir, opts: opts}
	if err := s.writeKeys(); err != nil {
		return nil, err
	}
	// sshd refuses to start without its privilege separation directory.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		return nil, fmt.Errorf("sshd's privilege separation directory: %w", err)
	}
	if err := s.Restart(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Server) writeKeys() error {
	_, hostKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	_, clientKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	s.hostKey = hostKey
	if err := writePrivate(filepath.Join(s.Dir, "host_ed25519"), hostKey); err != nil {
		return err
	}
	s.IdentityFile = filepath.Join(s.Dir, "client_ed25519")
	if err := writePrivate(s.IdentityFile, clientKey); err != nil {
		return err
	}
	clientPub, err := xssh.NewPublicKey(clientKey.Public())
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.Dir, "authorized_keys"), xssh.MarshalAuthorizedKey(clientPub), 0o600)
}

func writePrivate(path string, key ed25519.PrivateKey) error {
	block, err := xssh.MarshalPrivateKey(key, "")
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(block), 0o600)
}

// WriteKnownHosts writes the known_hosts file with key for Addr; a test
// of a wrong host key writes another.
func (s *Server) WriteKnownHosts(key xssh.PublicKey) error {
	line := knownhosts.Line([]string{knownhosts.Normalize(s.Addr)}, key)
	return os.WriteFile(s.KnownHosts, []byte(line+"\n"), 0o600)
}

// HostKey is the server's public host key.
func (s *Server) HostKey() xssh.PublicKey {
	pub, _ := xssh.NewPublicKey(s.hostKey.Public())
	return pub
}

// Restart starts sshd again after Kill, on the same port when it is still
// free (a new one otherwise, written to Addr and known_hosts).
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("sshd is running")
	}
	for attempt := 0; ; attempt++ {
		addr := s.Addr
		if addr == "" || attempt > 0 {
			var err error
			if addr, err = freePort(); err != nil {
				return err
			}
		}
		err := s.startLocked(addr)
		if err == nil {
			return nil
		}
		if attempt >= 5 || !strings.Contains(err.Error(), "Address already in use") {
			return err
		}
	}
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func (s *Server) startLocked(addr string) error {
	_, port, _ := net.SplitHostPort(addr)
	s.config = filepath.Join(s.Dir, "sshd_config")
	cfg := strings.Join([]string{
		"ListenAddress 127.0.0.1",
		"Port " + port,
		"HostKey " + filepath.Join(s.Dir, "host_ed25519"),
		"AuthorizedKeysFile " + filepath.Join(s.Dir, "authorized_keys"),
		"PidFile none",
		"UsePAM no",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"PubkeyAuthentication yes",
		"PermitRootLogin prohibit-password",
		"AllowUsers " + s.User,
		// The temporary directory's modes are the test's, not a home's.
		"StrictModes no",
		"PrintMotd no",
		"PrintLastLog no",
		// The contract keeps 200 processes on one connection.
		"MaxSessions " + strconv.Itoa(s.opts.MaxSessions),
		"MaxStartups 100",
		// Debian's bash reads ~/.bashrc for a command run by sshd when its
		// shell level is under 2; the tests run as whoever runs them, and
		// that user's own ~/.bashrc (a slow pyenv init, say) is not under
		// test. The spawner copes with what a login script prints either way.
		"SetEnv SHLVL=1",
		"LogLevel " + logLevel(),
		"",
	}, "\n")
	if err := os.WriteFile(s.config, []byte(cfg), 0o600); err != nil {
		return err
	}
	s.Addr = addr
	s.KnownHosts = filepath.Join(s.Dir, "known_hosts")
	if err := s.WriteKnownHosts(s.HostKey()); err != nil {
		return err
	}

	cmd := exec.Command(SSHD, "-D", "-e", "-f", s.config)
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start sshd: %w", err)
	}
	logs := &strings.Builder{}
	logMu := &s.logMu
	ready := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			logMu.Lock()
			logs.WriteString(line + "\n")
			logMu.Unlock()
			if !signalled && strings.Contains(line, "Server listening on") {
				signalled = true
				ready <- nil
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		err := cmd.Wait()
		if !signalled {
			logMu.Lock()
			ready <- fmt.Errorf("sshd exited before it listened (%v): %s", err, logs.String())
			logMu.Unlock()
		}
	}()
	// sshd says it listens once its socket is bound; nothing is waited for
	// by time but this line or its exit.
	timer := time.NewTimer(time.Minute)
	defer timer.Stop()
	select {
	case err := <-ready:
		if err != nil {
			<-done
			return err
		}
	case <-timer.C:
		_ = cmd.Process.Kill()
		<-done
		return errors.New("sshd did not listen within a minute")
	}
	s.cmd, s.done, s.logs = cmd, done, logs
	return nil
}

// Kill ends sshd at once, with every process it started — the per
// connection servers and the sessions' commands — as a machine going down
// would. The client's connections see their peer vanish.
func (s *Server) Kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.killLocked()
}

func (s *Server) killLocked() error {
	if s.cmd == nil {
		return nil
	}
	pid := s.cmd.Process.Pid
	// Stopped first, so that nothing forks while the tree is listed.
	tree := []int{pid}
	_ = unix.Kill(pid, unix.SIGSTOP)
	for seen := map[int]bool{pid: true}; ; {
		grew := false
		for _, child := range descendants(tree) {
			if !seen[child] {
				seen[child] = true
				tree = append(tree, child)
				_ = unix.Kill(child, unix.SIGSTOP)
				grew = true
			}
		}
		if !grew {
			break
		}
	}
	for _, p := range tree {
		_ = unix.Kill(p, unix.SIGKILL)
	}
	<-s.done
	s.cmd = nil
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var errs []error
	for _, p := range tree[1:] {
		if err := waitGone(ctx, p); err != nil {
			errs = append(errs, fmt.Errorf("sshd's process %d outlived it: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// Stop ends the server and everything it started.
func (s *Server) Stop() error { return s.Kill() }

// Logs is what sshd has logged so far.
func (s *Server) Logs() string {
	s.mu.Lock()
	logs := s.logs
	s.mu.Unlock()
	if logs == nil {
		return ""
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return logs.String()
}

// descendants lists the children of every pid in parents, from /proc.
func descendants(parents []int) []int {
	want := map[int]bool{}
	for _, p := range parents {
		want[p] = true
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(raw)
		end := strings.LastIndexByte(s, ')')
		if end < 0 {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 2 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		if want[ppid] {
			out = append(out, pid)
		}
	}
	return out
}

// waitGone waits on a pidfd until pid has exited.
func waitGone(ctx context.Context, pid int) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	deadline, _ := ctx.Deadline()
	for {
		ms := int(time.Until(deadline).Milliseconds())
		if ms <= 0 {
			return context.DeadlineExceeded
		}
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, ms)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
	}
}

// logLevel is sshd's: SHELLGATE_SSHD_LOG_LEVEL (DEBUG3 …) when debugging.
func logLevel() string {
	if l := os.Getenv("SHELLGATE_SSHD_LOG_LEVEL"); l != "" {
		return l
	}
	return "INFO"
}
