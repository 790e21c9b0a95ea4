# shellcheck shell=sh
# ktap.sh: KTAP version 1 output for the shell test producers, sourced by
# every one of them (POSIX sh: busybox sh, dash and bash). The format is the
# kernel's (Documentation/dev-tools/ktap.rst): a `KTAP version 1` header,
# one `ok N DESC` / `not ok N DESC` line a check, `ok N DESC # SKIP` for a
# check that cannot run here (counted as skipped, never as passed), `# `
# for diagnostics, a `1..N` plan. The guest runner (kernel/scripts/
# guest-lib.sh) and common/run-tap.sh nest each producer's output one level
# down; common/tools/ktap-judge.c counts its results, one a check.
#
#   ktap_plan N    the header and the plan, when the count is known first
#   ok DESC, not_ok DESC, skip DESC
#   ktap_finish    the plan if none was given (a producer that does not know
#                  its count ends on it); status 1 if a check failed
# The header comes with the first line if ktap_plan was not called.
# ktap_n and ktap_failed count what was printed.

ktap_n=0
ktap_failed=0
ktap_planned=0
ktap_started=0

ktap_header() {
	[ "$ktap_started" = 1 ] || echo "KTAP version 1"
	ktap_started=1
}

ktap_plan() {
	ktap_header
	ktap_planned=1
	echo "1..$1"
}

ok() {
	ktap_header
	ktap_n=$((ktap_n + 1))
	echo "ok $ktap_n $*"
}

not_ok() {
	ktap_header
	ktap_n=$((ktap_n + 1))
	ktap_failed=$((ktap_failed + 1))
	echo "not ok $ktap_n $*"
}

skip() {
	ktap_header
	ktap_n=$((ktap_n + 1))
	echo "ok $ktap_n $* # SKIP"
}

ktap_finish() {
	ktap_header
	[ "$ktap_planned" = 1 ] || echo "1..$ktap_n"
	[ "$ktap_failed" = 0 ]
}
