package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConfigFileIsRememberedAbsolute(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.WriteFile("shellgate.yaml", []byte("log_level: warn\n"), 0o600))
	root := newRootCmd()
	serve, _, err := root.Find([]string{"serve"})
	require.NoError(t, err)
	require.NoError(t, serve.ParseFlags([]string{"--config", "shellgate.yaml", "--data-dir", filepath.Join(dir, "data")}))

	cfg, err := configFromFlags(serve)

	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "shellgate.yaml"), cfg.File)
	require.Equal(t, "warn", cfg.LogLevel)
}
