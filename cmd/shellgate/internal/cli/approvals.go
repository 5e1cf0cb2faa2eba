package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/shellgate/shellgate/cmd/shellgate/internal/client"
)

// The agent API's shapes (seed 002), as far as these commands read them.
type (
	pendingApproval struct {
		Command string   `json:"command"`
		Risk    string   `json:"risk"`
		Reasons []string `json:"reasons"`
		// ApprovalID names this held command (shellgate's addition to the
		// seed): a decision that carries it can only land on this command.
		ApprovalID string `json:"approval_id"`
		// Description is what the agent says the command is for.
		Description string `json:"description"`
		// Sandboxed says the command runs confined if approved; nil from a
		// daemon that does not say.
		Sandboxed *bool `json:"sandboxed"`
	}
	agentSession struct {
		SessionID string `json:"session_id"`
		AgentID   string `json:"agent_id"`
		AgentRole string `json:"agent_role"`
		State     string `json:"state"`
		Workspace string `json:"workspace"`
		Host      string `json:"host"`
		// PendingApproval is raw so that "absent" (the list may leave it
		// out: ask the session itself) differs from null (nothing held).
		PendingApproval json.RawMessage `json:"pending_approval"`
	}
	sessionList struct {
		Sessions []agentSession `json:"sessions"`
	}
	decisionResult struct {
		Status     string `json:"status"`
		Command    string `json:"command"`
		Message    string `json:"message"`
		ApprovalID string `json:"approval_id"`
		Result     *struct {
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
		Short: "List agent commands waiting for approval: session, approval id, agent, role, risk, command, reasons, description",
		Long: `List the agent commands waiting for a person. Each held command has an
approval id; give it to approve or deny (shellgate approve SESSION APPROVAL)
so that the decision lands on the command listed here and on nothing the
agent submitted since.`,
		Args: cobra.NoArgs,
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
	var rows []string
	for _, s := range list.Sessions {
		p, err := heldCommand(ctx, api, s)
		if err != nil {
			return err
		}
		if p == nil {
			continue
		}
		approval := printable(p.ApprovalID)
		if approval == "" {
			approval = "-" // a daemon that does not name its held commands
		}
		description := printable(p.Description)
		if description == "" {
			description = "-"
		}
		// Everything here may come from an agent: show it, never let it
		// drive this terminal.
		rows = append(rows, fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", printable(s.SessionID), approval, printable(s.AgentID), printable(s.AgentRole),
			printable(p.Risk), runsWhere(p, s), printable(p.Command), reasonsText(p.Reasons), description))
	}
	if len(rows) == 0 {
		// On stderr, so a script reading stdout sees an empty list.
		fmt.Fprintln(cmd.ErrOrStderr(), "nothing waits for approval")
		return nil
	}
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SESSION\tAPPROVAL\tAGENT\tROLE\tRISK\tRUNS\tCOMMAND\tREASONS\tDESCRIPTION")
	for _, row := range rows {
		fmt.Fprint(w, row)
	}
	return w.Flush()
}

// heldCommand is the command session s is waiting on, nil when none: from
// the list entry when it carries one, else from the session itself.
func heldCommand(ctx context.Context, api *client.REST, s agentSession) (*pendingApproval, error) {
	raw := s.PendingApproval
	if raw == nil {
		var full agentSession
		if err := api.Do(ctx, "GET", sessionPath(s.SessionID), nil, &full); err != nil {
			return nil, err
		}
		raw = full.PendingApproval
	}
	var p *pendingApproval
	if len(raw) > 0 && json.Unmarshal(raw, &p) != nil {
		return nil, fmt.Errorf("session %s: unexpected pending_approval", printable(s.SessionID))
	}
	if p == nil || p.Command == "" {
		return nil, nil
	}
	return p, nil
}

func reasonsText(rs []string) string {
	reasons := make([]string, len(rs))
	for i, reason := range rs {
		reasons[i] = printable(reason)
	}
	return strings.Join(reasons, "; ")
}

// newApproveCmd and newDenyCmd decide a session's held command.
func newApproveCmd() *cobra.Command { return newDecisionCmd(true) }

func newDenyCmd() *cobra.Command { return newDecisionCmd(false) }

func newDecisionCmd(approve bool) *cobra.Command {
	verb, short := "deny", "Deny a command an agent session is waiting on"
	if approve {
		verb, short = "approve", "Approve a command an agent session is waiting on, run it, and show its result"
	}
	long := `Decide the command that agent session SESSION_ID is holding for a person.
Give the APPROVAL id that ` + "`shellgate approvals`" + ` lists beside the command: the
decision then lands on that command only. If it is no longer the one held
(someone decided it, and the agent has submitted another since), nothing is
decided and the command says so.

Without APPROVAL, the held command is fetched and shown first, and on a
terminal you are asked to confirm; the decision is bound to the command shown.`
	if approve {
		long += `
Off a terminal (a script), approve needs APPROVAL: it never approves a command
nobody has seen.`
	} else {
		long += `
Off a terminal, deny denies the command held now, and shows which it was.`
	}
	var userID string
	cmd := &cobra.Command{
		Use:   verb + " SESSION_ID [APPROVAL]",
		Short: short,
		Long:  long,
		Example: `  shellgate approvals
  shellgate ` + verb + ` 550e8400-e29b-41d4-a716-446655440000 7d1e9f3a-4c2b-4e8f-9a61-0b5c2d3e4f50`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := resolveRemote(cmd)
			if err != nil {
				return err
			}
			approvalID := ""
			if len(args) == 2 {
				approvalID = args[1]
				if approvalID == "" {
					return errors.New("the approval id is empty: give the APPROVAL that `shellgate approvals` lists, or leave it out")
				}
			}
			return r.scrub(decide(cmd, r, args[0], approvalID, approve, userID))
		},
	}
	cmd.Flags().StringVar(&userID, "user-id", "", "record this person as the one who decided (default: the daemon records the token's owner)")
	addRemoteFlags(cmd)
	return cmd
}

// isTerminal says whether r is an interactive terminal, where a person can
// confirm a decision. A variable so that tests can play the person.
var isTerminal = func(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// errNotDecided ends a decision the person did not confirm.
var errNotDecided = errors.New("not confirmed: nothing was decided")

func decide(cmd *cobra.Command, r remote, sessionID, approvalID string, approve bool, userID string) error {
	api, err := r.rest()
	if err != nil {
		return err
	}
	verb := map[bool]string{true: "approve", false: "deny"}[approve]
	if approvalID == "" {
		// Bind the decision to the command shown now, never to whatever is
		// held by the time the request arrives.
		p, err := confirmHeld(cmd, api, sessionID, approve)
		if err != nil {
			return err
		}
		approvalID = p.ApprovalID
	}
	body := map[string]any{"approved": approve, "approval_id": approvalID}
	if userID != "" {
		body["user_id"] = userID
	}
	// Approving runs the command and answers with its result: allow it
	// the REST client's own (longer) timeout.
	var res decisionResult
	if err := api.Do(cmd.Context(), "POST", sessionPath(sessionID)+"/approve", body, &res); err != nil {
		return staleDecision(err, verb, sessionID, approvalID)
	}
	if res.ApprovalID != "" && res.ApprovalID != approvalID {
		// Only a daemon that ignored approval_id can answer so.
		return fmt.Errorf("the daemon decided approval %s instead of %s: it does not bind decisions to the command shown; check `shellgate audit --session %s`",
			printable(res.ApprovalID), printable(approvalID), printable(sessionID))
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

// confirmHeld fetches the command sessionID holds and shows it; on a
// terminal the person confirms it, off one only a denial goes ahead.
func confirmHeld(cmd *cobra.Command, api *client.REST, sessionID string, approve bool) (*pendingApproval, error) {
	ctx, cancel := context.WithTimeout(cmd.Context(), setupPatience)
	defer cancel()
	verb := map[bool]string{true: "approve", false: "deny"}[approve]
	p, err := heldCommand(ctx, api, agentSession{SessionID: sessionID})
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, fmt.Errorf("session %s holds no command: there is nothing to %s", printable(sessionID), verb)
	}
	if p.ApprovalID == "" {
		return nil, fmt.Errorf("this daemon does not name its held commands (no approval_id), so a decision cannot be bound to the command shown; %s it from the web page", verb)
	}
	errOut := cmd.ErrOrStderr()
	fmt.Fprintf(errOut, "session %s holds approval %s (%s risk):\n    %s\n", printable(sessionID), printable(p.ApprovalID), printable(p.Risk), printable(p.Command))
	if rs := reasonsText(p.Reasons); rs != "" {
		fmt.Fprintf(errOut, "    reasons: %s\n", rs)
	}
	if !isTerminal(cmd.InOrStdin()) {
		if approve {
			return nil, fmt.Errorf("not approved: without a terminal to confirm on, name the command to approve: shellgate approve %s %s",
				printable(sessionID), printable(p.ApprovalID))
		}
		return p, nil
	}
	fmt.Fprintf(errOut, "%s this command? [y/N] ", strings.ToUpper(verb[:1])+verb[1:])
	line, _ := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return p, nil
	}
	return nil, errNotDecided
}

// staleDecision explains a refusal of a decision bound to approvalID: most
// often the command shown is no longer the one held.
func staleDecision(err error, verb, sessionID, approvalID string) error {
	var he *client.HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusConflict || he.Code != "no_pending_approval" {
		return err
	}
	msg := fmt.Sprintf("did not %s: approval %s is no longer the command session %s is waiting on, so nothing was decided",
		verb, printable(approvalID), printable(sessionID))
	if he.Message != "" {
		msg += " (the daemon says: " + printable(he.Message) + ")"
	}
	return errors.New(msg + "; run `shellgate approvals` to see what is held now")
}

// runsWhere says where an approved command would run: "sandboxed in
// <workspace>", "unconfined in <workspace>", or "-" from a daemon that does
// not say.
func runsWhere(p *pendingApproval, s agentSession) string {
	if p.Sandboxed == nil {
		return "-"
	}
	how := "unconfined"
	if *p.Sandboxed {
		how = "sandboxed"
	}
	if s.Host != "" && s.Host != "main" {
		how += " on " + printable(s.Host)
	}
	if s.Workspace == "" {
		return how
	}
	return how + " in " + printable(s.Workspace)
}
