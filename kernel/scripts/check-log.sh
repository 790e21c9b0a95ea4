#!/usr/bin/env bash
# check-log.sh [--quiet] [--exit STATUS] LOG
# Judge a QEMU test run from its serial log. PASS only if
#  - QEMU exited with status 1 (isa-debug-exit byte 0), taken from --exit or
#    from the host trailer `MSHARE-HOST: qemu-exit=N` that run-qemu.sh
#    appends; a timeout (124/137) is never a pass,
#  - the guest printed `MSHARE-RESULT: passed=N failed=0 skipped=K`,
#  - and the log holds no kernel splat (BUG, WARNING, KASAN, lockdep, Oops,
#    panic, RCU stall, soft lockup, hung task, kmemleak, UBSAN, ...).
# Offending lines are printed with context. The last line printed is always
#   check-log: verdict=PASS|FAIL passed=N failed=M skipped=K splats=S qemu-exit=E extra=X
# where extra=1 when the run failed for a reason the guest's counts do not
# show (splat, timeout, crash, no result line, odd exit status).
# Exit status: 0 PASS, 1 FAIL, 2 usage error.
set -euo pipefail

quiet=0
status=
while [ $# -gt 1 ]; do
	case $1 in
	--quiet) quiet=1 ;;
	--exit) status=$2; shift ;;
	*) break ;;
	esac
	shift
done
if [ $# -ne 1 ] || [ ! -f "$1" ]; then
	echo "usage: $0 [--quiet] [--exit STATUS] LOG" >&2
	exit 2
fi
log=$1
say() { [ $quiet = 1 ] || printf '%s\n' "$*"; }

# Serial output has CRLF line ends; judge a clean copy.
clean=$(mktemp)
trap 'rm -f "$clean"' EXIT
tr -d '\r' <"$log" >"$clean"

if [ -z "$status" ]; then
	status=$(sed -n 's/^MSHARE-HOST: qemu-exit=\([0-9]*\).*/\1/p' "$clean" | tail -n1)
fi
status=${status:-unknown}

reasons=()
extra=0

# Kernel reports. Matched anywhere on a line: printk output may land in the
# middle of a test's line on the shared console.
splat_re='BUG:|WARNING:|KASAN|UBSAN|kernel BUG at|Oops|general protection fault'
splat_re+='|Kernel panic|possible circular locking|possible recursive locking'
splat_re+='|inconsistent lock state|lock held when returning|bad unlock balance'
splat_re+='|suspicious RCU usage|detected stalls? on CPU|rcu_(sched|preempt|bh) detected stall'
splat_re+='|rcu: INFO:|soft lockup|hard LOCKUP|hung_task|blocked for more than'
splat_re+='|unreferenced object 0x|suspected memory leak|list_(add|del) corruption'
splat_re+='|ODEBUG:|Bad page (state|map)|page_table_check|Unable to handle kernel'
splat_re+='|Call Trace:'
mapfile -t hits < <(grep -nE "$splat_re" "$clean" | grep -v '^[0-9]*:MSHARE-HOST:' | cut -d: -f1 || true)
splats=${#hits[@]}
if [ "$splats" -gt 0 ]; then
	reasons+=("$splats kernel report line(s) in the log")
	extra=1
	say "---- kernel reports in $log ----"
	shown=0 last_end=0
	for n in "${hits[@]}"; do
		[ "$n" -le "$last_end" ] && continue
		if [ $shown -ge 8 ]; then
			say "... (more reports omitted; see the log)"
			break
		fi
		from=$((n > 3 ? n - 3 : 1))
		[ "$from" -le "$last_end" ] && from=$((last_end + 1))
		last_end=$((n + 25))
		say "-- line $n:"
		[ $quiet = 1 ] || sed -n "${from},${last_end}p" "$clean" | sed 's/^/   | /'
		shown=$((shown + 1))
	done
	say "---- offending lines ----"
	[ $quiet = 1 ] || grep -nE "$splat_re" "$clean" | grep -v '^[0-9]*:MSHARE-HOST:' | head -n 40 | sed 's/^/   /'
fi

result=$(grep -oE 'MSHARE-RESULT: passed=[0-9]+ failed=[0-9]+ skipped=[0-9]+' "$clean" | tail -n1 || true)
nres=$(grep -cE 'MSHARE-RESULT: ' "$clean" || true)
if [ -z "$result" ]; then
	passed=0 failed=0 skipped=0
	reasons+=("no MSHARE-RESULT line (guest crashed, panicked or hung)")
	extra=1
else
	[[ $result =~ passed=([0-9]+)\ failed=([0-9]+)\ skipped=([0-9]+) ]]
	passed=${BASH_REMATCH[1]} failed=${BASH_REMATCH[2]} skipped=${BASH_REMATCH[3]}
	[ "$nres" -eq 1 ] || { reasons+=("$nres MSHARE-RESULT lines (guest rebooted?)"); extra=1; }
	[ "$failed" -eq 0 ] || reasons+=("$failed test(s) failed")
	[ "$passed" -gt 0 ] || { [ "$failed" -gt 0 ] || { reasons+=("no test passed"); extra=1; }; }
fi

case $status in
1) ;;
3) [ "${failed:-0}" -gt 0 ] || { reasons+=("QEMU exit status 3 (guest reported failure)"); extra=1; } ;;
124 | 137) reasons+=("timeout: QEMU killed (status $status)"); extra=1 ;;
0) reasons+=("QEMU exit status 0: the guest powered off or panicked instead of reporting"); extra=1 ;;
*) reasons+=("QEMU exit status $status, not 1"); extra=1 ;;
esac

if [ -n "$result" ]; then
	say "results: passed=$passed failed=$failed skipped=$skipped"
	grep -E '^=== FAIL ' "$clean" | sed 's/^/   /' || true
fi
if [ ${#reasons[@]} -eq 0 ]; then
	verdict=PASS
else
	verdict=FAIL
	for r in "${reasons[@]}"; do say "FAIL: $r"; done
fi
echo "check-log: verdict=$verdict passed=$passed failed=$failed skipped=$skipped splats=$splats qemu-exit=$status extra=$extra"
[ $verdict = PASS ]
