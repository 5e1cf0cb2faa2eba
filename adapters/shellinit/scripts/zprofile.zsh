# shellgate shell integration for zsh: .zprofile (login shells), the user's
# own in its place.

__shellgate_leave
if [[ -r ${ZDOTDIR:-$HOME}/.zprofile ]]; then
	source "${ZDOTDIR:-$HOME}/.zprofile"
fi
__shellgate_enter
