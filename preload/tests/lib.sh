# shellcheck shell=bash
# What the shell tests share: KTAP output (ok, not_ok, skip, ktap_finish:
# common/ktap.sh), running a command (run: rc, out, err), looking at what it
# printed, and running under the library with a clean environment (under).

# shellcheck source-path=SCRIPTDIR source=../../common/ktap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../common/ktap.sh"

# run CMD [ARG...]: sets rc, out (stdout) and err (stderr).
run() {
	local e
	e=$(mktemp)
	out=$("$@" 2>"$e")
	rc=$?
	err=$(cat "$e")
	rm -f "$e"
}

# What the last run printed, as TAP comments.
show() {
	echo "#   status $rc"
	[ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/#   out: /'
	[ -z "$err" ] || printf '%s\n' "$err" | sed 's/^/#   err: /'
}

# check DESCRIPTION TEST [ARG...]: ok if TEST succeeds; else not ok, with
# what the last run printed.
check() {
	local desc=$1
	shift
	if "$@"; then
		ok "$desc"
	else
		not_ok "$desc"
		show
	fi
}

# has TEXT NEEDLE: TEXT holds NEEDLE. lines TEXT NEEDLE: how many lines of
# TEXT hold it.
has() { grep -qF -- "$2" <<<"$1"; }
lines() { if [ -z "$1" ]; then echo 0; else grep -cF -- "$2" <<<"$1"; fi; }

# status N: the last run exited with N. quiet: it printed nothing on stderr.
status() { [ "$rc" = "$1" ]; }
quiet() { [ -z "$err" ]; }

# under LIB [VAR=VALUE...] CMD [ARG...]: CMD with LIB preloaded and none of
# the library's variables but those given.
under() {
	local lib=$1
	shift
	env -u MSHARE_PRELOAD_MIN_SIZE -u MSHARE_PRELOAD_REGION -u MSHARE_PRELOAD_STRICT \
		-u MSHARE_PRELOAD_QUIET -u MSHARE_SOCKET -u FAKE_MSHARE_ATTACHED \
		LD_PRELOAD="$lib" "$@"
}
