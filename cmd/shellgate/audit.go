package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/shellgate/shellgate/adapters/audit"
	"github.com/shellgate/shellgate/ports"
)

func newAuditCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Print the agent gate's audit log, filtered",
		Long: `Prints the audit log (audit.log in the data directory, or the config's
agent_terminal.audit_log): one record per line, oldest first. Filters
combine. --json prints the matching records exactly as stored. Needs no
running daemon, only read access to the file.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := configFromFlags(cmd)
			if err != nil {
				return err
			}
			filter, err := auditFilter(cmd, time.Now())
			if err != nil {
				return err
			}
			path, _ := cmd.Flags().GetString("file")
			if path == "" {
				path = cfg.AuditLogFile()
			}
			raw, _ := cmd.Flags().GetBool("json")
			// Rotated files first (oldest first), then the current one.
			malformed := false
			for _, p := range audit.Files(path) {
				f, err := os.Open(p)
				if err != nil {
					return fmt.Errorf("audit log: %w", err)
				}
				if raw {
					err = printRawAudit(cmd.OutOrStdout(), f, filter)
				} else {
					err = printAudit(cmd.OutOrStdout(), f, filter)
				}
				_ = f.Close()
				var bad *audit.MalformedError
				if errors.As(err, &bad) {
					// The rest of the log is still evidence: say what was
					// skipped, and fail so a script notices.
					fmt.Fprintf(cmd.ErrOrStderr(), "shellgate: %s: %v\n", p, bad)
					malformed = true
					continue
				}
				if err != nil {
					return err
				}
			}
			if malformed {
				return exitCodeError(1)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.String("file", "", "read this audit log (and its rotated files, FILE.1 …) instead of the configured one")
	f.String("session", "", "only this session's records")
	f.String("agent", "", "only this agent's records (its agent_id)")
	f.StringSlice("event", nil, "only these events ("+eventNames()+"); repeat or separate with commas")
	f.String("since", "", "only records at or after this time (RFC 3339, or a duration such as 2h for that long ago)")
	f.String("until", "", "only records before this time (RFC 3339, or a duration ago)")
	f.Bool("json", false, "print the matching records as stored, one JSON object per line")
	return cmd
}

// auditFilter reads the filter flags; durations count back from now.
func auditFilter(cmd *cobra.Command, now time.Time) (audit.Filter, error) {
	var f audit.Filter
	flags := cmd.Flags()
	f.SessionID, _ = flags.GetString("session")
	f.AgentID, _ = flags.GetString("agent")
	events, _ := flags.GetStringSlice("event")
	for _, e := range events {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if !slices.Contains(ports.AuditEventKinds(), ports.AuditEventKind(e)) {
			// A misspelt name would otherwise match nothing, and an empty
			// answer would read as "it never happened".
			return f, fmt.Errorf("--event %q is not an audit event; the events are %s", e, eventNames())
		}
		f.Events = append(f.Events, ports.AuditEventKind(e))
	}
	var err error
	for _, b := range []struct {
		flag string
		into *time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		v, _ := flags.GetString(b.flag)
		if *b.into, err = parseWhen(v, now); err != nil {
			return f, fmt.Errorf("--%s: %w", b.flag, err)
		}
	}
	return f, nil
}

// parseWhen reads an RFC 3339 time, or a duration meaning that long ago.
func parseWhen(v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time (2025-10-04T12:00:00Z) nor a duration ago (2h)", v)
}

// printAudit writes one aligned line per record.
func printAudit(out io.Writer, r io.Reader, filter audit.Filter) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	err := audit.Read(r, filter, func(e ports.AuditEvent) error {
		_, err := fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			e.Time.UTC().Format("2006-01-02T15:04:05.000Z"), e.Event, e.Status,
			orDash(e.SessionID), agentOf(e), orDash(e.Risk), resultOf(e), commandOf(e))
		return err
	})
	if ferr := tw.Flush(); err == nil {
		err = ferr
	}
	return err
}

// printRawAudit copies the matching lines as stored.
func printRawAudit(out io.Writer, r io.Reader, filter audit.Filter) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 2<<20)
	bad := &audit.MalformedError{}
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		err := audit.Read(strings.NewReader(line), filter, func(ports.AuditEvent) error {
			_, err := fmt.Fprintln(out, line)
			return err
		})
		var m *audit.MalformedError
		switch {
		case errors.As(err, &m):
			bad.Count++
			if len(bad.Lines) < 20 {
				bad.Lines = append(bad.Lines, n)
			}
		case err != nil:
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read audit log: %w", err)
	}
	if bad.Count > 0 {
		return bad
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func agentOf(e ports.AuditEvent) string {
	switch {
	case e.AgentID == "":
		return "-"
	case e.AgentRole == "":
		return e.AgentID
	}
	return e.AgentID + " (" + e.AgentRole + ")"
}

func resultOf(e ports.AuditEvent) string {
	var parts []string
	if r := e.Result; r != nil {
		rc := "rc=" + strconv.Itoa(r.ReturnCode)
		if r.Signal != "" {
			rc += " " + r.Signal
		}
		parts = append(parts, rc, r.ExecutionTime.Round(time.Millisecond).String())
	}
	if e.ApprovedBy != "" {
		parts = append(parts, "by="+e.ApprovedBy)
	}
	if by := e.Detail["by"]; by != "" && e.ApprovedBy == "" {
		parts = append(parts, "by="+by)
	}
	if reason := e.Detail["reason"]; reason != "" {
		parts = append(parts, reason)
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

func commandOf(e ports.AuditEvent) string {
	if e.Command == "" {
		return ""
	}
	return strconv.Quote(e.Command)
}

// eventNames lists the audit events a filter may name.
func eventNames() string {
	kinds := ports.AuditEventKinds()
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}
