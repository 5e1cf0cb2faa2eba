package agents

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shellgate/shellgate/app/terminals"
	"github.com/shellgate/shellgate/domain/agentsession"
	"github.com/shellgate/shellgate/domain/terminal"
	"github.com/shellgate/shellgate/ports"
)

// agentEnv is layered over the daemon's environment for every agent
// command: nothing may stop to page or to ask for a password, since no one
// is typing (D16). Layering can only add or replace: keeping the daemon's
// secrets out (SHELLGATE_TOKEN …) is the terminal host's base environment's
// job, which the daemon's wiring strips (cmd/shellgate terminalEnv).
var agentEnv = []string{"PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0"}

// killGrace is how long a command killed for its timeout may take to
// drain its output before its result is returned without the rest. Only a
// process that left the command's group (setsid) and still holds its
// output can make it run out.
const killGrace = 5 * time.Second

// maxTitle bounds a command terminal's title.
const maxTitle = 80

// RunResult is how a command ran.
type RunResult struct {
	// CommandID identifies the command; it is the terminal claim's
	// toolCallId (and, for an approved command, the approval id).
	CommandID string
	// Terminal is the command's terminal URI, watchable over AHP.
	Terminal string
	// Stdout and Stderr are what the command wrote to each, each capped
	// at the configured number of bytes; invalid UTF-8 is replaced.
	Stdout, Stderr string
	// ReturnCode is the exit code; 128 when a signal ended the command.
	ReturnCode int
	// Signal names the signal that ended the command, if one did (D13).
	Signal string
	// TimedOut says the command ran past its timeout and its process group
	// was killed.
	TimedOut bool
	// Truncated says Stdout or Stderr was cut at the cap.
	Truncated bool
	// Duration is how long it ran.
	Duration time.Duration
}

// command is one approved or auto-approved command about to run.
type command struct {
	e              *entry
	sessionID      string
	conversationID string
	id             string
	n              int // the session's command number, for the title
	agentID        string
	// uri is the command's terminal: chosen once, when the command is
	// started, and unguessable (commandURI).
	uri  string
	line string
	// confine is the command's confinement; nil runs it unconfined.
	confine *ports.Confinement
	// timeout, when positive and shorter than the configured one, ends the
	// command sooner (the agent asked for it).
	timeout time.Duration
}

// run executes cmd through the terminal host, on pipes, as `$SHELL -c
// <line>` in a host-owned terminal claimed by the session, with its input
// ended at once (nobody types into an agent's command: a person who takes
// control works in a terminal of their own, and a command that reads its
// input, cat with no file or a [Y/n] prompt, must read end of input rather
// than wait out the timeout), and waits for it to end (or its timeout). The caller has
// counted the command as running on its entry; run does not uncount it.
func (c *core) run(ctx context.Context, cmd command) (RunResult, error) {
	chat := cmd.conversationID
	if chat == "" {
		chat = cmd.sessionID
	}
	res := RunResult{
		CommandID: cmd.id,
		Terminal:  cmd.uri,
	}
	out := newCapture(c.cfg.OutputCapBytes)
	dir := cmd.e.workspace
	if dir == "" {
		dir = c.cfg.Dir
	}
	env := agentEnv
	if cmd.confine != nil {
		// The command's /tmp is its private directory.
		env = append(slices.Clone(agentEnv), "TMPDIR=/tmp")
	}
	start := c.clock.Now()
	if cmd.e.machine != MainHost {
		dir = cmd.e.workspace // "" is the remote home
	}
	term, err := c.host.Create(ctx, terminals.Spec{
		Host: cmd.e.machine,
		URI:  res.Terminal,
		Name: title(cmd.agentID, cmd.n),
		// The root list, which anyone may read, shows only the neutral
		// title; the command line is the first line of the terminal's
		// own output, which needs the read grant.
		Banner: banner(cmd.line),
		CWD:    dir,
		Claim: terminal.Claim{
			Kind:       terminal.ClaimSession,
			Session:    "ahp-session:/" + cmd.sessionID,
			Chat:       "ahp-chat:/" + chat,
			ToolCallID: cmd.id,
		},
		// No Shell: agent terminals run the daemon's own shell, never a
		// connection's defaultShell (D15).
		Command:  cmd.line,
		NoInput:  true,
		Env:      env,
		Confine:  cmd.confine,
		OnOutput: out.write,
	})
	if errors.Is(err, terminals.ErrLowOnFiles) {
		return res, refuseCause(ErrAtCapacity, err, "the command was not started")
	}
	if err != nil {
		return res, refuseCause(ErrExecution, err, "the command could not be started")
	}
	c.keep(cmd.e, term)

	var timedOut, abandoned chan struct{}
	limit := c.cfg.CommandTimeout
	if cmd.timeout > 0 && (limit <= 0 || cmd.timeout < limit) {
		limit = cmd.timeout
	}
	if limit > 0 {
		timedOut, abandoned = make(chan struct{}), make(chan struct{})
		var mu sync.Mutex
		var grace ports.Timer
		var returned bool
		timer := c.clock.AfterFunc(limit, func() {
			close(timedOut)
			// The grace period is armed before the kill, and not at all
			// once the run has returned: a kill that ends the process at
			// once would otherwise let the run return and stop timers
			// before this one existed, and it would outlive the command.
			mu.Lock()
			if !returned {
				grace = c.clock.AfterFunc(killGrace, func() { close(abandoned) })
			}
			mu.Unlock()
			_ = term.Kill()
		})
		defer func() {
			timer.Stop()
			mu.Lock()
			returned = true
			if grace != nil {
				grace.Stop()
			}
			mu.Unlock()
		}()
	}

	var status terminal.ExitStatus
	select {
	case <-term.Done():
		status = term.ExitStatus()
	case <-abandoned:
		// A process outside the group holds the output: answer with what
		// arrived; the terminal shows the rest to whoever watches.
		status = terminal.KilledBy("SIGKILL")
	}
	res.Duration = c.clock.Now().Sub(start)
	res.Stdout, res.Stderr, res.Truncated = out.result()
	res.ReturnCode, res.Signal = status.Code, status.Signal
	if timedOut != nil {
		select {
		case <-timedOut:
			res.TimedOut = true
		default:
		}
	}
	if isDone(term.Done()) {
		if serr := term.StartError(); serr != nil {
			return res, refuseCause(ErrExecution, serr, "the command's shell could not be started")
		}
	}
	return res, nil
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// title is the terminal's title in the root list: the agent's id and the
// session's command number, and nothing of the command (anyone, signed in
// or not, reads the root list).
func title(agentID string, n int) string {
	agentID = strings.Join(strings.FieldsFunc(agentID, unicode.IsSpace), " ")
	if utf8.RuneCountInString(agentID) > maxTitle {
		agentID = string([]rune(agentID)[:maxTitle-1]) + "…"
	}
	return fmt.Sprintf("%s #%d", agentID, n)
}

// banner is the first line of a command terminal's output: the command as
// a prompt would show it, so whoever may read the terminal sees what runs.
// The agent's own stdout does not carry it. Control characters other than
// line feeds are shown in caret notation (^[ for ESC), so a command line
// cannot draw on, or ask questions of, a viewer's terminal from the
// scrollback.
func banner(line string) string {
	var b strings.Builder
	b.WriteString("$ ")
	for _, r := range line {
		switch {
		case r == '\n':
			b.WriteString("\r\n")
		case r < 0x20 || r == 0x7f:
			b.WriteByte('^')
			b.WriteByte(byte(r) ^ 0x40)
		case r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString("\r\n")
	return b.String()
}

// capture keeps the first limit bytes of each stream for the agent.
type capture struct {
	limit int

	mu       sync.Mutex
	out, err stream
	sealed   bool
}

type stream struct {
	b   []byte
	cut bool
}

func newCapture(limit int) *capture { return &capture{limit: limit} }

// write is the terminal's output tap.
func (c *capture) write(from terminals.Stream, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sealed {
		return
	}
	s := &c.out
	if from == terminals.Stderr {
		s = &c.err
	}
	if room := c.limit - len(s.b); len(data) > room {
		data = data[:max(room, 0)]
		s.cut = true
	}
	s.b = append(s.b, data...)
}

// result seals the capture (later output is ignored) and returns it as
// text.
func (c *capture) result() (stdout, stderr string, truncated bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sealed = true
	return c.out.text(), c.err.text(), c.out.cut || c.err.cut
}

// text is the stream as valid UTF-8; a character the cap cut in half is
// dropped rather than shown as a replacement character.
func (s stream) text() string {
	b := s.b
	if s.cut {
		for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
			if utf8.RuneStart(b[i]) {
				if !utf8.FullRune(b[i:]) {
					b = b[:i]
				}
				break
			}
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// commandURI is a terminal URI for a session's nth command. It ends in
// 64 random bits: anyone who may create terminals knows the session id and
// can count its commands, and a terminal made at the URI first would make
// the agent's command fail (ErrExists).
func commandURI(sessionID string, n int) string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return fmt.Sprintf("ahp-terminal:/agent-%s-%d-%x", sessionID, n, b)
}

// newCommand is the command a session starts as its nth, with its terminal
// URI chosen.
func newCommand(e *entry, s *agentsession.Session, id, line string) command {
	return command{
		e: e, sessionID: s.ID, conversationID: s.ConversationID, agentID: s.AgentID,
		id: id, n: s.CommandCount, line: line, uri: commandURI(s.ID, s.CommandCount),
	}
}
