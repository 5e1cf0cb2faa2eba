package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"mvdan.cc/sh/v3/syntax"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/domain/policy"
	"github.com/shellgate/shellgate/domain/risk"
)

// classification is one line of `shellgate classify`'s output.
type classification struct {
	Command string   `json:"command"`
	Risk    string   `json:"risk"`
	Reasons []string `json:"reasons"`
	// Decision is the gate's answer for --role, when given.
	Decision string `json:"decision,omitempty"`
	// Sandboxed says the decisions assume the command runs sandboxed
	// (--sandboxed: workspace writes, no network; R21).
	Sandboxed bool      `json:"sandboxed"`
	Decisions decisions `json:"decisions"`
}

// decisions is the gate's answer per role, least privileged first.
type decisions struct {
	ChatAgent       string `json:"chat_agent"`
	AutomationAgent string `json:"automation_agent"`
	SystemAgent     string `json:"system_agent"`
	AdminAgent      string `json:"admin_agent"`
}

// maxClassifyLine bounds one line of input; a command the gate would take
// is far shorter.
const maxClassifyLine = 4 << 20

func newClassifyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "classify ['COMMAND LINE' | -- WORD...]",
		Short: "Show the risk of shell commands and what the agent gate does with them, per role",
		Long: `Classifies shell commands and prints one JSON object per command, in
order: {"command", "risk", "reasons", "decisions": {"chat_agent":
"auto|approval|blocked", ...}}. The decisions follow the role table and the
config's agent_terminal.approval_required_for (--config), and the daemon's
own files (its data directory, --data-dir, and config) are guarded as the
gate guards them. Needs no running daemon.

Where the commands come from:
  one argument       a whole command line, read as bash reads it (pipes,
                     ;, && and quotes included)
  several arguments  the words of one command, as exec would get them. They
                     are joined into one command line with shell quoting, so
                     "classify -- rm 'a b'" keeps "a b" one word and a word
                     such as '>' or '*' stays literal; "command" shows the
                     joined line. Put -- first when a word starts with -.
  no arguments       one command line per line of standard input; with
                     --jsonl each line is a JSON string, so a command may
                     hold newlines`,
		Example: `  shellgate classify 'cd /tmp && rm -rf build'
  shellgate classify -- mkdir -p /tmp/x
  printf '%s\n' 'ls -l' 'git push --force' | shellgate classify`,
		RunE: func(cmd *cobra.Command, args []string) error {
			jsonl, _ := cmd.Flags().GetBool("jsonl")
			if jsonl && len(args) > 0 {
				return errors.New("--jsonl reads commands from standard input; give no arguments with it")
			}
			cfg, err := configFromFlags(cmd)
			if err != nil {
				return err
			}
			// The gate's own classifier: it knows the daemon's files from
			// the same --data-dir and --config, so the verdicts are the ones
			// an agent would get.
			classifier := shellgate.Classifier(cfg)
			g := gateView{approvalRequiredFor: cfg.AgentTerminal.ApprovalRequiredFor}
			if name, _ := cmd.Flags().GetString("role"); name != "" {
				role, err := policy.ParseRole(name)
				if err != nil {
					return err
				}
				g.role = role
			}
			if g.sandboxed, _ = cmd.Flags().GetBool("sandboxed"); g.sandboxed {
				g.workspace, _ = cmd.Flags().GetString("workspace")
				if g.workspace == "" {
					if roots := cfg.WorkspaceRoots(); len(roots) > 0 {
						g.workspace = roots[0]
					}
				}
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetEscapeHTML(false)
			emit := func(command string) error { return enc.Encode(classify(classifier, command, g)) }
			if len(args) == 0 {
				return eachInputCommand(cmd.InOrStdin(), jsonl, emit)
			}
			line, err := commandLine(args)
			if err != nil {
				return err
			}
			return emit(line)
		},
	}
	cmd.Flags().Bool("jsonl", false, "read standard input as one JSON string per line")
	cmd.Flags().String("role", "", "also print the gate's decision for this agent role (key decision)")
	cmd.Flags().Bool("sandboxed", false, "decide as for a command that runs sandboxed, workspace writes and no network (R21)")
	cmd.Flags().String("workspace", "", "with --sandboxed: the workspace the command runs in (default: the first workspace root)")
	return cmd
}

// commandLine turns classify's arguments into the one command line they
// stand for: a single argument is a command line already; several are the
// words of one command, each quoted as bash needs to read it back as the
// same word.
func commandLine(args []string) (string, error) {
	if len(args) == 1 {
		return args[0], nil
	}
	words := make([]string, len(args))
	for i, w := range args {
		q, err := quoteWord(w, i == 0)
		if err != nil {
			return "", fmt.Errorf("word %d (%q) cannot be given as a shell word: %w; pass the whole command line as one argument instead", i+1, w, err)
		}
		words[i] = q
	}
	return strings.Join(words, " "), nil
}

// quoteWord quotes w for bash. An "=" only needs quoting in the first word,
// where it would make an assignment; elsewhere `dd of=x` reads better than
// `dd 'of=x'` and means the same.
func quoteWord(w string, first bool) (string, error) {
	if !first && strings.Contains(w, "=") {
		bare := strings.ReplaceAll(w, "=", "")
		if q, err := syntax.Quote(bare, syntax.LangBash); err == nil && q == bare {
			return w, nil
		}
	}
	return syntax.Quote(w, syntax.LangBash)
}

// gateView is what classify decides for: a role (optional), and whether
// the command runs sandboxed, in which workspace.
type gateView struct {
	approvalRequiredFor []risk.Level
	role                policy.Role
	sandboxed           bool
	workspace           string
}

// classify assesses command and applies the gate for every role, as the
// agent gate does (app/agents ExecuteCommand).
func classify(c *risk.Classifier, command string, g gateView) classification {
	tier := policy.Unconfined
	a := c.Classify(command)
	if g.sandboxed {
		tier = policy.Contained
		a = c.ClassifyIn(command, g.workspace)
	}
	decide := func(role policy.Role) string {
		d, _, _ := policy.CheckIn(role, a, tier)
		if d == policy.Auto && slices.Contains(g.approvalRequiredFor, a.Level) {
			d = policy.Approval
		}
		return d.String()
	}
	reasons := a.Reasons
	if reasons == nil {
		reasons = []string{}
	}
	decision := ""
	if g.role != "" {
		decision = decide(g.role)
	}
	return classification{
		Command: command, Risk: a.Level.String(), Reasons: reasons, Decision: decision, Sandboxed: g.sandboxed,
		Decisions: decisions{
			ChatAgent:       decide(policy.ChatAgent),
			AutomationAgent: decide(policy.AutomationAgent),
			SystemAgent:     decide(policy.SystemAgent),
			AdminAgent:      decide(policy.AdminAgent),
		},
	}
}

// eachInputCommand calls fn with each command of r: each line, or each
// line's JSON string with jsonl. Blank lines hold no command.
func eachInputCommand(r io.Reader, jsonl bool, fn func(string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxClassifyLine)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if jsonl {
			var s string
			if err := json.Unmarshal([]byte(line), &s); err != nil {
				return fmt.Errorf("line %d is not a JSON string (--jsonl wants one per line, e.g. \"ls -l\"): %w", n, err)
			}
			line = s
		}
		if err := fn(line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading commands: %w", err)
	}
	return nil
}
