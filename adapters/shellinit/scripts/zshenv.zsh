# shellgate shell integration for zsh: .zshenv.
#
# zsh reads this because shellgate pointed ZDOTDIR at its own directory, so
# that its .zshrc is read after the user's. Everything here reads the
# user's own file in its place, with ZDOTDIR as the user had it, and points
# ZDOTDIR back here only for the files zsh has still to read.

__shellgate_dir=$ZDOTDIR
if [[ -n ${SHELLGATE_USER_ZDOTDIR+set} ]]; then
	ZDOTDIR=$SHELLGATE_USER_ZDOTDIR
else
	unset ZDOTDIR
fi
unset SHELLGATE_USER_ZDOTDIR

if [[ -r ${ZDOTDIR:-$HOME}/.zshenv ]]; then
	source "${ZDOTDIR:-$HOME}/.zshenv"
fi

# __shellgate_enter keeps whatever ZDOTDIR the user's files left as theirs,
# and sends zsh back here for its next file; __shellgate_leave undoes it.
__shellgate_enter() {
	if [[ -n ${ZDOTDIR+set} ]]; then
		__shellgate_user_zdotdir=$ZDOTDIR
	else
		unset __shellgate_user_zdotdir
	fi
	ZDOTDIR=$__shellgate_dir
}
__shellgate_leave() {
	if [[ -n ${__shellgate_user_zdotdir+set} ]]; then
		ZDOTDIR=$__shellgate_user_zdotdir
	else
		unset ZDOTDIR
	fi
}

if [[ -o interactive ]]; then
	__shellgate_enter
fi
