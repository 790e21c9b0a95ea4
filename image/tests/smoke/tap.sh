# The helpers of the image's tests; sourced. KTAP output (ok, not_ok,
# skip, ktap_plan, ktap_finish) is common/ktap.sh's, which image/run-tests.sh
# puts at the top of the tests disk; the tests are one directory down.
# shellcheck shell=sh
# shellcheck source=../../../common/ktap.sh
. "$(dirname "$0")/../ktap.sh"
# check DESCRIPTION COMMAND...: ok if the command succeeds; its output is
# shown either way, as TAP comments.
check() {
	desc=$1
	shift
	if out=$("$@" 2>&1); then
		ok "$desc"
	else
		not_ok "$desc (status $?)"
	fi
	[ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/# /'
}
