package risk

import "testing"

// Issue 12, point 4: bash features that turn data into code. Each is at
// least the risk of what it can run, and high when that is not a literal.
func TestTextBashEvaluatesAsCodeRunsWhatItCanRun(t *testing.T) {
	runRuleCases(t, []ruleCase{
		// hash -p binds a name to another program for the rest of the shell.
		{"hash -p /bin/rm ls; ls -rf /", Forbidden, "R9a"},
		{"hash -p ./evil ls", High, "R13 command rebinding"},
		{"hash -p \"$P\" ls", High, "R13 command rebinding"},
		{"hash -p /sbin/reboot true; true", Forbidden, "R8"},
		// Arithmetic evaluates variable values as expressions, and a
		// subscript in one expands (and runs) command substitutions.
		{"x='a[$(reboot)]'; (( x ))", Forbidden, "R8"},
		{"x='a[$(reboot)]'; echo $(( x + 1 ))", Forbidden, "R8"},
		{"let 'a[$(reboot)]'", Forbidden, "R8"},
		{"x='a[$(reboot)]'; [[ $x -eq 1 ]]", Forbidden, "R8"},
		{"declare -i n; n='a[$(reboot)]'", Forbidden, "R8"},
		{"y='a[$(reboot)]'; x=y; (( x ))", Forbidden, "R8"},
		{"x='a[$(reboot)]'; arr[$x]=1", Forbidden, "R8"},
		{"x='a[$(reboot)]'; echo ${arr[$x]}", Forbidden, "R8"},
		{"[[ -v 'a[$(reboot)]' ]]", Forbidden, "R8"},
		{"read -r n < input.txt; (( n > 3 ))", High, "R3 arithmetic"},
		{"n=$(cat input.txt); echo $(( n * 2 ))", High, "R3 arithmetic"},
		// Prompt expansion runs substitutions.
		{"x='$(reboot)'; echo ${x@P}", Forbidden, "R8"},
		{"echo ${PS1@P}", High, "R3"},
		{"PS0='$(reboot)'", Forbidden, "R8"},
		{"PS1=\"$X\"", High, "R3"},
		{"PS2='$(kill 1)'", Forbidden, "R7"},
		// Callbacks and key bindings are commands.
		{"mapfile -C 'reboot' -c 1 arr < file", Forbidden, "R8"},
		{"readarray -C \"$CB\" a < f", High, "R3"},
		{"complete -C 'reboot' ls", Forbidden, "R8"},
		{"compgen -C 'kill 1' x", Forbidden, "R7"},
		{"bind -x '\"\\C-t\": reboot'", Forbidden, "R8"},
		{"trap -- 'reboot' EXIT", Forbidden, "R8"},
		// Loading a builtin runs its code; fc runs history through an editor.
		{"enable -f ./evil.so evil", High, "R13 loads a builtin"},
		{"fc -e vi", High, "R3"},
		{"fc -s", High, "R3"},
	})
}

// Ordinary arithmetic and the read-only forms of these builtins stay safe.
func TestBashCodeFeaturesUsedAsDataStaySafe(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"echo $(( 1 + 2 ))", Safe, "R15"},
		{"for ((i=0; i<3; i++)); do echo $i; done", Safe, "R15"},
		{"(( $# > 1 )) && echo many", Safe, "R15"},
		{"i=0; (( i++ )); echo $i", Safe, "R15"},
		{"x=5; [[ $x -eq 5 ]] && echo five", Safe, "R15"},
		{"[[ $? -ne 0 ]] && echo failed", Safe, "R15"},
		{"fc -l", Safe, "R15"},
		{"hash -r", Safe, "R15"},
		{"hash", Safe, "R15"},
		{"enable -n echo", Safe, "R15"},
		{"complete -p", Safe, "R15"},
		{"mapfile -t lines < file", Safe, "R15"},
		{"echo ${HOME@Q}", Safe, "R15"},
		{"bind -l", Safe, "R15"},
	})
}

// Programs that take a command from their environment or configuration
// run it: the value is classified as the command it is.
func TestProgramsTakingACommandFromTheirEnvironment(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='reboot' git log", Forbidden, "R8"},
		{"export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.st GIT_CONFIG_VALUE_0='!reboot'; git st", Forbidden, "R8"},
		{"GIT_CONFIG_PARAMETERS=\"'core.pager'='reboot'\" git log", Forbidden, "R8"},
		{"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.sshCommand GIT_CONFIG_VALUE_0=\"$C\" git fetch", High, "R3"},
		{"git --config-env=core.pager=X log", High, "R3"},
		{"P=reboot git --config-env=core.pager=P log", Forbidden, "R8"},
		{"git --config-env core.fsmonitor=P status", High, "R3"},
		{"env 'BASH_FUNC_ls%%=() { reboot; }' bash -c ls", Forbidden, "R8"},
		{"GIT_EXEC_PATH=/tmp/x git status", High, "R13 environment hijack"},
		{"GIT_CONFIG_GLOBAL=./cfg git log", High, "R13 environment hijack"},
		{"GIT_TEMPLATE_DIR=/tmp/t git init", High, "R13 environment hijack"},
		{"LESS='+!reboot' less f", Forbidden, "R8"},
		{"SUDO_EDITOR='reboot' sudoedit /etc/hosts", Forbidden, "R8"},
		{"GIT_SEQUENCE_EDITOR='reboot' git rebase -i HEAD~2", Forbidden, "R8"},
		{"GIT_PROXY_COMMAND=reboot git fetch git://h/r", Forbidden, "R8"},
		{"RSYNC_RSH='reboot' rsync a h:b", Forbidden, "R8"},
		{"KUBE_EDITOR='reboot' kubectl edit deploy x", Forbidden, "R8"},
		{"JAVA_TOOL_OPTIONS=-javaagent:/tmp/a.jar java -jar app.jar", High, "R13 environment hijack"},
		{"DYLD_INSERT_LIBRARIES=./x.dylib ls", High, "R13 environment hijack"},
		{"AWS_PAGER='kill 1' aws s3 ls", Forbidden, "R7"},
		{"PERL5LIB=/tmp/x perl app.pl", High, "R13 environment hijack"},
	})
}
