#!/usr/bin/env bash
# fifo_line (demo-app/bench/fifo-line.sh): lines split by a read timeout
# come back whole, and an unfinished line is kept. KTAP.
set -u
# shellcheck source-path=SCRIPTDIR source=../bench/fifo-line.sh
. "$(dirname "$0")/../bench/fifo-line.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkfifo "$dir/f"
exec 3<>"$dir/f"
# shellcheck source-path=SCRIPTDIR source=../../common/ktap.sh
. "$(dirname "$0")/../../common/ktap.sh"
check() { # DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then ok "$what"; else not_ok "$what (LINE='$LINE' FIFO_PART='$FIFO_PART')"; fi
}

printf '{"event":"ready","id":1}\n{"event":"ready","id":2}\n' >&3
fifo_line 3 1
check "a whole line is returned" [ "$LINE" = '{"event":"ready","id":1}' ]
fifo_line 3 1
check "the next line of the same write is returned" [ "$LINE" = '{"event":"ready","id":2}' ]

# The first half of a line, then a timeout: nothing is returned, the half
# is kept, and the next read completes the line.
printf '{"event":"rea' >&3
rc=0
fifo_line 3 0.2 || rc=$?
check "a timeout within a line returns 1" [ "$rc" = 1 ]
check "and keeps the part read" [ "$FIFO_PART" = '{"event":"rea' ]
printf 'dy","id":3}\n' >&3
fifo_line 3 1
check "the next read returns the line whole" [ "$LINE" = '{"event":"ready","id":3}' ]
check "and nothing is left over" [ -z "$FIFO_PART" ]

rc=0
fifo_line 3 0.2 || rc=$?
test_timeout_empty() { [ "$rc" = 1 ] && [ -z "$LINE" ]; }
check "an empty FIFO times out with LINE empty" test_timeout_empty

printf '{"event":"re' >&3
fifo_line 3 0.2
fifo_line 3 0.2
check "a line never finished stays in FIFO_PART across timeouts" [ "$FIFO_PART" = '{"event":"re' ]
ktap_finish
