# shellgate shell integration for bash.
#
# bash reads this as its --rcfile, in place of ~/.bashrc. It first reads
# what bash would have read without us, then reports command boundaries with
# OSC 133 (A prompt start, B prompt end, C command start, D;<status>
# finished), the command line with OSC 633;E and the directory with OSC 7.
# shellgate removes these sequences from the output it serves.

if [[ -z ${__shellgate_loaded-} ]]; then
__shellgate_loaded=1

# What to read of the user's own startup: rc (~/.bashrc), login (the
# profiles: a login shell cannot take --rcfile, so shellgate starts a
# non-login one and the profiles are read here) or none.
case ${SHELLGATE_BASH_STARTUP-rc} in
login)
	if [[ -r /etc/profile ]]; then . /etc/profile; fi
	for __shellgate_f in "$HOME/.bash_profile" "$HOME/.bash_login" "$HOME/.profile"; do
		if [[ -r $__shellgate_f ]]; then
			. "$__shellgate_f"
			break
		fi
	done
	unset __shellgate_f
	;;
rc)
	if [[ -r $HOME/.bashrc ]]; then . "$HOME/.bashrc"; fi
	;;
esac
unset SHELLGATE_BASH_STARTUP

# A nonce, when the host gave one, proves a 633;E line came from here and
# not from a program's output. It stays in the shell, out of the environment.
__shellgate_nonce=${SHELLGATE_NONCE-}
unset SHELLGATE_NONCE

# __shellgate_urlencode sets __shellgate_r to $1 percent-encoded byte by
# byte, as OSC 7's file: URL needs. No subshell: it runs at every prompt.
__shellgate_urlencode() {
	local LC_ALL=C s=$1 out= c hex i
	if [[ $s != *[!a-zA-Z0-9/._~-]* ]]; then
		__shellgate_r=$s
		return
	fi
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		case $c in
		[a-zA-Z0-9/._~-]) out+=$c ;;
		*)
			builtin printf -v hex '%%%02X' "'$c"
			out+=$hex
			;;
		esac
	done
	__shellgate_r=$out
}

# __shellgate_escape sets __shellgate_r to $1 escaped as OSC 633 wants it:
# \ as \\, and ; and every byte up to 0x20 (and DEL) as \xAB.
__shellgate_escape() {
	local LC_ALL=C out c hex i
	out=${1//\\/\\\\}
	out=${out//;/\\x3b}
	out=${out// /\\x20}
	if [[ $out == *[[:cntrl:]]* ]]; then
		local s=$out
		out=
		for ((i = 0; i < ${#s}; i++)); do
			c=${s:i:1}
			case $c in
			[[:cntrl:]])
				builtin printf -v hex '\\x%02x' "'$c"
				out+=$hex
				;;
			*) out+=$c ;;
			esac
		done
	fi
	__shellgate_r=$out
}

# Runs first at every prompt, while $? is still the command's status, and
# hands the status on to the user's own prompt commands.
__shellgate_prompt_first() {
	local status=$?
	builtin printf '\e]133;D;%s\a' "$status"
	return "$status"
}

# Runs last at every prompt: the directory, the prompt start, and the marks
# the prompts carry, put back if something rewrote PS1 or PS0.
__shellgate_prompt_last() {
	local status=$?
	if [[ $PWD != "${__shellgate_cwd-}" ]]; then
		__shellgate_cwd=$PWD
		__shellgate_urlencode "$PWD"
		__shellgate_cwd_url=$__shellgate_r
	fi
	builtin printf '\e]7;file://%s%s\a\e]133;A\a' "${HOSTNAME-}" "$__shellgate_cwd_url"
	if [[ $PS1 != *"$__shellgate_ps1_end" ]]; then
		PS1+=$__shellgate_ps1_end
	fi
	if [[ -n $__shellgate_ps0 && ${PS0-} != "$__shellgate_ps0"* ]]; then
		PS0=$__shellgate_ps0${PS0-}
	fi
	# bash numbers the next history entry HISTCMD; a command line that gets
	# a number above this one was recorded, so history 1 is that line.
	__shellgate_histcmd=${HISTCMD-0}
	return "$status"
}

# Runs as PS0 is expanded — in a subshell, after the line is read and before
# it runs: the command line when history has it, then C.
__shellgate_preexec() {
	if ((${HISTCMD-0} > ${__shellgate_histcmd-0})); then
		local HISTTIMEFORMAT= line
		line=$(builtin history 1)
		line=${line#"${line%%[0-9]*}"} # the number's leading blanks
		line=${line#*[0-9][ *] }        # the number, the modified flag, a blank
		__shellgate_escape "$line"
		if [[ -n $__shellgate_nonce ]]; then
			builtin printf '\e]633;E;%s;%s\a' "$__shellgate_r" "$__shellgate_nonce"
		else
			builtin printf '\e]633;E;%s\a' "$__shellgate_r"
		fi
	fi
	builtin printf '\e]133;C\a'
}

__shellgate_ps1_end='\[\e]133;B\a\]'
# PS0 (bash 4.4 and later) is the only hook that runs once per command line
# without taking the user's DEBUG trap; it needs promptvars to expand.
__shellgate_ps0=
if ((BASH_VERSINFO[0] > 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] >= 4))) && shopt -q promptvars; then
	__shellgate_ps0='$(__shellgate_preexec)'
fi

# Wrap the user's PROMPT_COMMAND rather than replace it: an array from bash
# 5.1 on, a string of lines before.
if ((BASH_VERSINFO[0] > 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] >= 1))); then
	PROMPT_COMMAND=(__shellgate_prompt_first "${PROMPT_COMMAND[@]}" __shellgate_prompt_last)
else
	PROMPT_COMMAND=$'__shellgate_prompt_first\n'"${PROMPT_COMMAND-}"$'\n__shellgate_prompt_last'
fi

fi
