# Tiny TAP helpers for the smoke tests; sourced.
# shellcheck shell=sh
tap_n=0
ok() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $*"
}
not_ok() {
	tap_n=$((tap_n + 1))
	echo "not ok $tap_n - $*"
}
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
