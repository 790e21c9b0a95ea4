# shellcheck shell=sh disable=SC3043
# run-list.sh: the loop of the two guest test runners, sourced by both:
# kernel/scripts/guest-init.sh (busybox sh, /lib/mshare/run-list.sh in the
# initramfs) and the image's run-guest-tests (bash,
# /usr/lib/mshare-image/run-list.sh). kernel/scripts/tests/test-run-list.sh
# runs it on the host under both shells.
#
# A list has one entry per line, `path/of/program [args]` relative to the
# list's directory, `#` starts a comment; the prefix `plain: ` marks an entry
# that prints no TAP and passes by exit status 0 alone. An entry is a
# command line for `sh -c` (shell quoting and globbing apply). Each entry runs
# under `timeout`, framed by `=== RUN ENTRY` and
# `=== END ENTRY: status=N Ss ok=N not_ok=N skip=N`; its TAP `ok`, `ok ... # SKIP`
# and `not ok` lines are counted.
#
# Sourcing it sets the counters passed, failed, skipped and failures (a
# blank-separated list of what failed) to zero; run_list adds to them, and
# so does fail NAME [WHY], which the callers use for their own failures.
#
# The loop forks little: on the debug kernel under TCG each fork is
# expensive, and the commands it used to fork between entries (sed, date,
# grep, cat, rm: about eight) cost about 1.3 s per entry. It uses shell
# builtins where it can and one awk per entry for the counts. (`local` is
# not POSIX, but busybox sh and bash both have it.)

passed=0
failed=0
skipped=0
failures=""

# fail NAME [WHY]: count a failure and print `=== FAIL NAME (WHY)`.
fail() {
	failed=$((failed + 1))
	failures="$failures $1"
	echo "=== FAIL $1${2:+ ($2)}"
}

# rl_trim TEXT: rl_entry = TEXT without leading and trailing blanks.
rl_trim() {
	rl_entry=${1#"${1%%[![:space:]]*}"}
	rl_entry=${rl_entry%"${rl_entry##*[![:space:]]}"}
}

# rl_cs: REPLY = CLOCK_BOOTTIME in centiseconds (/proc/uptime). A fraction
# such as 08 is read as 108 - 100, not as octal.
rl_cs() {
	local up _
	read -r up _ </proc/uptime
	REPLY=$((${up%.*} * 100 + 1${up#*.} - 100))
}

# run_list NAME LIST TIMEOUT SCRATCH: run the entries of the file LIST from
# its directory, each with TIMEOUT seconds; SCRATCH is a writable directory
# for the output of the entry that runs. A missing or empty list is a
# failure named list-NAME.
run_list() {
	local name="$1" list="$2" tmo="$3" scratch="$4" n=0 line plain start secs rc p s f
	local out="$scratch/test-out"
	if [ ! -f "$list" ]; then
		fail "list-$name" "no $list"
		return 0
	fi
	cd "${list%/*}" || {
		fail "list-$name" "cannot enter the directory of $list"
		return 0
	}
	while IFS= read -r line <&3; do
		rl_trim "${line%%#*}"
		[ -n "$rl_entry" ] || continue
		plain=0
		case $rl_entry in
		plain:*) plain=1 && rl_trim "${rl_entry#plain:}" ;;
		esac
		n=$((n + 1))
		echo "=== RUN $rl_entry"
		rl_cs
		start=$REPLY
		{
			timeout -k 10 "$tmo" sh -c "exec $rl_entry" </dev/null 2>&1
			echo $? >"$scratch/test-rc"
		} | tee "$out"
		rl_cs
		secs=$(((REPLY - start) / 100))
		read -r rc <"$scratch/test-rc"
		# shellcheck disable=SC2046
		set -- $(awk '/^ok / { if (/^ok .*# *[Ss][Kk][Ii][Pp]/) s++; else p++ }
			/^not ok / { f++ }
			END { print p + 0, s + 0, f + 0 }' "$out")
		p=$1 s=$2 f=$3
		passed=$((passed + p))
		skipped=$((skipped + s))
		failed=$((failed + f))
		if [ "$f" -gt 0 ]; then
			failures="$failures $rl_entry"
			echo "=== FAIL $rl_entry ($f not ok)"
		fi
		if [ "$rc" -ne 0 ]; then
			if [ "$f" -eq 0 ]; then
				if [ "$rc" -ge 124 ] && [ "$secs" -ge "$tmo" ]; then
					fail "$rl_entry" "timed out after ${tmo}s, status $rc"
				else
					fail "$rl_entry" "exit status $rc"
				fi
			fi
		elif [ $((p + s + f)) -eq 0 ]; then
			if [ $plain = 1 ]; then
				passed=$((passed + 1))
			else
				fail "$rl_entry" "no TAP output"
			fi
		fi
		echo "=== END $rl_entry: status=$rc ${secs}s ok=$p not_ok=$f skip=$s"
	done 3<"$list"
	rm -f "$out" "$scratch/test-rc"
	cd / || return 0
	[ "$n" -gt 0 ] || fail "list-$name" "no entries in $list"
}
