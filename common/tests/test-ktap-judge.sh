#!/usr/bin/env bash
# The host's reader of test results (common/tools/ktap-judge.c, built here)
# on serial logs made up for it: a clean run, runs that must FAIL (every
# kind of kernel report the judge looks for, a timeout, a crash
# before the runner, a run cut short, a missing plan, more results than
# planned, results out of order, a reboot, an odd QEMU exit status, nothing
# passed, a NUL byte before a report), per-subtest counts (an entry the
# guest died in included), failed tests listed with the lines that say why,
# and plain KTAP documents (--ktap). KTAP.
# shellcheck disable=SC2016 # the checks' eval expands them
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../ktap.sh
. "$here/../ktap.sh"
make -s -C "$here/.." judge >&2 || exit 1
judge=$here/../build/ktap-judge
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# A guest runner's document: a kselftest-style entry with 40 subtests (two
# skipped), a plain entry, the kmemleak scan; console noise around it and
# kernel lines with timestamps; CRLF line ends as on the serial console.
good() {
	echo "[    0.000000] Linux version 6.12.0"
	echo "mshare-init: [3.1] hugetlb pages: 64"
	echo "KTAP version 1"
	echo "1..3"
	echo "# RUN mshare/msharefs_fs"
	echo "    TAP version 13"
	echo "    1..40"
	for i in $(seq 38); do echo "    ok $i fs.case_$i"; done
	echo "    ok 39 fs.hugetlb # SKIP no pages"
	echo "    ok 40 fs.other # skip lower case"
	echo "        ok 1 deeper nesting is the entry's own"
	echo "# exit=0 time=3s"
	echo "ok 1 mshare/msharefs_fs"
	echo "# RUN true"
	echo "ok 2 true"
	echo "[   12.5] random: crng init done"
	echo "ok 3 kmemleak"
	echo "mshare-init: [20.0] done"
	echo "MSHARE-HOST: qemu-exit=${1:-1} seconds=100"
}
# judge FILE [ARG...]: run the judge; its output in $dir/out, status in $rc.
judge() {
	"$judge" "${@:2}" "$1" >"$dir/out" 2>&1
	rc=$?
}
last() { [ "$(tail -n1 "$dir/out")" = "$1" ]; }
has() { grep -qF -- "$1" "$dir/out"; }
check() { # DESCRIPTION COMMAND...
	if "${@:2}"; then
		ok "$1"
	else
		not_ok "$1"
		sed 's/^/#   /' "$dir/out"
	fi
}

good | sed 's/$/\r/' >"$dir/good.log"
judge "$dir/good.log"
check "a clean run passes" [ $rc = 0 ]
check "one count a subtest, deeper nesting left out" last "40 passed, 0 failed"
check "skips counted apart, any case" has "ktap-judge: verdict=PASS passed=40 failed=0 skipped=2 splats=0 qemu-exit=1"

# Every kind of kernel report fails the run, wherever it is on a line.
while IFS= read -r splat; do
	good | awk -v s="$splat" '$0 == "ok 2 true" { $0 = "ok 2 tr[   13.0] " s } 1' >"$dir/splat.log"
	judge "$dir/splat.log"
	check "a report fails the run: $splat" eval '[ $rc = 1 ] && last "40 passed, 1 failed" && has "splats=1"'
done <<'EOF'
BUG: KASAN: slab-use-after-free in msharefs_x+0x1/0x2
WARNING: CPU: 1 PID: 2 at mm/mshare.c:10 f+0x1/0x2
kernel BUG at mm/mshare.c:100!
Oops: general protection fault, probably for non-canonical address
general protection fault
Kernel panic - not syncing: Fatal exception
UBSAN: shift-out-of-bounds in mm/x.c:1:2
WARNING: possible circular locking dependency detected
WARNING: possible recursive locking detected
WARNING: inconsistent lock state
WARNING: lock held when returning to user space!
WARNING: bad unlock balance detected!
WARNING: suspicious RCU usage
rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:
rcu_sched detected stall on CPU
INFO: rcu_bh detected stalls on CPU 1
watchdog: BUG: soft lockup - CPU#0 stuck for 22s!
Watchdog detected hard LOCKUP on cpu 1
INFO: task x:1 blocked for more than 120 seconds.
hung_task: blocked tasks
unreferenced object 0xffff888100000000 (size 64):
kmemleak: 1 new suspected memory leaks (see /sys/kernel/debug/kmemleak)
list_add corruption. prev->next should be next
list_del corruption, ffff8881 ->next is LIST_POISON1
ODEBUG: free active (active state 0) object: x
BUG: Bad page state in process x  pfn:1
BUG: Bad page map in process x  pte:1
kernel BUG at mm/page_table_check.c:10!
page_table_check: something
BUG: unable to handle page fault; Unable to handle kernel paging request
Call Trace:
EOF
good | sed 's/^ok 2 true$/ok 2 true WARNING: x/' >"$dir/splat.log"
judge "$dir/splat.log"
check "a report is shown with its context" eval 'has "-- line 52:" && has "   | # RUN true"'

good 124 | sed '/^ok 3 kmemleak/,$!b; /^MSHARE-HOST/!d' >"$dir/timeout.log"
judge "$dir/timeout.log"
check "a timeout cut short fails, one failure more than counted" \
	eval '[ $rc = 1 ] && last "39 passed, 1 failed" && has "FAIL: timeout" && has "2 of 3 top-level results"'

good 1 | sed 's/qemu-exit=1/qemu-exit=137/' >"$dir/killed.log"
judge "$dir/killed.log"
check "QEMU killed fails even with a complete document" eval '[ $rc = 1 ] && last "40 passed, 1 failed"'

{ echo "[    1.0] Kernel panic - not syncing: no init"; echo "MSHARE-HOST: qemu-exit=0 seconds=5"; } >"$dir/panic.log"
judge "$dir/panic.log"
check "no document (a panic before the runner) fails" \
	eval '[ $rc = 1 ] && last "0 passed, 1 failed" && has "no KTAP document from the guest runner"'

good | grep -v '^MSHARE-HOST' >"$dir/notrailer.log"
judge "$dir/notrailer.log"
check "no QEMU exit status fails" eval '[ $rc = 1 ] && has "qemu-exit=unknown"'
judge "$dir/notrailer.log" --exit 1
check "--exit gives it" eval '[ $rc = 0 ] && last "40 passed, 0 failed"'

good | sed '/^1\.\.3$/d' >"$dir/noplan.log"
judge "$dir/noplan.log"
check "a document without a plan fails" eval '[ $rc = 1 ] && has "FAIL: no plan"'

{ good | sed '/^MSHARE-HOST/d'; good; } >"$dir/reboot.log"
judge "$dir/reboot.log"
check "two documents (a reboot) fail" eval '[ $rc = 1 ] && has "2 KTAP documents"'

good | sed 's/^MSHARE-HOST/ok 4 one more than planned\n&/' >"$dir/extra.log"
judge "$dir/extra.log"
check "a result after the plan is one too many" \
	eval '[ $rc = 1 ] && last "41 passed, 1 failed" && has "FAIL: 4 top-level results, 3 planned"'

good | sed 's/^ok 2 true$/ok 5 stray from the console/; s/^ok 3 kmemleak$/ok 2 true/' >"$dir/order.log"
judge "$dir/order.log"
check "a top-level result out of order fails" \
	eval '[ $rc = 1 ] && has "FAIL: top-level result 2 is numbered 5"'

good | sed 's/^    ok 7 fs.case_7$/    not ok 7 fs.case_7/; /^    ok 21 /,$!b; /^MSHARE-HOST/!d; s/qemu-exit=1/qemu-exit=124/' >"$dir/died.log"
judge "$dir/died.log"
check "the guest died in an entry: its nested results still count" \
	eval '[ $rc = 1 ] && last "19 passed, 2 failed" && has "0 of 3 top-level results"'

good | sed 's/^ok 2 true$/ok 2 true\x00[   13.0] BUG: KASAN: use-after-free/' >"$dir/nul.log"
judge "$dir/nul.log"
check "a report after a NUL byte is still found" \
	eval '[ $rc = 1 ] && has "splats=1" && has "   | ok 2 true@[   13.0] BUG: KASAN: use-after-free"'

good 3 >"$dir/status3.log"
judge "$dir/status3.log"
check "QEMU status 3 with nothing failed fails" eval '[ $rc = 1 ] && last "40 passed, 1 failed"'

good 3 | sed 's/^    ok 7 fs.case_7$/    not ok 7 fs.case_7/; s/^ok 1 mshare/not ok 1 mshare/' >"$dir/failed.log"
judge "$dir/failed.log"
check "failed subtests count one each, the entry not again" \
	eval '[ $rc = 1 ] && last "39 passed, 1 failed" && has "   not ok 7 fs.case_7"'

good 3 | sed 's/^    ok 6 fs.case_6$/    # case_6 passed quietly\n&/; s/^    ok 7 fs.case_7$/    # fs.c:12:case_7:Expected 0 (0) < dirty (0)\n[   14.0] kernel line between\n    not ok 7 fs.case_7/' >"$dir/why.log"
judge "$dir/why.log"
check "a failed subtest is listed after its own diagnostics only" \
	eval 'grep -A2 -- "---- failed tests" "$dir/out" | tr -d "\n" | grep -qF "      # fs.c:12:case_7:Expected 0 (0) < dirty (0)   not ok 7 fs.case_7" && ! has "case_6 passed quietly"'
good 3 | sed 's/^# exit=0 time=3s$/    segfault in the entry\n&/; s/^ok 1 mshare/not ok 1 mshare/' >"$dir/crash.log"
judge "$dir/crash.log"
check "a failed entry with no failed subtest is listed after its output's tail" \
	eval 'sed -n "/^---- failed tests/,\$p" "$dir/out" | grep -qF "      segfault in the entry"'

good 3 | sed 's/^ok 2 true$/not ok 2 true # exit status 1/' >"$dir/entry.log"
judge "$dir/entry.log"
check "an entry failed with no failed subtest counts one" \
	eval '[ $rc = 1 ] && last "39 passed, 1 failed" && has "   not ok 2 true # exit status 1"'

printf 'KTAP version 1\n1..1\nok 1 kmemleak # SKIP\nMSHARE-HOST: qemu-exit=1\n' >"$dir/nothing.log"
judge "$dir/nothing.log"
check "a run in which nothing passed fails" eval '[ $rc = 1 ] && last "0 passed, 1 failed" && has "no test passed"'

printf 'KTAP version 1\n1..2\n    ok 1 a\n    ok 2 b # SKIP\nok 1 x\nnot ok 2 y\n' | "$judge" --ktap - >"$dir/out"
rc=$?
check "--ktap reads a document from standard input, without QEMU or kernel" \
	eval '[ $rc = 1 ] && last "1 passed, 1 failed" && has "verdict=FAIL passed=1 failed=1 skipped=1"'
printf 'KTAP version 1\n1..1\nok 1 BUG: a test name\n' | "$judge" --ktap - >"$dir/out"
rc=$?
check "--ktap looks for no kernel reports" eval '[ $rc = 0 ] && last "1 passed, 0 failed"'

printf 'KTAP version 1\n1..1\nok 1 x\nnot ok 2 after the plan\n' | "$judge" --ktap - >"$dir/out"
rc=$?
check "--ktap reads past the plan" eval '[ $rc = 1 ] && last "1 passed, 2 failed" && has "FAIL: 2 top-level results, 1 planned"'
printf 'KTAP version 1\n1..1\nok 1 x\nKTAP version 1\n1..1\nnot ok 1 y\n' | "$judge" --ktap - >"$dir/out"
rc=$?
check "--ktap fails a second document" eval '[ $rc = 1 ] && has "FAIL: 2 KTAP documents"'
printf 'KTAP version 1\n1..0\n' | "$judge" --ktap - >"$dir/out"
rc=$?
check "--ktap fails an empty document" eval '[ $rc = 1 ] && last "0 passed, 1 failed" && has "FAIL: no test passed"'
printf 'KTAP version 1\n1..1\nok 1 x # SKIP\n' | "$judge" --ktap - >"$dir/out"
rc=$?
check "--ktap fails a document with nothing but skips" eval '[ $rc = 1 ] && has "FAIL: no test passed"'

"$judge" >"$dir/out" 2>&1
rc=$?
check "no log is a usage error" [ $rc = 2 ]
"$judge" "$dir/missing.log" >"$dir/out" 2>&1
rc=$?
check "a log that cannot be read is an error" [ $rc = 2 ]
"$judge" "$dir" >"$dir/out" 2>&1
rc=$?
check "a read that fails is an error" eval '[ $rc = 2 ] && has "ktap-judge: reading $dir: Is a directory"'
ktap_finish
