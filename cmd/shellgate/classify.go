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

	"github.com/shellgate/shellgate/domain/policy"
	"github.com/shellgate/shellgate/domain/risk"
)

// classification is one line of `shellgate classify`'s output.
type classification struct {
	Command   string    `json:"command"`
	Risk      string    `json:"risk"`
	Reasons   []string  `json:"reasons"`
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
		Use:   "classify [command ...]",
		Short: "Show the risk of shell commands and what the agent gate does with them, per role",
		Long: `Classifies each command (one per argument, or one per line of standard
input when there are no arguments) and prints one JSON object per command,
in order: {"command", "risk", "reasons", "decisions": {"chat_agent":
"auto|approval|blocked", ...}}. The decisions follow the role table and the
config's agent_terminal.approval_required_for (--config). With --jsonl each
input line is a JSON string, so a command may hold newlines. Needs no
running daemon.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			jsonl, _ := cmd.Flags().GetBool("jsonl")
			if jsonl && len(args) > 0 {
				return errors.New("--jsonl reads commands from standard input; give no arguments with it")
			}
			path, _ := cmd.Flags().GetString("config")
			cfg, err := loadConfig(path)
			if err != nil {
				return err
			}
			extra := cfg.AgentTerminal.ApprovalRequiredFor
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetEscapeHTML(false)
			emit := func(command string) error { return enc.Encode(classify(command, extra)) }
			if len(args) > 0 {
				for _, a := range args {
					if err := emit(a); err != nil {
						return err
					}
				}
				return nil
			}
			return eachInputCommand(cmd.InOrStdin(), jsonl, emit)
		},
	}
	cmd.Flags().Bool("jsonl", false, "read standard input as one JSON string per line")
	return cmd
}

// classify assesses command and applies the gate for every role.
func classify(command string, approvalRequiredFor []risk.Level) classification {
	a := newClassifier().Classify(command)
	decide := func(role policy.Role) string {
		d := policy.Decide(role, a.Level)
		if d == policy.Auto && slices.Contains(approvalRequiredFor, a.Level) {
			d = policy.Approval
		}
		return d.String()
	}
	reasons := a.Reasons
	if reasons == nil {
		reasons = []string{}
	}
	return classification{
		Command: command, Risk: a.Level.String(), Reasons: reasons,
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
