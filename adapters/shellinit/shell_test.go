package shellinit

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/require"

	"github.com/shellgate/shellgate/domain/shellmarks"
	"github.com/shellgate/shellgate/domain/terminal"
)

// waitLimit bounds every wait for the shell; the machine may be busy.
const waitLimit = 15 * time.Second

// session is a real shell under a real pty, its output read through a
// shellmarks.Reader and its marks and input through a Tracker.
type session struct {
	t       *testing.T
	pty     *os.File
	chunks  chan []byte
	reader  shellmarks.Reader
	tracker *shellmarks.Tracker
	now     int64

	out   []byte // cleaned output so far
	raw   []byte // output as the shell printed it, for failure messages
	marks []shellmarks.Mark
	acts  []terminal.Action
	seen  int // marks already matched by waitMark
}

// startShell runs program through Prepare under a pty. The shell is killed
// and waited for, and the reading goroutine ended, when the test ends.
func startShell(t *testing.T, program string, args, env []string) *session {
	t.Helper()
	path, err := exec.LookPath(program)
	if err != nil {
		t.Skipf("%s is not installed: %v", program, err)
	}
	args, env, ok, err := Prepare(filepath.Join(t.TempDir(), "shellgate"), path, args, env)
	require.NoError(t, err)
	require.True(t, ok)

	cmd := exec.Command(path, args...)
	cmd.Env = env
	cmd.Dir = os.TempDir()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	require.NoError(t, err)

	s := &session{t: t, pty: f, chunks: make(chan []byte, 16), tracker: shellmarks.NewTracker("", ""), now: 1000}
	go func() {
		// The pty master's reads block and take no deadline, so a goroutine
		// reads and waitMark selects on it with a timer.
		defer close(s.chunks)
		for {
			buf := make([]byte, 4096)
			n, err := f.Read(buf)
			if n > 0 {
				s.chunks <- buf[:n]
			}
			if err != nil {
				return // EIO once the shell is gone
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		for range s.chunks { // until the reader sees the pty close
		}
		_ = f.Close()
	})
	return s
}

// typeLine types line and Enter, as a client's terminal/input would.
func (s *session) typeLine(line string) {
	s.t.Helper()
	in := []byte(line + "\r")
	s.tracker.Input(in)
	_, err := s.pty.Write(in)
	require.NoError(s.t, err)
}

// waitMark reads until a mark after the last one matched satisfies ok, and
// returns it.
func (s *session) waitMark(what string, ok func(shellmarks.Mark) bool) shellmarks.Mark {
	s.t.Helper()
	timer := time.NewTimer(waitLimit)
	defer timer.Stop()
	for {
		for ; s.seen < len(s.marks); s.seen++ {
			if m := s.marks[s.seen]; ok(m) {
				s.seen++
				return m
			}
		}
		select {
		case chunk, open := <-s.chunks:
			if !open {
				s.t.Fatalf("the shell ended while waiting for %s; output:\n%q", what, s.raw)
			}
			s.feed(chunk)
		case <-timer.C:
			s.t.Fatalf("no %s within %v; output:\n%q", what, waitLimit, s.raw)
		}
	}
}

func (s *session) feed(chunk []byte) {
	s.raw = append(s.raw, chunk...)
	first := len(s.marks)
	s.out, s.marks = s.reader.Feed(chunk, s.out, s.marks)
	for _, m := range s.marks[first:] {
		s.now++
		s.acts = s.tracker.Mark(m, time.UnixMilli(s.now), s.acts)
	}
}

// waitPrompt waits for the end of a prompt: the line editor is then
// reading, so what is typed next is the next command.
func (s *session) waitPrompt() {
	s.t.Helper()
	s.waitMark("a prompt", func(m shellmarks.Mark) bool { return m.Kind == shellmarks.PromptEnd })
}

// run types line and waits for its command to finish and the next prompt;
// it returns the finish mark and the command line the shell reported.
func (s *session) run(line string) (finished shellmarks.Mark, reported string) {
	s.t.Helper()
	s.typeLine(line)
	s.waitMark("the command line of "+line, func(m shellmarks.Mark) bool {
		if m.Kind == shellmarks.CommandLine {
			reported = m.CommandLine
		}
		return m.Kind == shellmarks.CommandStart
	})
	finished = s.waitMark("the finish of "+line, func(m shellmarks.Mark) bool { return m.Kind == shellmarks.CommandFinished })
	s.waitPrompt()
	return finished, reported
}

func (s *session) waitCwd(path string) {
	s.t.Helper()
	s.waitMark("the directory "+path, func(m shellmarks.Mark) bool { return m.Kind == shellmarks.Cwd && m.Cwd == path })
}

// requireClean checks no mark reached the cleaned output.
func (s *session) requireClean() {
	s.t.Helper()
	for _, intro := range []string{"\x1b]133;", "\x1b]633;", "\x1b]7;"} {
		require.NotContains(s.t, string(s.out), intro)
	}
}

func (s *session) executed() []string {
	var lines []string
	for _, a := range s.acts {
		if e, ok := a.(terminal.CommandExecuted); ok {
			lines = append(lines, e.CommandLine)
		}
	}
	return lines
}

func (s *session) exitCodes() []string {
	var codes []string
	for _, a := range s.acts {
		if f, ok := a.(terminal.CommandFinished); ok {
			c := "none"
			if f.ExitCode != nil {
				c = fmt.Sprint(*f.ExitCode)
			}
			codes = append(codes, c)
		}
	}
	return codes
}

func (s *session) cwds() []string {
	var cwds []string
	for _, a := range s.acts {
		if c, ok := a.(terminal.CwdChanged); ok {
			cwds = append(cwds, c.CWD)
		}
	}
	return cwds
}

// baseEnv is a small, predictable environment for a shell with home as HOME.
func baseEnv(home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"TERM=xterm-256color",
		"LANG=C.UTF-8",
		"USER=dev",
	}
}

// odd is a directory name that needs percent-encoding in OSC 7.
const odd = "dír with space"

// exercise drives the commands both shells are tested with and checks what
// the marks and the tracker made of them.
func exercise(t *testing.T, s *session, home string) {
	s.waitCwd(os.TempDir())
	s.waitPrompt()

	d, line := s.run("cd /tmp")
	require.Equal(t, 0, *d.ExitCode)
	require.Equal(t, "cd /tmp", line)
	require.Contains(t, s.cwds(), "file:///tmp")

	d, line = s.run("false")
	require.NotNil(t, d.ExitCode)
	require.Equal(t, 1, *d.ExitCode)
	require.Equal(t, "false", line)

	d, line = s.run("echo $MYVAR; echo x;y")
	require.Equal(t, 127, *d.ExitCode, "y is no command")
	require.Equal(t, "echo $MYVAR; echo x;y", line)
	require.Contains(t, string(s.out), "from-the-users-rc\r\nx\r\n", "the user's rc file ran")

	s.typeLine(`cd "$HOME/` + odd + `"`)
	s.waitCwd(filepath.Join(home, odd))

	require.Equal(t, terminal.CommandDetectionAvailable{}, s.acts[0])
	require.Equal(t, []string{"cd /tmp", "false", "echo $MYVAR; echo x;y"}, s.executed()[:3])
	require.Equal(t, []string{"0", "1", "127"}, s.exitCodes()[:3])
	require.Equal(t, "file:///tmp", s.cwds()[len(s.cwds())-2])
	require.Equal(t, shellmarks.FileURI(filepath.Join(home, odd)), s.cwds()[len(s.cwds())-1])
	s.requireClean()
}

func TestBashUnderAPtyReportsCommandsAndKeepsTheUsersBashrc(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(home, odd), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".bashrc"), []byte(
		"export MYVAR=from-the-users-rc\n"+
			"PROMPT_COMMAND='USER_STATUS=$?; USER_PC=$((USER_PC+1))'\n"+
			"HISTCONTROL=ignoreboth\n"), 0o600))

	s := startShell(t, "bash", nil, baseEnv(home))
	exercise(t, s, home)

	// The user's PROMPT_COMMAND still runs, and sees the command's status.
	s.run("false")
	s.typeLine(`echo "pc=$((USER_PC>0)) status=$USER_STATUS"`)
	s.waitMark("the echo", func(m shellmarks.Mark) bool { return m.Kind == shellmarks.CommandFinished })
	s.waitPrompt()
	require.Contains(t, string(s.out), "\rpc=1 status=1\r\n")

	// A line history does not record is still a command; its line is then
	// read back off the input.
	d, line := s.run(" echo hidden")
	require.Equal(t, 0, *d.ExitCode)
	require.Empty(t, line, "history did not record it, so the shell does not report it")
	require.Equal(t, "echo hidden", s.executed()[len(s.executed())-1])
	s.requireClean()
}

func TestBashLoginShellReadsTheProfiles(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(home, ".bash_profile"), []byte("export FROM=profile\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".bashrc"), []byte("export FROM=bashrc\n"), 0o600))

	s := startShell(t, "bash", []string{"-l"}, baseEnv(home))
	s.waitPrompt()
	s.typeLine(`echo "from=$FROM startup=${SHELLGATE_BASH_STARTUP-unset}"`)
	s.waitMark("the echo", func(m shellmarks.Mark) bool { return m.Kind == shellmarks.CommandFinished })
	require.Contains(t, string(s.out), "\rfrom=profile startup=unset\r\n")
}

func TestZshUnderAPtyReportsCommandsAndKeepsTheUsersZshrc(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(home, odd), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".zshenv"), []byte("export FROM_ZSHENV=yes\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".zshrc"), []byte(
		"export MYVAR=from-the-users-rc\n"+
			"user_precmd() { USER_PC=$((USER_PC+1)) }\n"+
			"precmd_functions+=(user_precmd)\n"), 0o600))

	s := startShell(t, "zsh", nil, baseEnv(home))
	exercise(t, s, home)

	s.typeLine(`echo "pc=$((USER_PC>0)) env=$FROM_ZSHENV zdotdir=${ZDOTDIR-unset}"`)
	s.waitMark("the echo", func(m shellmarks.Mark) bool { return m.Kind == shellmarks.CommandFinished })
	require.Contains(t, string(s.out), "\npc=1 env=yes zdotdir=unset\r\n", "ZDOTDIR is the user's again")
}

func TestZshWithTheUsersZdotdirReadsTheirFiles(t *testing.T) {
	home := t.TempDir()
	zdot := filepath.Join(home, ".config", "zsh")
	require.NoError(t, os.MkdirAll(zdot, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".zshrc"), []byte("export MYVAR=wrong-file\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(zdot, ".zshrc"), []byte("export MYVAR=from-zdotdir\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(zdot, ".zlogin"), []byte("export LOGIN=yes\n"), 0o600))

	s := startShell(t, "zsh", []string{"-l"}, append(baseEnv(home), "ZDOTDIR="+zdot))
	s.waitPrompt()
	s.typeLine(`echo "$MYVAR login=$LOGIN zdotdir=$ZDOTDIR"`)
	s.waitMark("the echo", func(m shellmarks.Mark) bool { return m.Kind == shellmarks.CommandFinished })
	require.Contains(t, string(s.out), "\nfrom-zdotdir login=yes zdotdir="+zdot+"\r\n")
}

// The raw output really carried the marks the cleaned one lacks: a guard
// against a test that passes because nothing was printed at all.
func TestBashRawOutputCarriesTheMarks(t *testing.T) {
	s := startShell(t, "bash", nil, baseEnv(t.TempDir()))
	s.waitPrompt()
	s.run("true")
	require.True(t, bytes.Contains(s.raw, []byte("\x1b]133;C\a")))
	require.True(t, bytes.Contains(s.raw, []byte("\x1b]633;E;true\a")))
	require.True(t, strings.Contains(string(s.raw), "\x1b]7;file://"))
}

func TestShellsKeepReportingUnderTheUsersStrictOptions(t *testing.T) {
	tests := []struct{ shell, rcFile, rc string }{
		{"bash", ".bashrc", "set -u\nPS0='[user-ps0]'\n"},
		{"zsh", ".zshrc", "set -u\nsetopt ksh_arrays\nprecmd_functions=()\n"},
	}
	for _, tt := range tests {
		t.Run(tt.shell, func(t *testing.T) {
			home := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(home, tt.rcFile), []byte(tt.rc), 0o600))
			s := startShell(t, tt.shell, nil, baseEnv(home))
			s.waitPrompt()
			d, line := s.run("cd /")
			require.Equal(t, 0, *d.ExitCode)
			require.Equal(t, "cd /", line)
			require.Equal(t, "file:///", s.cwds()[len(s.cwds())-1])
			require.NotContains(t, string(s.out), "parameter not set")
			require.NotContains(t, string(s.out), "unbound variable")
			s.requireClean()
		})
	}
}

func TestShellsSignTheCommandLineWithTheNonceAndHideIt(t *testing.T) {
	for _, shell := range []string{"bash", "zsh"} {
		t.Run(shell, func(t *testing.T) {
			s := startShell(t, shell, nil, append(baseEnv(t.TempDir()), NonceEnv+"=n0nce"))
			s.waitPrompt()
			s.typeLine("env | grep -c " + NonceEnv)
			m := s.waitMark("the command line", func(m shellmarks.Mark) bool { return m.Kind == shellmarks.CommandLine })
			require.Equal(t, "env | grep -c "+NonceEnv, m.CommandLine)
			require.Equal(t, "n0nce", m.Nonce)
			c := s.waitMark("the start", func(m shellmarks.Mark) bool { return m.Kind == shellmarks.CommandStart })
			d := s.waitMark("the finish", func(m shellmarks.Mark) bool { return m.Kind == shellmarks.CommandFinished })
			require.Equal(t, 1, *d.ExitCode, "grep found no nonce in the environment")
			// The command's own output is what lies between its C and D.
			require.True(t, strings.HasPrefix(string(s.out[c.Offset:d.Offset]), "0\r\n"), "%q", s.out[c.Offset:d.Offset])
		})
	}
}
