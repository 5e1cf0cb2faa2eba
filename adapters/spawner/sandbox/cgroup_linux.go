package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// cgroups gives every confined command a cgroup of its own in each
// hierarchy that can limit it: the pids and memory controllers, from cgroup
// v2 where it has them and from v1 where they are mounted there (the kernel
// here mounts v1 controllers beside an empty v2 hierarchy), plus the v2
// hierarchy itself for cgroup.kill. The daemon makes the groups; the
// command's helper joins them before it starts anything, so every process
// of the command is counted from its first fork.
type cgroups struct {
	// bases are this daemon's parent groups, one per hierarchy used.
	bases []hierarchy
	next  atomic.Int64
}

type hierarchy struct {
	dir    string // this daemon's parent group
	pids   string // the pids limit file's name, or ""
	memory string // the memory limit file's name, or ""
	kill   bool   // cgroup.kill ends every member at once (v2)
}

// instances numbers the sandboxes of this process, so each has its own
// parent groups.
var instances atomic.Int64

// group is one command's set of cgroups.
type group struct {
	dirs []string
	kill []bool
}

// newCgroups finds the hierarchies this daemon may make groups in and makes
// its parent group in each; it returns nil (and why) when none can limit a
// command.
func newCgroups() (*cgroups, string) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, "cannot read /proc/self/cgroup"
	}
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, "cannot read the cgroup mounts"
	}
	c := &cgroups{}
	n := instances.Add(1)
	sc := bufio.NewScanner(strings.NewReader(string(self)))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		ctrls, path := parts[1], parts[2]
		var h hierarchy
		var root string
		switch ctrls {
		case "":
			root = mounts["cgroup2"]
			if root == "" {
				continue
			}
			h.kill = true
			avail, _ := os.ReadFile(filepath.Join(root, path, "cgroup.controllers"))
			if strings.Contains(" "+string(avail)+" ", " pids ") {
				h.pids = "pids.max"
			}
			if strings.Contains(" "+strings.TrimSpace(string(avail))+" ", " memory ") {
				h.memory = "memory.max"
			}
		case "pids":
			root, h.pids = mounts["pids"], "pids.max"
		case "memory":
			root, h.memory = mounts["memory"], "memory.limit_in_bytes"
		default:
			continue
		}
		if root == "" {
			continue
		}
		parent := filepath.Join(root, path)
		sweepStale(parent)
		dir, err := makeParent(parent, n)
		if err != nil {
			continue
		}
		h.dir = dir
		if h.kill && (h.pids != "" || h.memory != "") {
			// Controllers reach a child group only once enabled here.
			var enable []string
			if h.pids != "" {
				enable = append(enable, "+pids")
			}
			if h.memory != "" {
				enable = append(enable, "+memory")
			}
			if os.WriteFile(filepath.Join(h.dir, "cgroup.subtree_control"), []byte(strings.Join(enable, " ")), 0) != nil {
				h.pids, h.memory = "", ""
			}
		}
		c.bases = append(c.bases, h)
	}
	if !c.limits("pids") {
		c.close()
		return nil, "no cgroup hierarchy with a pids controller can be written"
	}
	return c, ""
}

// parentPrefix starts the name of every daemon's parent group; the rest is
// "<pid>-<instance>".
const parentPrefix = "shellgate-"

// makeParent makes this sandbox's parent group under parent, named for this
// process and instance n. A group of that name can only be left over from
// an earlier process that had the same pid (pids are reused, and a daemon
// that was killed never removed its groups): makeParent removes it when it
// is empty, and otherwise takes the next free name, so a leftover never
// makes a command's group collide with one that is already there.
func makeParent(parent string, n int64) (string, error) {
	pid := strconv.Itoa(os.Getpid())
	var err error
	for try := int64(0); try < 100; try++ {
		dir := filepath.Join(parent, parentPrefix+pid+"-"+strconv.FormatInt(n, 10))
		if try > 0 {
			dir += "." + strconv.FormatInt(try, 10)
		}
		if err = os.Mkdir(dir, 0o755); err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", err
		}
		if removeGroupTree(dir) {
			if err = os.Mkdir(dir, 0o755); err == nil {
				return dir, nil
			}
		}
	}
	return "", err
}

// sweepStale removes the parent groups (and their commands' groups) left by
// daemons that are no longer running; a group that still has members stays.
func sweepStale(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), parentPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			continue // its daemon may still be running
		}
		removeGroupTree(filepath.Join(parent, e.Name()))
	}
}

// removeGroupTree removes a parent group's command groups and then the
// group itself; it reports whether the group is gone. The kernel refuses to
// remove a group that has members, so nothing running is touched.
func removeGroupTree(dir string) bool {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	err := os.Remove(dir)
	return err == nil || errors.Is(err, os.ErrNotExist)
}

// cgroupMounts maps "cgroup2" and each v1 controller to its mount point.
func cgroupMounts() (map[string]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 {
			continue
		}
		switch qf[0] {
		case "cgroup2":
			if _, seen := out["cgroup2"]; !seen {
				out["cgroup2"] = pf[4]
			}
		case "cgroup":
			for _, opt := range strings.Split(qf[2], ",") {
				if opt == "pids" || opt == "memory" {
					out[opt] = pf[4]
				}
			}
		}
	}
	return out, sc.Err()
}

// limits reports whether some hierarchy has the controller.
func (c *cgroups) limits(ctrl string) bool {
	for _, h := range c.bases {
		if (ctrl == "pids" && h.pids != "") || (ctrl == "memory" && h.memory != "") {
			return true
		}
	}
	return false
}

// describe says what the groups limit, for the status.
func (c *cgroups) describe() string {
	var v1, v2 []string
	for _, h := range c.bases {
		var ctrls []string
		if h.pids != "" {
			ctrls = append(ctrls, "pids")
		}
		if h.memory != "" {
			ctrls = append(ctrls, "memory")
		}
		if h.kill {
			v2 = append(v2, append(ctrls, "kill")...)
		} else {
			v1 = append(v1, ctrls...)
		}
	}
	var parts []string
	if len(v2) > 0 {
		parts = append(parts, "cgroup v2 ("+strings.Join(v2, ", ")+")")
	}
	if len(v1) > 0 {
		parts = append(parts, "cgroup v1 ("+strings.Join(v1, ", ")+")")
	}
	return strings.Join(parts, " + ")
}

// create makes one command's groups with its limits.
func (c *cgroups) create(maxPids int, maxMemory int64) (*group, error) {
	n := c.next.Add(1)
	g := &group{}
	for _, h := range c.bases {
		dir := filepath.Join(h.dir, "cmd-"+strconv.FormatInt(n, 10))
		if err := os.Mkdir(dir, 0o755); err != nil {
			g.remove()
			return nil, fmt.Errorf("make cgroup %s: %w", dir, err)
		}
		g.dirs, g.kill = append(g.dirs, dir), append(g.kill, h.kill)
		if h.pids != "" && maxPids > 0 {
			if err := os.WriteFile(filepath.Join(dir, h.pids), []byte(strconv.Itoa(maxPids)), 0); err != nil {
				g.remove()
				return nil, fmt.Errorf("limit pids in %s: %w", dir, err)
			}
		}
		if h.memory != "" && maxMemory > 0 {
			if err := os.WriteFile(filepath.Join(dir, h.memory), []byte(strconv.FormatInt(maxMemory, 10)), 0); err != nil {
				g.remove()
				return nil, fmt.Errorf("limit memory in %s: %w", dir, err)
			}
		}
	}
	return g, nil
}

// join puts pid (and its threads) in every group.
func (g *group) join(pid int) error {
	for _, dir := range g.dirs {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("join cgroup %s: %w", dir, err)
		}
	}
	return nil
}

// end kills every process still in the groups and removes them. A group
// can only be removed once its last member is reaped, which the kernel does
// a moment after the kill; end keeps trying for a while.
func (g *group) end() {
	for i, dir := range g.dirs {
		if g.kill[i] {
			_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		left := 0
		for _, dir := range g.dirs {
			for _, pid := range members(dir) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				left++
			}
		}
		if left == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(delay) // the kernel reaps asynchronously; nothing to wait on
	}
	g.remove()
}

func (g *group) remove() {
	for i := len(g.dirs) - 1; i >= 0; i-- {
		_ = os.Remove(g.dirs[i])
	}
}

// members lists the pids in a group.
func members(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}

// close removes the daemon's parent groups (once its commands' are gone).
func (c *cgroups) close() {
	for _, h := range c.bases {
		_ = os.Remove(h.dir)
	}
}
