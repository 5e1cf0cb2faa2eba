// Package ssh implements ports.Spawner on another machine over SSH, with
// golang.org/x/crypto/ssh: one connection per host, shared by all of that
// host's processes as session channels (as OpenSSH's ControlMaster shares
// one), kept alive and dialled again when it drops. A process runs on pipes
// (an `exec` request; standard output and standard error are the channel's
// two streams) or under a pty (`pty-req` with the spec's size and TERM,
// `window-change` on resize); signals are `signal` requests, and the exit
// status comes from `exit-status` or `exit-signal`.
//
// The host key is always checked against the configured known_hosts file;
// an unknown or different key is refused, never learnt.
package ssh

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/shellgate/shellgate/ports"
)

// Defaults for the connection's timing.
const (
	DefaultDialTimeout       = 15 * time.Second
	DefaultKeepaliveInterval = 15 * time.Second
	DefaultKeepaliveTimeout  = 15 * time.Second
	DefaultMaxBackoff        = 30 * time.Second
)

// Config says how to reach one host.
type Config struct {
	// Name is the host's name in shellgate's configuration, for messages.
	Name string
	// Addr is host:port.
	Addr string
	// User is the remote user.
	User string
	// IdentityFile is the private key the daemon signs in with.
	IdentityFile string
	// KnownHosts is the known_hosts file the host's key must be in.
	KnownHosts string
	// DialTimeout bounds a dial and its handshake.
	DialTimeout time.Duration
	// KeepaliveInterval is how often the connection is checked (and its
	// round trip measured); KeepaliveTimeout is how long an answer may
	// take before the connection counts as dropped.
	KeepaliveInterval, KeepaliveTimeout time.Duration
	// MaxBackoff caps the wait between two dials of a dropped connection.
	MaxBackoff time.Duration
}

// ParseTarget reads "user@host[:port]" (port 22 by default).
func ParseTarget(target string) (user, addr string, err error) {
	user, hostport, ok := strings.Cut(target, "@")
	if !ok || user == "" || hostport == "" {
		return "", "", fmt.Errorf("ssh target %q is not user@host[:port]", target)
	}
	if _, _, err := net.SplitHostPort(hostport); err != nil {
		if strings.Count(hostport, ":") > 1 && !strings.HasPrefix(hostport, "[") {
			hostport = "[" + hostport + "]"
		}
		hostport = net.JoinHostPort(strings.Trim(hostport, "[]"), "22")
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil || host == "" {
		return "", "", fmt.Errorf("ssh target %q is not user@host[:port]", target)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", "", fmt.Errorf("ssh target %q has no valid port", target)
	}
	return user, net.JoinHostPort(host, port), nil
}

// Health is what the spawner knows of its host's connection.
type Health struct {
	// Name and Addr say which host.
	Name, Addr string
	// Connected is true while a connection is up.
	Connected bool
	// LastError is why the last dial failed or the connection dropped;
	// empty once a connection is up again.
	LastError string
	// RoundTrip is the last keepalive's round trip; zero before the first.
	RoundTrip time.Duration
	// Sessions is how many processes the host's connections carry now.
	Sessions int
	// Connections is how many connections are open: the main one and any
	// opened because the server limits sessions per connection.
	Connections int
}

// Spawner starts processes on one host over SSH.
type Spawner struct {
	cfg Config

	mu        sync.Mutex
	client    *xssh.Client
	dialing   chan struct{} // closed when the dial in progress ends
	lastErr   string
	roundTrip time.Duration
	sessions  int
	closed    bool
	// watching is true while the supervisor goroutine runs.
	watching bool
	// overflow are further connections, dialled when the server refuses
	// the main one another session (OpenSSH's MaxSessions); each lives
	// until it drops or the spawner closes.
	overflow []*xssh.Client

	// life ends when the spawner closes; every dial and wait of its own
	// goroutines stops with it.
	life context.Context
	end  context.CancelFunc
	wg   sync.WaitGroup
}

var _ ports.Spawner = (*Spawner)(nil)

// New returns a spawner for the host cfg describes. It dials nothing until
// the first Spawn (or Connect).
func New(cfg Config) *Spawner {
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.KeepaliveInterval <= 0 {
		cfg.KeepaliveInterval = DefaultKeepaliveInterval
	}
	if cfg.KeepaliveTimeout <= 0 {
		cfg.KeepaliveTimeout = DefaultKeepaliveTimeout
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	life, end := context.WithCancel(context.Background())
	return &Spawner{cfg: cfg, life: life, end: end}
}

// Name is the host's configured name.
func (s *Spawner) Name() string { return s.cfg.Name }

// Health reports the connection's state.
func (s *Spawner) Health() Health {
	s.mu.Lock()
	defer s.mu.Unlock()
	conns := len(s.overflow)
	if s.client != nil {
		conns++
	}
	return Health{
		Name: s.cfg.Name, Addr: s.cfg.Addr, Connected: s.client != nil,
		LastError: s.lastErr, RoundTrip: s.roundTrip, Sessions: s.sessions, Connections: conns,
	}
}

// ErrClosed is returned once the spawner has been closed.
var ErrClosed = errors.New("the host's spawner is closed")

// Connect dials the host unless a connection is up, and returns the dial's
// error. The daemon calls it at start so that health is known early.
func (s *Spawner) Connect(ctx context.Context) error {
	_, err := s.conn(ctx)
	return err
}

// conn returns the host's connection, dialling it when there is none. One
// dial runs at a time; callers arriving meanwhile share its outcome.
func (s *Spawner) conn(ctx context.Context) (*xssh.Client, error) {
	for {
		s.mu.Lock()
		switch {
		case s.closed:
			s.mu.Unlock()
			return nil, ErrClosed
		case s.client != nil:
			c := s.client
			s.mu.Unlock()
			return c, nil
		case s.dialing != nil:
			wait := s.dialing
			s.mu.Unlock()
			select {
			case <-wait:
				s.mu.Lock()
				c, last := s.client, s.lastErr
				s.mu.Unlock()
				if c == nil {
					return nil, s.downError(last)
				}
				return c, nil
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		done := make(chan struct{})
		s.dialing = done
		s.mu.Unlock()

		c, err := s.dial(ctx)
		s.mu.Lock()
		s.dialing = nil
		close(done)
		if err != nil {
			s.lastErr = err.Error()
			// A host down from the first dial is dialled again in the
			// background too, so its health shows when it is back.
			s.superviseLocked()
			s.mu.Unlock()
			return nil, s.downError(err.Error())
		}
		if s.closed {
			s.mu.Unlock()
			_ = c.Close()
			return nil, ErrClosed
		}
		s.client, s.lastErr = c, ""
		s.superviseLocked()
		s.mu.Unlock()
		return c, nil
	}
}

// MaxConnections caps the connections to one host: the main one and its
// overflow.
const MaxConnections = 16

// openSession opens a session channel on main, or, when the server refuses
// it there, on an overflow connection (dialling one while under
// MaxConnections). A server limits sessions per connection, not per user,
// so this is how one host carries more terminals than its MaxSessions.
func (s *Spawner) openSession(ctx context.Context, main *xssh.Client) (xssh.Channel, <-chan *xssh.Request, error) {
	ch, reqs, err := main.OpenChannel("session", nil)
	if !refused(err) {
		return ch, reqs, err
	}
	s.mu.Lock()
	extra := slices.Clone(s.overflow)
	s.mu.Unlock()
	for _, c := range extra {
		if ch, reqs, err2 := c.OpenChannel("session", nil); !refused(err2) {
			return ch, reqs, err2
		}
	}
	s.mu.Lock()
	full := len(s.overflow)+1 >= MaxConnections
	s.mu.Unlock()
	if full {
		return nil, nil, err
	}
	c, derr := s.dial(ctx)
	if derr != nil {
		return nil, nil, s.downError(derr.Error())
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = c.Close()
		return nil, nil, ErrClosed
	}
	s.overflow = append(s.overflow, c)
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		_ = c.Wait()
		s.mu.Lock()
		s.overflow = slices.DeleteFunc(s.overflow, func(o *xssh.Client) bool { return o == c })
		s.mu.Unlock()
	}()
	return c.OpenChannel("session", nil)
}

// refused says err is the server declining a channel (not a broken
// connection).
func refused(err error) bool {
	var oe *xssh.OpenChannelError
	return errors.As(err, &oe)
}

// Connections is how many connections to the host are open now.
func (s *Spawner) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.overflow)
	if s.client != nil {
		n++
	}
	return n
}

// superviseLocked starts the supervisor unless it runs or the spawner is
// closed.
func (s *Spawner) superviseLocked() {
	if s.watching || s.closed {
		return
	}
	s.watching = true
	s.wg.Add(1)
	go s.supervise()
}

func (s *Spawner) downError(why string) error {
	return fmt.Errorf("host %s (%s) is unreachable: %s", s.cfg.Name, s.cfg.Addr, why)
}

// dial opens and authenticates one connection. The identity and the
// known_hosts file are read on each dial, so a key put in place after the
// daemon started is used, and a host removed from known_hosts is refused.
func (s *Spawner) dial(ctx context.Context) (*xssh.Client, error) {
	cc, err := s.clientConfig()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.DialTimeout)
	defer cancel()
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return nil, err
	}
	// The handshake has no context of its own; the deadline bounds it.
	deadline, _ := ctx.Deadline()
	_ = raw.SetDeadline(deadline)
	stopCancel := context.AfterFunc(ctx, func() { _ = raw.SetDeadline(time.Unix(1, 0)) })
	conn, chans, reqs, err := xssh.NewClientConn(raw, s.cfg.Addr, cc)
	stopCancel()
	if err != nil {
		_ = raw.Close()
		var keyErr *knownhosts.KeyError
		if errors.As(err, &keyErr) {
			if len(keyErr.Want) == 0 {
				return nil, fmt.Errorf("its host key is not in %s, and shellgate never trusts a key on first use; add the host's key there (ssh-keyscan, checked against the host)", s.cfg.KnownHosts)
			}
			return nil, fmt.Errorf("its host key does not match the one in %s (%s): the host was reinstalled or someone is in the middle; check it, then fix %s", s.cfg.KnownHosts, keyErr.Want[0].String(), s.cfg.KnownHosts)
		}
		return nil, err
	}
	_ = raw.SetDeadline(time.Time{})
	return xssh.NewClient(conn, chans, reqs), nil
}

func (s *Spawner) clientConfig() (*xssh.ClientConfig, error) {
	key, err := os.ReadFile(expandHome(s.cfg.IdentityFile))
	if err != nil {
		return nil, fmt.Errorf("identity_file: %w", err)
	}
	signer, err := xssh.ParsePrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("identity_file %s: %w (a key with a passphrase cannot be used unattended)", s.cfg.IdentityFile, err)
	}
	if s.cfg.KnownHosts == "" {
		return nil, errors.New("no known_hosts file is configured, and host keys are always checked")
	}
	check, err := knownhosts.New(expandHome(s.cfg.KnownHosts))
	if err != nil {
		return nil, fmt.Errorf("known_hosts: %w", err)
	}
	return &xssh.ClientConfig{
		User:              s.cfg.User,
		Auth:              []xssh.AuthMethod{xssh.PublicKeys(signer)},
		HostKeyCallback:   check,
		HostKeyAlgorithms: knownAlgorithms(check, s.cfg.Addr),
		Timeout:           s.cfg.DialTimeout,
	}, nil
}

// knownAlgorithms lists the host key algorithms of the keys known_hosts
// holds for addr, so the server is asked for one of those: offered another
// type it also has, it would send a key the file cannot vouch for. The
// callback answers a key it does not know with the keys it does.
func knownAlgorithms(check xssh.HostKeyCallback, addr string) []string {
	probe, err := xssh.NewPublicKey(make([]byte, 32)) // an ed25519 key nobody holds
	if err != nil {
		return nil
	}
	tcp, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		tcp = &net.TCPAddr{}
	}
	var keyErr *knownhosts.KeyError
	if !errors.As(check(knownhosts.Normalize(addr), tcp, probe), &keyErr) {
		return nil
	}
	var algos []string
	seen := map[string]bool{}
	for _, k := range keyErr.Want {
		for _, a := range algorithmsFor(k.Key.Type()) {
			if !seen[a] {
				seen[a] = true
				algos = append(algos, a)
			}
		}
	}
	return algos
}

func algorithmsFor(keyType string) []string {
	if keyType == xssh.KeyAlgoRSA {
		return []string{xssh.KeyAlgoRSASHA512, xssh.KeyAlgoRSASHA256, xssh.KeyAlgoRSA}
	}
	return []string{keyType}
}

func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}

// supervise keeps the connection alive: it measures a round trip every
// KeepaliveInterval, drops a connection that does not answer in time, and
// dials a dropped one again with growing pauses until it is back or the
// spawner closes.
func (s *Spawner) supervise() {
	defer s.wg.Done()
	backoff := time.Second
	for {
		s.mu.Lock()
		c := s.client
		s.mu.Unlock()
		if c == nil {
			pause := time.NewTimer(backoff)
			select {
			case <-s.life.Done():
				pause.Stop()
				return
			case <-pause.C:
			}
			backoff = min(2*backoff, s.cfg.MaxBackoff)
			_, _ = s.conn(s.life)
			continue
		}
		backoff = time.Second
		s.watch(c)
		if s.life.Err() != nil {
			return
		}
	}
}

// watch returns once c is gone, having marked the host down.
func (s *Spawner) watch(c *xssh.Client) {
	dropped := make(chan error, 1)
	go func() { dropped <- c.Wait() }()
	s.ping(c)
	tick := time.NewTicker(s.cfg.KeepaliveInterval)
	defer tick.Stop()
	for {
		select {
		case <-s.life.Done():
			_ = c.Close()
			<-dropped
			return
		case err := <-dropped:
			s.down(c, err)
			return
		case <-tick.C:
			if !s.ping(c) {
				_ = c.Close()
				s.down(c, <-dropped)
				return
			}
		}
	}
}

// ping sends a keepalive and records its round trip; false when no answer
// came within KeepaliveTimeout.
func (s *Spawner) ping(c *xssh.Client) bool {
	start := time.Now()
	answered := make(chan error, 1)
	go func() {
		// OpenSSH answers this unknown request with a failure, which is the
		// round trip we want.
		_, _, err := c.SendRequest("keepalive@openssh.com", true, nil)
		answered <- err
	}()
	timer := time.NewTimer(s.cfg.KeepaliveTimeout)
	defer timer.Stop()
	select {
	case err := <-answered:
		if err != nil {
			return false
		}
		s.mu.Lock()
		s.roundTrip = time.Since(start)
		s.mu.Unlock()
		return true
	case <-timer.C:
		s.mu.Lock()
		s.lastErr = fmt.Sprintf("no answer to a keepalive within %v", s.cfg.KeepaliveTimeout)
		s.mu.Unlock()
		// Closing c ends the request's goroutine.
		go func() { <-answered }()
		return false
	case <-s.life.Done():
		go func() { <-answered }()
		return true
	}
}

// confirmUp checks with a keepalive that the host's connection still
// answers, and marks the host down at once if it does not (the watcher
// would too, a moment later).
func (s *Spawner) confirmUp() {
	s.mu.Lock()
	c := s.client
	s.mu.Unlock()
	if c != nil && !s.ping(c) {
		s.down(c, nil)
	}
}

func (s *Spawner) down(c *xssh.Client, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client == c {
		s.client = nil
	}
	if s.lastErr == "" {
		why := "the connection was closed"
		if err != nil && !errors.Is(err, net.ErrClosed) {
			why = "the connection dropped: " + err.Error()
		}
		s.lastErr = why
	}
}

// Close closes the connection, which ends every process's channel, and
// waits for the spawner's goroutines.
func (s *Spawner) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	c := s.client
	s.client = nil
	// A clone: a dropped connection deletes itself from s.overflow in place.
	extra := slices.Clone(s.overflow)
	s.end()
	s.mu.Unlock()
	for _, o := range extra {
		_ = o.Close()
	}
	var err error
	if c != nil {
		err = c.Close()
		if errors.Is(err, net.ErrClosed) {
			err = nil
		}
	}
	s.wg.Wait()
	return err
}

func (s *Spawner) countSession(delta int) {
	s.mu.Lock()
	s.sessions += delta
	s.mu.Unlock()
}

func newMarker() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "shellgate-start-" + hex.EncodeToString(b)
}
