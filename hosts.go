package shellgate

import (
	"context"
	"fmt"
	"log/slog"
	"sort"

	"github.com/shellgate/shellgate/adapters/metrics"
	"github.com/shellgate/shellgate/adapters/spawner/local"
	sshspawner "github.com/shellgate/shellgate/adapters/spawner/ssh"
	"github.com/shellgate/shellgate/ports"
)

// HostConfig is one machine under `hosts:`, reached over SSH.
type HostConfig struct {
	// SSH is user@host[:port].
	SSH string `yaml:"ssh"`
	// IdentityFile is the private key (without a passphrase) to sign in with.
	IdentityFile string `yaml:"identity_file"`
	// KnownHosts is the known_hosts file the host's key must be in; the
	// key is always checked, never learnt. Default ~/.ssh/known_hosts.
	KnownHosts string `yaml:"known_hosts"`
	// Shell is the shell a terminal opens there; empty means the remote
	// user's login shell.
	Shell string `yaml:"shell"`
}

// remoteHosts are the configured hosts' spawners, by name.
type remoteHosts struct {
	byName map[string]*sshspawner.Spawner
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

// names lists the configured hosts, sorted (main is not among them).
func (r *remoteHosts) names() []string {
	out := make([]string, 0, len(r.byName))
	for n := range r.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// health reports every host, in name order.
func (r *remoteHosts) health() []sshspawner.Health {
	out := make([]sshspawner.Health, 0, len(r.byName))
	for _, n := range r.names() {
		out = append(out, r.byName[n].Health())
	}
	return out
}

// checkHosts validates the `hosts:` section.
func checkHosts(hosts map[string]HostConfig) error {
	for name, h := range hosts {
		switch {
		case name == ports.MainHost:
			return fmt.Errorf("hosts: %q always means this machine and cannot be configured; give the host another name", name)
		case name == "":
			return fmt.Errorf("hosts: a host needs a name")
		case h.SSH == "":
			return fmt.Errorf("hosts.%s: ssh (user@host[:port]) is required", name)
		case h.IdentityFile == "":
			return fmt.Errorf("hosts.%s: identity_file is required", name)
		}
		if _, _, err := sshspawner.ParseTarget(h.SSH); err != nil {
			return fmt.Errorf("hosts.%s: %w", name, err)
		}
	}
	return nil
}

// newRemoteHosts makes one spawner per configured host. Each dials at
// start in the background, so that health is known early and an
// unreachable host delays nothing; all close at stop, ending their
// connections.
func newRemoteHosts(cfg Config, log *slog.Logger) (*remoteHosts, error) {
	if err := checkHosts(cfg.Hosts); err != nil {
		return nil, err
	}
	r := &remoteHosts{byName: map[string]*sshspawner.Spawner{}, log: log, done: make(chan struct{})}
	for name, h := range cfg.Hosts {
		user, addr, _ := sshspawner.ParseTarget(h.SSH)
		known := h.KnownHosts
		if known == "" {
			known = "~/.ssh/known_hosts"
		}
		r.byName[name] = sshspawner.New(sshspawner.Config{
			Name: name, Addr: addr, User: user, IdentityFile: h.IdentityFile, KnownHosts: known,
		})
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r, nil
}

// start dials every host in the background.
func (r *remoteHosts) start() {
	go func() {
		defer close(r.done)
		for _, n := range r.names() {
			if err := r.byName[n].Connect(r.ctx); err != nil {
				r.log.Warn("host unreachable", "host", n, "err", err)
			} else {
				r.log.Info("host connected", "host", n)
			}
		}
	}()
}

// stop calls off the dialling and closes every host's connections.
func (r *remoteHosts) stop() {
	r.cancel()
	<-r.done
	for _, sp := range r.byName {
		_ = sp.Close()
	}
}

// newSpawner routes each spec to its machine: this one through the
// sandbox's spawner (which confines what asks for it), the others over SSH.
func newSpawner(here ports.Spawner, hosts *remoteHosts) ports.Spawner {
	byName := make(map[string]ports.Spawner, len(hosts.byName))
	for n, sp := range hosts.byName {
		byName[n] = sp
	}
	return local.NewRouter(here, byName)
}

// HostHealth is one host in /healthz, as the daemon reports it and the
// CLI reads it.
type HostHealth struct {
	Name      string  `json:"name"`
	Addr      string  `json:"addr,omitempty"`
	Connected bool    `json:"connected"`
	LastError string  `json:"last_error,omitempty"`
	RoundTrip float64 `json:"round_trip_ms,omitempty"`
	Terminals int     `json:"terminals"`
	// Connections counts the SSH connections to the host (more than one
	// when its server limits sessions per connection).
	Connections int `json:"connections"`
}

// hostsHealth lists main (always up: it is this daemon) and each host.
func hostsHealth(r *remoteHosts) []HostHealth {
	out := []HostHealth{{Name: ports.MainHost, Connected: true}}
	for _, h := range r.health() {
		out = append(out, HostHealth{
			Name: h.Name, Addr: h.Addr, Connected: h.Connected, LastError: h.LastError,
			RoundTrip: float64(h.RoundTrip.Microseconds()) / 1000, Terminals: h.Sessions, Connections: h.Connections,
		})
	}
	return out
}

func hostStates(r *remoteHosts) []metrics.HostState {
	var out []metrics.HostState
	for _, h := range r.health() {
		out = append(out, metrics.HostState{Name: h.Name, Up: h.Connected, RoundTrip: h.RoundTrip, Sessions: h.Sessions})
	}
	return out
}

// remoteShells is the terminal host's view of the hosts: each with its shell.
func remoteShells(cfg Config) map[string]string {
	out := make(map[string]string, len(cfg.Hosts))
	for n, h := range cfg.Hosts {
		out[n] = h.Shell
	}
	return out
}
