package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLeftoverGroupsNeverCollideWithANewSandbox stands in for a daemon that
// was killed: its groups stay behind, and a later process may get its pid.
// The new sandbox must still make its commands' groups, and sweeps away the
// groups of daemons that are gone.
func TestLeftoverGroupsNeverCollideWithANewSandbox(t *testing.T) {
	probe, why := newCgroups()
	require.NotNil(t, probe, "no cgroups here: %s", why)
	var parents []string
	for _, h := range probe.bases {
		parents = append(parents, filepath.Dir(h.dir))
	}
	probe.close()

	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	deadPid := strconv.Itoa(dead.Process.Pid)
	next := strconv.FormatInt(instances.Load()+1, 10)
	var stale, reused []string
	for _, parent := range parents {
		s := filepath.Join(parent, parentPrefix+deadPid+"-1")
		r := filepath.Join(parent, parentPrefix+strconv.Itoa(os.Getpid())+"-"+next)
		for _, dir := range []string{s, r} {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "cmd-1"), 0o755))
		}
		stale, reused = append(stale, s), append(reused, r)
		t.Cleanup(func() { removeGroupTree(s); removeGroupTree(r) })
	}

	c, why := newCgroups()
	require.NotNil(t, c, "no cgroups here: %s", why)
	defer c.close()
	for _, dir := range stale {
		require.NoDirExists(t, dir, "the group of a daemon that is gone must be swept")
	}
	g, err := c.create(8, 0)
	require.NoError(t, err, "a leftover group of the same name must not stop a command")
	for _, dir := range g.dirs {
		require.DirExists(t, dir)
	}
	g.end()
	for _, dir := range g.dirs {
		require.NoDirExists(t, dir)
	}
	c.close()
	for _, dir := range reused {
		require.NoDirExists(t, dir)
	}
}
