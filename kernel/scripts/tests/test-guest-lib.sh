#!/usr/bin/env bash
# The guest test runner (kernel/scripts/guest-lib.sh with common/ktap.sh)
# on the host, under busybox sh (the initramfs's /init) and bash (the
# image's run-guest-tests), over lists with every kind of entry: KTAP with
# skips and failures, plain entries, no output, a crash, a timeout
# (busybox's timeout says 143, coreutils' 124), fewer results than
# planned, two plans, a bail-out, comments, blanks, quoting and a last line
# without a newline; a scratch directory it cannot write; a kmemleak
# report; and its document as the host reads it (common/build/ktap-judge,
# built here). KTAP; the runner's output is shown only on failure, as
# diagnostics.
#   BUSYBOX   the busybox binary (default /bin/busybox)
# shellcheck disable=SC2016 # the checks' eval expands them
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$here/../../..
# shellcheck source-path=SCRIPTDIR source=../../../common/ktap.sh
. "$top/common/ktap.sh"
make -s -C "$top/common" judge >&2 || exit 1
judge=$top/common/build/ktap-judge
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

mkdir -p "$dir/tests" "$dir/scratch"
cd "$dir/tests" || exit 1
cat >tap.sh <<'EOF'
#!/bin/sh
echo "ok 1 - first"
echo "ok 2 - second # SKIP not here"
echo "not ok 3 - third"
echo "ok 4 - fourth # skip lower case"
exit 1
EOF
cat >good.sh <<'EOF'
#!/bin/sh
echo "ok 1 - a"
echo "ok 2 - b"
echo "1..2"
EOF
cat >notap.sh <<'EOF'
#!/bin/sh
echo "just words"
EOF
cat >args.sh <<'EOF'
#!/bin/sh
# One ok per argument, naming it: shows word splitting and no globbing.
i=0
for a in "$@"; do i=$((i + 1)); echo "ok $i - arg [$a] in $(pwd)"; done
EOF
cat >crash.sh <<'EOF'
#!/bin/sh
echo "ok 1 - before the crash"
kill -SEGV $$
EOF
cat >short.sh <<'EOF'
#!/bin/sh
echo "1..10"
echo "ok 1 - the only one of ten"
EOF
cat >bail.sh <<'EOF'
#!/bin/sh
echo "1..2"
echo "ok 1 - first"
echo "Bail out! no device"
EOF
cat >harness.sh <<'EOF'
#!/bin/sh
# As a kselftest_harness program prints it.
echo "TAP version 13"
echo "1..2"
echo "# Starting 2 tests from 1 test cases."
echo "ok 1 t.a"
echo "ok 2 t.b # SKIP not here"
echo "# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:1 error:0"
EOF
cat >twoplans.sh <<'EOF'
#!/bin/sh
printf '1..1\nok 1 - a\n1..1\nok 1 - b\n'
EOF
chmod +x ./*.sh
cat >main.list <<'EOF'
# a comment line, then a blank one

./tap.sh
   ./good.sh    # a comment after an entry
./args.sh  a   'b   c'   "*"   # quoted
plain: true
  plain:   ./notap.sh
plain: false
./notap.sh
./crash.sh
sleep 5
EOF
printf '# nothing but comments\n\n' >empty.list
printf './good.sh\nplain: true\n' >pass.list
printf './short.sh\n./bail.sh\n./harness.sh\nplain: ./short.sh\n./twoplans.sh\n' >plan.list
printf './good.sh\nplain: true' >nonl.list

# drive TIMEOUT LIST...: guest_run in the shell "${cmd[@]}" from $dir, with
# the kmemleak scan off and a failed setup step if SETUP is set, in the
# scratch directory SCRATCH (default $dir/scratch); with LEAKS set the scan
# runs on that file instead, without its waits, and finds a report (sleep
# and cat stand in for the kernel's). Its output goes to $dir/out, then
# guest_ok, the failures and the final directory.
# The host's reading of it goes to $dir/judged (ktap-judge, with the QEMU
# exit status the guest's exit byte gives).
drive() {
	# shellcheck disable=SC2016 # expanded by the shell under test
	(cd "$dir" && SETUP=${SETUP:-} LEAKS=${LEAKS:-} "${cmd[@]}" -c '
		. "$1"; . "$2"; shift 2
		GUEST_KMEMLEAK=0
		if [ -n "$LEAKS" ]; then
			GUEST_KMEMLEAK=1 GUEST_KMEMLEAK_FILE=$LEAKS
			sleep() { :; }
			cat() {
				printf "%s\n" "unreferenced object 0xffff888100000000 (size 64):" \
					"ok 3 a line of the report" "1..1"
			}
		fi
		[ -z "$SETUP" ] || guest_fail "$SETUP" "it failed"
		guest_run "$@"
		echo "guest_ok=$guest_ok"
		echo "failures:$guest_failures"
		echo "pwd=$(pwd)"
	' sh "$top/common/ktap.sh" "$here/../guest-lib.sh" "$1" "${SCRATCH:-$dir/scratch}" "${@:2}") >"$dir/out" 2>&1
	local status=3
	! has guest_ok=1 || status=1
	"$judge" --exit $status "$dir/out" >"$dir/judged" 2>&1
	echo "judge-status=$?" >>"$dir/judged"
}

check() { # DESCRIPTION COMMAND...
	if "${@:2}"; then
		ok "$1"
	else
		not_ok "$1"
		sed 's/^/#   /' "$dir/out" "$dir/judged"
	fi
}
has() { grep -qxF -- "$1" "$dir/out"; }
has_re() { grep -qx -- "$1" "$dir/out"; }
judged() { grep -qxF -- "$1" "$dir/judged"; }

busybox=${BUSYBOX:-/bin/busybox}
shells=(bash)
if [ -x "$busybox" ]; then
	shells+=("$busybox sh")
else
	not_ok "$busybox missing (apt-get install busybox-static): the initramfs's shell is not tested"
fi

for sh in "${shells[@]}"; do
	# shellcheck disable=SC2206
	cmd=($sh)
	sh=${sh##*/}
	drive 1 "$dir/tests/main.list"
	check "$sh: a KTAP header, then the plan: nine entries and the kmemleak scan" \
		eval 'has "KTAP version 1" && [ "$(grep -A1 -x "KTAP version 1" "$dir/out" | sed -n 2p)" = 1..10 ]'
	# passed: tap 1, good 2, args 3, plain true 1, plain notap 1, crash 1
	# failed: tap 1, plain false, notap (no output), crash (status), sleep (timeout)
	# skipped: tap 2, the kmemleak scan
	check "$sh: the host counts each subtest" judged "9 passed, 5 failed"
	check "$sh: and the skips apart" \
		judged "ktap-judge: verdict=FAIL passed=9 failed=5 skipped=3 splats=0 qemu-exit=3"
	check "$sh: the judge fails the run" judged "judge-status=1"
	check "$sh: the entry output is nested" has "    ok 2 - second # SKIP not here"
	check "$sh: a not ok makes the entry fail" has "not ok 1 ./tap.sh # 1 not ok"
	check "$sh: its exit status and time are a diagnostic" has_re "# exit=1 time=[0-9]*s"
	check "$sh: a comment after an entry and extra blanks are dropped" has "ok 2 ./good.sh"
	check "$sh: a plain entry runs without its prefix" has "ok 4 true"
	check "$sh: a failing plain entry says its status" has "not ok 6 false # exit status 1"
	check "$sh: a plain entry with no output passes on status 0" has "ok 5 ./notap.sh"
	check "$sh: an entry with no output and status 0 fails" has "not ok 7 ./notap.sh # no KTAP output"
	check "$sh: a crash after an ok is a failure with its status" \
		has "not ok 8 ./crash.sh # exit status 139"
	check "$sh: an entry past the timeout is said to have timed out" \
		has_re "not ok 9 sleep 5 # timed out after 1s, status \(124\|143\)"
	check "$sh: the kmemleak scan turned off is a skip" has "ok 10 kmemleak (scan turned off) # SKIP"
	check "$sh: an entry is a shell command line: quotes keep blanks" \
		has "    ok 2 - arg [b   c] in $dir/tests"
	check "$sh: and keep a glob from expanding" has "    ok 3 - arg [*] in $dir/tests"
	check "$sh: failures name the entries" has "failures: ./tap.sh false ./notap.sh ./crash.sh sleep 5"
	check "$sh: the guest leaves with the failure byte" has guest_ok=0
	check "$sh: the caller is back in /" has pwd=/
	check "$sh: the scratch files are gone" [ -z "$(ls -A "$dir/scratch")" ]

	drive 5 "$dir/tests/pass.list"
	check "$sh: a passing list leaves with the pass byte" has guest_ok=1
	check "$sh: and the host passes it" judged "judge-status=0"
	check "$sh: with its counts" judged "3 passed, 0 failed"

	SETUP=mount-msharefs drive 5 "$dir/tests/pass.list" "$dir/tests/empty.list" "$dir/tests/missing.list"
	check "$sh: a failed setup step is a test of its own, first" has "not ok 1 mount-msharefs # it failed"
	check "$sh: a list without entries is a failure" has "not ok 4 list-empty # no entries in $dir/tests/empty.list"
	check "$sh: a missing list is a failure" has "not ok 5 list-missing # no $dir/tests/missing.list"
	check "$sh: lists run one after the other in one document" \
		judged "ktap-judge: verdict=FAIL passed=3 failed=3 skipped=1 splats=0 qemu-exit=3"

	drive 5 "$dir/tests/plan.list"
	check "$sh: fewer results than the entry planned fail it" has "not ok 1 ./short.sh # 1 of 10 results"
	check "$sh: a bail-out fails the entry, even with status 0" has "not ok 2 ./bail.sh # bailed out"
	check "$sh: a kselftest_harness program passes" has "ok 3 ./harness.sh"
	check "$sh: a plain entry is not held to a plan" has "ok 4 ./short.sh"
	check "$sh: two plans fail the entry" has "not ok 5 ./twoplans.sh # 2 plans"
	check "$sh: the host counts their nested results" judged "6 passed, 3 failed"

	drive 5 "$dir/tests/nonl.list"
	check "$sh: a list's last line without a newline is an entry" \
		eval 'has "1..3" && has "ok 2 true" && judged "judge-status=0"'

	SCRATCH=$dir/gone drive 5 "$dir/tests/pass.list"
	check "$sh: an exit status that could not be recorded fails the entry" \
		has "not ok 1 ./good.sh # no exit status recorded in $dir/gone"
	check "$sh: for a plain entry too" has "not ok 2 true # no exit status recorded in $dir/gone"
	check "$sh: and the run" has guest_ok=0

	: >"$dir/leaks"
	LEAKS=$dir/leaks drive 5 "$dir/tests/pass.list"
	check "$sh: a kmemleak report is diagnostics in the document" \
		eval 'has "# ok 3 a line of the report" && has "# 1..1" && ! has "ok 3 a line of the report"'
	check "$sh: and fails the scan" has "not ok 3 kmemleak # unreferenced objects"
	check "$sh: the host reads the report as one, not as results" \
		judged "ktap-judge: verdict=FAIL passed=3 failed=1 skipped=0 splats=1 qemu-exit=3"
done
ktap_finish
