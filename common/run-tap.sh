#!/bin/sh
# Runs the TAP test commands given as arguments (each one shell word list)
# and adds their results up. "ok N # SKIP reason" counts as skipped, never
# as passed. A program that exits non-zero without a failed check counts as
# one failure. The last line is "N passed, N failed"; the skips are counted
# on the line before it.
passed=0
failed=0
skipped=0
for t in "$@"; do
	echo "# $t"
	out=$(sh -c "$t" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	s=$(printf '%s\n' "$out" | grep -c '^ok .*# SKIP')
	p=$(printf '%s\n' "$out" | grep '^ok ' | grep -vc '# SKIP')
	f=$(printf '%s\n' "$out" | grep -c '^not ok ')
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $t exited with status $rc"
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
done
echo "# $skipped skipped"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
