package shellgate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/adapters/runguard"
	"github.com/shellgate/shellgate/domain/risk"
)

func TestTerminalsDoNotInheritTheDaemonsSignIn(t *testing.T) {
	t.Setenv("SHELLGATE_TOKEN", "sg_admin-secret")
	t.Setenv("SHELLGATE_URL", "http://127.0.0.1:7681/#token=sg_admin-secret")
	dataDir := t.TempDir()
	t.Setenv("SHELLGATE_DATA_DIR", dataDir)
	t.Setenv("KEEP_ME", "1")

	env := terminalsConfig(testConfig(t), runguard.Run{ID: "0123456789abcdef0123456789abcdef"}).Env

	for _, kv := range env {
		require.NotContains(t, kv, "sg_admin-secret", "terminals inherit %s", kv)
	}
	require.Contains(t, env, "KEEP_ME=1", "the rest of the environment stays")
	require.Contains(t, env, "SHELLGATE_DATA_DIR="+dataDir, "the CLI in a terminal still finds the data directory")
}

func TestMaxConcurrentCommandsDefaultsToFourAndIsConfigurable(t *testing.T) {
	require.Equal(t, 4, defaultConfig().AgentTerminal.MaxConcurrentCommands)
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte("agent_terminal:\n  max_concurrent_commands: 2\n"), 0o600))
	cfg, err := loadConfig(path)
	require.NoError(t, err)
	require.Equal(t, 2, cfg.AgentTerminal.MaxConcurrentCommands)
}

// The gate's classifier is told the daemon's own files at wiring time,
// whatever they are called here: the data directory (also through a
// symlink and through ~), an audit log kept elsewhere, the config file.
func TestGateClassifierGuardsTheDaemonsOwnFiles(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	real := filepath.Join(home, "real-data")
	require.NoError(t, os.MkdirAll(real, 0o700))
	link := filepath.Join(home, ".local", "share", "shellgate")
	require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o700))
	require.NoError(t, os.Symlink(real, link))
	elsewhere := t.TempDir()
	cfg := testConfig(t)
	cfg.DataDir = link
	cfg.AgentTerminal.AuditLog = filepath.Join(elsewhere, "audit.log")
	cfg.File = filepath.Join(elsewhere, "shellgate.yaml")

	c := newGateClassifier(cfg)

	for cmd, want := range map[string]risk.Level{
		"cat " + link + "/credentials.json":              risk.High,
		"cat " + real + "/credentials.json":              risk.High,
		"cat ~/.local/share/shellgate/credentials.json":  risk.High,
		"cd " + real + " && cat credentials.json":        risk.High,
		"cat " + cfg.File:                                risk.High,
		"printenv":                                       risk.Safe,
		"sed -i s/member/admin/ " + link + "/users.yaml": risk.Forbidden,
		"truncate -s 0 " + cfg.AgentTerminal.AuditLog:    risk.Forbidden,
		"mv " + cfg.AgentTerminal.AuditLog + " /tmp/x":   risk.Forbidden,
		"rm -rf " + real:                                 risk.Forbidden,
		"ls -la " + link:                                 risk.Safe,
		"cat " + filepath.Join(home, "notes.txt"):        risk.Safe,
	} {
		got := c.Classify(cmd)
		require.Equal(t, want, got.Level, "%s: %q", cmd, got.Reasons)
	}
}
