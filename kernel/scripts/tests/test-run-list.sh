#!/usr/bin/env bash
# run_list (kernel/scripts/run-list.sh), the loop of both guest test
# runners, on the host: under busybox sh (the initramfs's /init) and bash
# (the image's run-guest-tests), over a list with every kind of entry:
# TAP with skips and failures, plain entries, no TAP, a crash, a timeout
# (busybox's timeout says 143, coreutils' 124), comments, blanks and
# quoting. TAP; the runner's own output is shown only on failure,
# as comments.
set -u
here=$(cd "$(dirname "$0")" && pwd)
runlist=$here/../run-list.sh
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=0
failed=0

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

# drive LIST TIMEOUT: run run_list in the shell "${cmd[@]}" from $dir; its
# output goes to $dir/out, the counters, failures and final directory to
# $dir/counts.
drive() {
	# shellcheck disable=SC2016 # expanded by the shell under test
	(cd "$dir" && "${cmd[@]}" -c '
		passed=9 failed=9 skipped=9 failures=stale
		. "$1"
		run_list "$2" "$3" "$4" "$5"
		echo "$passed $failed $skipped" >"$6"
		printf "%s\n" "$failures" >>"$6"
		pwd >>"$6"
	' sh "$runlist" "$(basename "$1" .list)" "$1" "$2" "$dir/scratch" "$dir/counts") >"$dir/out" 2>&1
}

check() { # DESCRIPTION COMMAND...
	local what=$1
	n=$((n + 1))
	shift
	if "$@"; then
		echo "ok $n - $what"
	else
		echo "not ok $n - $what"
		failed=$((failed + 1))
		sed 's/^/#   /' "$dir/out"
		sed 's/^/#   counts: /' "$dir/counts" 2>/dev/null
	fi
}
has() { grep -qxF -- "$1" "$dir/out"; }
has_re() { grep -qx -- "$1" "$dir/out"; }
counts() { [ "$(sed -n 1p "$dir/counts")" = "$1" ]; }
failures() { [ "$(sed -n 2p "$dir/counts")" = "$1" ]; }

busybox=${BUSYBOX:-/bin/busybox}
shells=(bash)
if [ -x "$busybox" ]; then
	shells+=("$busybox sh")
else
	n=$((n + 1))
	echo "not ok $n - $busybox missing (apt-get install busybox-static): the initramfs's shell is not tested"
	failed=$((failed + 1))
fi

for sh in "${shells[@]}"; do
	# shellcheck disable=SC2206
	cmd=($sh)
	sh=${sh##*/}
	rm -f "$dir/counts"
	drive "$dir/tests/main.list" 1
	# passed: tap 1, good 2, args 3, plain true 1, plain notap 1, crash 1
	# failed: tap 1, plain false, notap (no TAP), crash (status), sleep (timeout)
	# skipped: tap 2
	check "$sh: the counters add up (passed failed skipped)" counts "9 5 2"
	check "$sh: failures name the entries" \
		failures " ./tap.sh false ./notap.sh ./crash.sh sleep 5"
	check "$sh: a not ok with a non-zero status is one failure" has "=== FAIL ./tap.sh (1 not ok)"
	check "$sh: the END line counts ok, not ok and skip apart" \
		has_re "=== END ./tap.sh: status=1 [0-9]*s ok=1 not_ok=1 skip=2"
	check "$sh: a comment after an entry and extra blanks are dropped" has "=== RUN ./good.sh"
	check "$sh: a plain entry runs without its prefix" has "=== RUN false"
	check "$sh: a failing plain entry says its status" has "=== FAIL false (exit status 1)"
	check "$sh: a plain entry with no TAP passes on status 0" \
		has_re "=== END ./notap.sh: status=0 [0-9]*s ok=0 not_ok=0 skip=0"
	check "$sh: an entry with no TAP and status 0 fails" has "=== FAIL ./notap.sh (no TAP output)"
	check "$sh: a crash after an ok is a failure with its status" \
		has "=== FAIL ./crash.sh (exit status 139)"
	check "$sh: an entry past the timeout is said to have timed out" \
		has_re "=== FAIL sleep 5 (timed out after 1s, status \(124\|143\))"
	check "$sh: an entry is a shell command line: quotes keep blanks" \
		has "ok 2 - arg [b   c] in $dir/tests"
	check "$sh: and keep a glob from expanding" has "ok 3 - arg [*] in $dir/tests"
	check "$sh: three arguments, no more" \
		has_re "=== END \./args\.sh .*: status=0 [0-9]*s ok=3 not_ok=0 skip=0"
	check "$sh: the caller is back in /" [ "$(sed -n 3p "$dir/counts")" = / ]
	check "$sh: the scratch files are gone" [ -z "$(ls -A "$dir/scratch")" ]

	drive "$dir/tests/empty.list" 5
	check "$sh: a list without entries is a failure" has "=== FAIL list-empty (no entries in $dir/tests/empty.list)"
	check "$sh: and only one" counts "0 1 0"

	drive "$dir/tests/missing.list" 5
	check "$sh: a missing list is a failure" has "=== FAIL list-missing (no $dir/tests/missing.list)"
done
echo "1..$n"
[ "$failed" = 0 ]
