# shellgate shell integration for zsh: .zshrc.
#
# The user's .zshrc first, with ZDOTDIR as theirs from here on (so zsh reads
# their .zlogin itself), then hooks that report command boundaries with OSC
# 133 (A prompt start, B prompt end, C command start, D;<status> finished),
# the command line with OSC 633;E and the directory with OSC 7. shellgate
# removes these sequences from the output it serves.

__shellgate_leave
if [[ -r ${ZDOTDIR:-$HOME}/.zshrc ]]; then
	source "${ZDOTDIR:-$HOME}/.zshrc"
fi
unfunction __shellgate_enter __shellgate_leave
unset __shellgate_dir __shellgate_user_zdotdir

if [[ -z ${__shellgate_loaded-} ]]; then
__shellgate_loaded=1

# A nonce, when the host gave one, proves a 633;E line came from here and
# not from a program's output. It stays in the shell, out of the environment.
typeset -g __shellgate_nonce=${SHELLGATE_NONCE-}
unset SHELLGATE_NONCE
typeset -g __shellgate_ran=0 __shellgate_cwd= __shellgate_cwd_url=
typeset -g __shellgate_ps1_end=$'%{\e]133;B\a%}'

# __shellgate_urlencode sets REPLY to $1 percent-encoded byte by byte, as
# OSC 7's file: URL needs.
__shellgate_urlencode() {
	emulate -L zsh
	setopt nomultibyte
	local s=$1 out= c hex i
	if [[ $s != *[^a-zA-Z0-9/._~-]* ]]; then
		REPLY=$s
		return
	fi
	for ((i = 1; i <= $#s; i++)); do
		c=$s[i]
		if [[ $c == [a-zA-Z0-9/._~-] ]]; then
			out+=$c
		else
			builtin printf -v hex '%%%02X' "'$c"
			out+=$hex
		fi
	done
	REPLY=$out
}

# __shellgate_escape sets REPLY to $1 escaped as OSC 633 wants it: \ as \\,
# and ; and every character up to 0x20 (and DEL) as \xAB.
__shellgate_escape() {
	emulate -L zsh
	local out c hex n i
	out=${1//\\/\\\\}
	out=${out//;/\\x3b}
	out=${out// /\\x20}
	if [[ $out == *[[:cntrl:]]* ]]; then
		local s=$out
		out=
		for ((i = 1; i <= $#s; i++)); do
			c=$s[i]
			if [[ $c == [[:cntrl:]] ]]; then
				builtin printf -v n '%d' "'$c"
				if ((n < 128)); then
					builtin printf -v hex '\\x%02x' $n
					c=$hex
				fi
			fi
			out+=$c
		done
	fi
	REPLY=$out
}

# First of the precmd hooks, while $? is still the command's status.
__shellgate_precmd() {
	local code=$?
	emulate -L zsh
	if ((__shellgate_ran)); then
		__shellgate_ran=0
		builtin printf '\e]133;D;%s\a' $code
	fi
	if [[ $PWD != "$__shellgate_cwd" ]]; then
		__shellgate_cwd=$PWD
		__shellgate_urlencode $PWD
		__shellgate_cwd_url=$REPLY
	fi
	builtin printf '\e]7;file://%s%s\a\e]133;A\a' ${HOST-} $__shellgate_cwd_url
	return $code
}

# Last of the precmd hooks: B at the end of the prompt, put back when a
# prompt theme rewrote PS1.
__shellgate_precmd_last() {
	local code=$?
	emulate -L zsh
	if [[ $PS1 != *"$__shellgate_ps1_end" ]]; then
		PS1+=$__shellgate_ps1_end
	fi
	return $code
}

# preexec gets the command line as typed: report it, then C.
__shellgate_preexec() {
	emulate -L zsh
	__shellgate_ran=1
	__shellgate_escape "$1"
	if [[ -n $__shellgate_nonce ]]; then
		builtin printf '\e]633;E;%s;%s\a' $REPLY $__shellgate_nonce
	else
		builtin printf '\e]633;E;%s\a' $REPLY
	fi
	builtin printf '\e]133;C\a'
}

# Installed under zsh's own options, whatever the user's (nounset,
# ksh_arrays …) would make of these lines.
() {
	emulate -L zsh
	typeset -ga precmd_functions preexec_functions
	precmd_functions=(__shellgate_precmd $precmd_functions __shellgate_precmd_last)
	preexec_functions+=(__shellgate_preexec)
}

fi
