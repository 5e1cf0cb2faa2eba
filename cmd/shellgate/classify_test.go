package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// runGateCLI runs the command line in-process and returns its exit code and
// output.
func runGateCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func decodeClassifications(t *testing.T, out string) []classification {
	t.Helper()
	var got []classification
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var c classification
		require.NoError(t, json.Unmarshal(sc.Bytes(), &c), sc.Text())
		got = append(got, c)
	}
	return got
}

func TestClassifyPrintsOneObjectPerCommandInOrder(t *testing.T) {
	code, out, errOut := runGateCLI(t, "echo hi\nmkdir /tmp/x\nsudo ls\nrm -rf ./build\nkill 1\n", "classify")
	require.Zero(t, code, errOut)

	got := decodeClassifications(t, out)
	require.Len(t, got, 5)
	want := []struct {
		risk      string
		decisions decisions
	}{
		{"safe", decisions{"auto", "auto", "auto", "auto"}},
		{"moderate", decisions{"approval", "auto", "auto", "auto"}},
		{"high", decisions{"blocked", "approval", "approval", "approval"}},
		{"dangerous", decisions{"blocked", "blocked", "blocked", "approval"}},
		{"forbidden", decisions{"blocked", "blocked", "blocked", "blocked"}},
	}
	for i, w := range want {
		require.Equal(t, w.risk, got[i].Risk, got[i].Command)
		require.Equal(t, w.decisions, got[i].Decisions, got[i].Command)
		require.NotEmpty(t, got[i].Reasons)
	}
	require.Equal(t, "echo hi", got[0].Command)
	require.True(t, strings.HasPrefix(out, `{"command":"echo hi","risk":"safe","reasons":[`), "keys in the documented order: %s", out)
	require.Contains(t, out, `"decisions":{"chat_agent":"auto","automation_agent":"auto","system_agent":"auto","admin_agent":"auto"}`)
}

func TestClassifyTakesSeveralArgumentsAsTheWordsOfOneCommand(t *testing.T) {
	code, out, errOut := runGateCLI(t, "", "classify", "--", "mkdir", "-p", "/tmp/x")
	require.Zero(t, code, errOut)
	got := decodeClassifications(t, out)
	require.Len(t, got, 1, "one command, not one per word: %s", out)
	require.Equal(t, "mkdir -p /tmp/x", got[0].Command)
	require.Equal(t, "moderate", got[0].Risk)
	require.Equal(t, []string{"R14 workspace change: mkdir to /tmp/x"}, got[0].Reasons)

	// Words are quoted back, so each stays one literal word.
	tests := []struct {
		words   []string
		command string
		risk    string
	}{
		{[]string{"rm", "a b"}, "rm 'a b'", "high"},
		{[]string{"echo", "hi", ">", "/etc/passwd"}, "echo hi '>' /etc/passwd", "safe"},
		{[]string{"dd", "if=/dev/zero", "of=/dev/sda"}, "dd if=/dev/zero of=/dev/sda", "forbidden"},
		{[]string{"FOO=1", "ls"}, "'FOO=1' ls", "high"},
		{[]string{"ls", ""}, "ls ''", "safe"},
	}
	for _, tc := range tests {
		code, out, errOut := runGateCLI(t, "", append([]string{"classify", "--"}, tc.words...)...)
		require.Zero(t, code, errOut)
		got := decodeClassifications(t, out)
		require.Len(t, got, 1, "%q: %s", tc.words, out)
		require.Equal(t, tc.command, got[0].Command, "%q", tc.words)
		require.Equal(t, tc.risk, got[0].Risk, "%q: %q", tc.words, got[0].Reasons)
	}
	code, out, errOut = runGateCLI(t, "", "classify", "--", "rm", "a b")
	require.Zero(t, code, errOut)
	require.Equal(t, []string{"R13 delete: rm of a b cannot be undone"}, decodeClassifications(t, out)[0].Reasons, "one target, not two")
}

func TestClassifyTakesOneArgumentAsAWholeCommandLine(t *testing.T) {
	code, out, errOut := runGateCLI(t, "", "classify", "--", "echo a; kill 1 && ls 'x y'")
	require.Zero(t, code, errOut)
	got := decodeClassifications(t, out)
	require.Len(t, got, 1)
	require.Equal(t, "echo a; kill 1 && ls 'x y'", got[0].Command, "kept as given")
	require.Equal(t, "forbidden", got[0].Risk)
}

func TestClassifyReadsOneCommandPerLineOfStdin(t *testing.T) {
	code, out, errOut := runGateCLI(t, "ls -l\n\ncat /etc/hostname\r\ngit status\n", "classify")
	require.Zero(t, code, errOut)
	got := decodeClassifications(t, out)
	require.Len(t, got, 3, "blank lines hold no command")
	require.Equal(t, []string{"ls -l", "cat /etc/hostname", "git status"}, []string{got[0].Command, got[1].Command, got[2].Command})
}

func TestClassifyJSONLLetsACommandHoldNewlines(t *testing.T) {
	code, out, errOut := runGateCLI(t, `"echo a\nrm -rf /"`+"\n"+`"echo <b> & c"`+"\n", "classify", "--jsonl")
	require.Zero(t, code, errOut)
	got := decodeClassifications(t, out)
	require.Len(t, got, 2)
	require.Equal(t, "echo a\nrm -rf /", got[0].Command)
	require.Equal(t, "forbidden", got[0].Risk, "the second line of the command counts")
	require.Contains(t, out, `"command":"echo <b> & c"`, "no HTML escaping")
}

func TestClassifyRefusesALineThatIsNotAJSONString(t *testing.T) {
	code, _, errOut := runGateCLI(t, "\"ok\"\nls\n", "classify", "--jsonl")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "line 2 is not a JSON string")

	code, _, errOut = runGateCLI(t, "", "classify", "--jsonl", "ls")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "give no arguments")
}

func TestClassifyAppliesTheConfigsApprovalRequiredFor(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("agent_terminal:\n  approval_required_for: [safe, moderate]\n"), 0o600))
	code, out, errOut := runGateCLI(t, "echo hi\nsudo ls\n", "classify", "--config", cfg)
	require.Zero(t, code, errOut)
	got := decodeClassifications(t, out)
	require.Equal(t, decisions{"approval", "approval", "approval", "approval"}, got[0].Decisions)
	require.Equal(t, decisions{"blocked", "approval", "approval", "approval"}, got[1].Decisions, "it never unblocks")
}

// classify shows the verdicts the gate gives: the daemon's own files, from
// the same --data-dir, are guarded.
func TestClassifyGuardsTheDaemonsOwnFilesLikeTheGate(t *testing.T) {
	dir := t.TempDir()
	creds := filepath.Join(dir, "credentials.json")
	code, out, errOut := runGateCLI(t, "cat "+creds+"\nrm "+filepath.Join(dir, "users.yaml")+"\ncat /etc/hostname\n", "classify", "--data-dir", dir)
	require.Zero(t, code, errOut)
	got := decodeClassifications(t, out)
	require.Len(t, got, 3)
	require.Equal(t, "high", got[0].Risk, got[0].Reasons)
	require.Contains(t, strings.Join(got[0].Reasons, "\n"), "R13")
	require.Equal(t, "forbidden", got[1].Risk, got[1].Reasons)
	require.Contains(t, strings.Join(got[1].Reasons, "\n"), "daemon's own file")
	require.Equal(t, "safe", got[2].Risk, "other files are as before: %v", got[2].Reasons)
}

func TestClassifyPrintsTheDecisionForARoleSandboxedOrNot(t *testing.T) {
	ws := t.TempDir()
	line := "mkdir -p build && rm -rf build"
	code, out, errOut := runGateCLI(t, "", "classify", "--data-dir", t.TempDir(), "--role", "chat_agent", line)
	require.Zero(t, code, errOut)
	got := decodeClassifications(t, out)
	require.Len(t, got, 1)
	require.Equal(t, "dangerous", got[0].Risk)
	require.Equal(t, "blocked", got[0].Decision)
	require.False(t, got[0].Sandboxed)

	code, out, errOut = runGateCLI(t, "", "classify", "--data-dir", t.TempDir(), "--role", "chat_agent", "--sandboxed", "--workspace", ws, line)
	require.Zero(t, code, errOut)
	got = decodeClassifications(t, out)
	require.Equal(t, "dangerous", got[0].Risk, "the risk itself is unchanged")
	require.Equal(t, "auto", got[0].Decision, "R21: a deletion inside the workspace is contained")
	require.True(t, got[0].Sandboxed)

	code, out, _ = runGateCLI(t, "", "classify", "--data-dir", t.TempDir(), "--role", "chat_agent", "--sandboxed", "--workspace", ws, "sudo reboot")
	require.Zero(t, code)
	require.Equal(t, "blocked", decodeClassifications(t, out)[0].Decision, "high and above are decided as unconfined")

	code, _, errOut = runGateCLI(t, "", "classify", "--role", "root_agent", "ls")
	require.NotZero(t, code)
	require.Contains(t, errOut, "chat_agent")
}
