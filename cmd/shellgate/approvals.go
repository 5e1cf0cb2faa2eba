package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/shellgate/shellgate/cmd/shellgate/internal/client"
)

// The agent API's shapes (seed 002), as far as these commands read them.
type (
	pendingApproval struct {
		Command string   `json:"command"`
		Risk    string   `json:"risk"`
		Reasons []string `json:"reasons"`
	}
	agentSession struct {
		SessionID string `json:"session_id"`
		AgentID   string `json:"agent_id"`
		AgentRole string `json:"agent_role"`
		State     string `json:"state"`
		// PendingApproval is raw so that "absent" (the list may leave it
		// out: ask the session itself) differs from null (nothing held).
		PendingApproval json.RawMessage `json:"pending_approval"`
	}
	sessionList struct {
		Sessions []agentSession `json:"sessions"`
	}
	decisionResult struct {
		Status  string `json:"status"`
		Command string `json:"command"`
		Message string `json:"message"`
		Result  *struct {
			Stdout     string `json:"stdout"`
			Stderr     string `json:"stderr"`
			ReturnCode *int   `json:"return_code"`
			Signal     string `json:"signal"`
		} `json:"result"`
	}
)

func sessionsPath() string { return client.AgentAPIPrefix + "/sessions" }

func sessionPath(id string) string { return sessionsPath() + "/" + url.PathEscape(id) }

// newApprovalsCmd lists the agent commands waiting for a person.
func newApprovalsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List agent commands waiting for approval: session, agent, role, risk, command, reasons",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := resolveRemote(cmd)
			if err != nil {
				return err
			}
			return r.scrub(listApprovals(cmd, r))
		},
	}
	addRemoteFlags(cmd)
	return cmd
}

func listApprovals(cmd *cobra.Command, r remote) error {
	api, err := r.rest()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), setupPatience)
	defer cancel()
	var list sessionList
	if err := api.Do(ctx, "GET", sessionsPath(), nil, &list); err != nil {
		return err
	}
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SESSION\tAGENT\tROLE\tRISK\tCOMMAND\tREASONS")
	for _, s := range list.Sessions {
		raw := s.PendingApproval
		if raw == nil {
			var full agentSession
			if err := api.Do(ctx, "GET", sessionPath(s.SessionID), nil, &full); err != nil {
				return err
			}
			raw = full.PendingApproval
		}
		var p *pendingApproval
		if len(raw) > 0 && json.Unmarshal(raw, &p) != nil {
			return fmt.Errorf("session %s: unexpected pending_approval", printable(s.SessionID))
		}
		if p == nil || p.Command == "" {
			continue
		}
		reasons := make([]string, len(p.Reasons))
		for i, reason := range p.Reasons {
			reasons[i] = printable(reason)
		}
		// Everything here may come from an agent: show it, never let it
		// drive this terminal.
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", printable(s.SessionID), printable(s.AgentID), printable(s.AgentRole),
			printable(p.Risk), printable(p.Command), strings.Join(reasons, "; "))
	}
	return w.Flush()
}

// newApproveCmd and newDenyCmd decide a session's pending command.
func newApproveCmd() *cobra.Command { return newDecisionCmd(true) }

func newDenyCmd() *cobra.Command { return newDecisionCmd(false) }

func newDecisionCmd(approve bool) *cobra.Command {
	use, short := "deny SESSION_ID", "Deny the command an agent session is waiting on"
	if approve {
		use, short = "approve SESSION_ID", "Approve the command an agent session is waiting on, and show its result"
	}
	var userID string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := resolveRemote(cmd)
			if err != nil {
				return err
			}
			return r.scrub(decide(cmd, r, args[0], approve, userID))
		},
	}
	cmd.Flags().StringVar(&userID, "user-id", "", "record this person as the one who decided (default: the daemon records the token's owner)")
	addRemoteFlags(cmd)
	return cmd
}

func decide(cmd *cobra.Command, r remote, sessionID string, approve bool, userID string) error {
	api, err := r.rest()
	if err != nil {
		return err
	}
	body := map[string]any{"approved": approve}
	if userID != "" {
		body["user_id"] = userID
	}
	// Approving runs the command and answers with its result: allow it
	// the REST client's own (longer) timeout.
	var res decisionResult
	if err := api.Do(cmd.Context(), "POST", sessionPath(sessionID)+"/approve", body, &res); err != nil {
		return err
	}
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	status := res.Status
	if status == "" {
		status = map[bool]string{true: "approved", false: "denied"}[approve]
	}
	fmt.Fprintf(errOut, "%s: %s\n", status, printable(res.Command))
	if res.Message != "" {
		fmt.Fprintln(errOut, printable(res.Message))
	}
	if res.Result == nil {
		return nil
	}
	fmt.Fprint(out, res.Result.Stdout)
	fmt.Fprint(errOut, res.Result.Stderr)
	switch {
	case res.Result.Signal != "":
		fmt.Fprintf(errOut, "the command was killed by %s\n", printable(res.Result.Signal))
	case res.Result.ReturnCode != nil:
		fmt.Fprintf(errOut, "the command exited with code %d\n", *res.Result.ReturnCode)
	}
	return nil
}
