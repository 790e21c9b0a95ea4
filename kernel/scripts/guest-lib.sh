# shellcheck shell=sh disable=SC3043
# guest-lib.sh: the in-guest test run, sourced by both guest runners after
# common/ktap.sh: kernel/scripts/guest-init.sh (the initramfs's /init, busybox
# sh; both files in /lib/mshare) and the image's run-guest-tests (bash under
# systemd; both in /usr/lib/mshare-image). kernel/scripts/tests/
# test-guest-lib.sh runs it on the host under both shells.
#
# The run is one KTAP version 1 document on the console: the header, the
# plan, one test a list entry with the entry's own output nested one level
# down (indented by four blanks), and a last test for the kmemleak scan. The
# host reads it once, from the serial log (common/tools/ktap-judge.c), and
# counts there: each nested result is one subtest, and a failed entry with
# no failed subtest (a crash, a timeout, no output) counts as one failure.
#
# A list has one entry per line, `path/of/program [args]` relative to the
# list's directory, `#` starts a comment; the prefix `plain: ` marks an entry
# that prints no KTAP and passes by exit status 0 alone. An entry is a
# command line for `sh -c` (shell quoting and globbing apply), run under
# `timeout` from the list's directory. It fails if it exits non-zero, prints
# a `not ok` or a `Bail out!`, or (unless plain) prints no result, more than
# one plan (`1..N` at the start of a line), or a plan its results do not
# meet (an entry without a plan is judged by its results alone). The last
# line of a list needs no newline. A missing or empty list is one failed
# test, list-NAME.
#
#   say TEXT            a progress line, "$GUEST_TAG: [uptime] TEXT"
#   guest_fail NAME WHY the runner's own setup failed: reported as a failed
#                       test ahead of the entries
#   guest_run TIMEOUT SCRATCH LIST...   the run, TIMEOUT seconds an entry,
#                       SCRATCH a writable directory; sets guest_ok to 1 if
#                       no test failed and an entry passed
#   guest_entry ENTRY PLAIN TIMEOUT SCRATCH   one entry (PLAIN 1 for a plain
#                       one), its output nested, then its result line; the
#                       host tests' runner, common/run-tap.sh, uses it too
#   guest_exit          leave QEMU through isa-debug-exit (iobase 0xf4): byte
#                       0 (QEMU status 1) if guest_ok, byte 1 (status 3)
#                       otherwise; a reboot if that does not stop it (QEMU
#                       runs with -no-reboot; the host then sees an exit
#                       status that is no pass)
# GUEST_KMEMLEAK=0 leaves the kmemleak scan out (reported as skipped).
# GUEST_KMEMLEAK_FILE stands in for /sys/kernel/debug/kmemleak in the
# runner's own tests. A report is printed as diagnostics (`# ` before each
# line).
#
# The loop forks little: on the debug kernel under TCG each fork is
# expensive. It uses shell builtins where it can and one awk an entry, which
# both indents the output and counts its results, failures, plans and
# bail-outs (into SCRATCH/entry-counts, the exit status into
# SCRATCH/entry-rc: a pipeline's status is its last command's).
# (`local` is not POSIX, but busybox sh and bash both have it.)

guest_ok=0
guest_setup=""
guest_failures=""

say() {
	local up _
	read -r up _ </proc/uptime 2>/dev/null || up='?'
	echo "${GUEST_TAG:-mshare-guest}: [$up] $*"
}

guest_fail() {
	guest_setup="$guest_setup$1 # $2
"
}

# gl_trim TEXT: gl_entry = TEXT without leading and trailing blanks.
gl_trim() {
	gl_entry=${1#"${1%%[![:space:]]*}"}
	gl_entry=${gl_entry%"${gl_entry##*[![:space:]]}"}
}

# gl_cs: REPLY = CLOCK_BOOTTIME in centiseconds (/proc/uptime). A fraction
# such as 08 is read as 108 - 100, not as octal.
gl_cs() {
	local up _
	read -r up _ </proc/uptime
	REPLY=$((${up%.*} * 100 + 1${up#*.} - 100))
}

# gl_count LIST: REPLY = the number of entries of LIST (0 if it is missing).
gl_count() {
	local line
	REPLY=0
	[ -f "$1" ] || return 0
	while IFS= read -r line || [ -n "$line" ]; do
		gl_trim "${line%%#*}"
		[ -z "$gl_entry" ] || REPLY=$((REPLY + 1))
	done <"$1"
}

# gl_failed DESC: a failed top-level test, remembered for the summary.
gl_failed() {
	guest_failures="$guest_failures ${1%% # *}"
	not_ok "$1"
}

# gl_is_num VALUE...: whether each VALUE is a decimal number.
gl_is_num() {
	local v
	for v; do
		case $v in
		'' | *[!0-9]*) return 1 ;;
		esac
	done
}

guest_entry() {
	local entry="$1" plain="$2" tmo="$3" scratch="$4" start secs rc results notok plans plan bail why=""
	echo "# RUN $entry"
	gl_cs
	start=$REPLY
	rm -f "$scratch/entry-rc" "$scratch/entry-counts"
	{
		timeout -k 10 "$tmo" sh -c "exec $entry" </dev/null 2>&1
		echo $? >"$scratch/entry-rc"
	} | awk -v out="$scratch/entry-counts" '
		{ print "    " $0; fflush() }
		/^not ok / { f++ }
		/^(not )?ok / { r++ }
		/^1\.\.[0-9]/ { p++; n = substr($1, 4) + 0 }
		/^Bail out!/ { b++ }
		END { print r + 0, f + 0, p + 0, n + 0, b + 0 > out }'
	gl_cs
	secs=$(((REPLY - start) / 100))
	# Either file missing or garbled (scratch full or gone, awk killed) is
	# a failure: empty values must not read as a pass.
	read -r rc <"$scratch/entry-rc" || rc=
	read -r results notok plans plan bail <"$scratch/entry-counts" || results=
	rm -f "$scratch/entry-rc" "$scratch/entry-counts"
	echo "# exit=${rc:-?} time=${secs}s"
	if ! gl_is_num "$rc"; then
		why="no exit status recorded in $scratch"
	elif ! gl_is_num "$results" "$notok" "$plans" "$plan" "$bail"; then
		why="no result counts recorded in $scratch"
	elif [ "$notok" -gt 0 ]; then
		why="$notok not ok"
	elif [ "$bail" -gt 0 ]; then
		why="bailed out"
	elif [ "$rc" -ne 0 ]; then
		if [ "$rc" -ge 124 ] && [ "$secs" -ge "$tmo" ]; then
			why="timed out after ${tmo}s, status $rc"
		else
			why="exit status $rc"
		fi
	elif [ "$plain" = 0 ]; then
		if [ "$results" -eq 0 ]; then
			why="no KTAP output"
		elif [ "$plans" -gt 1 ]; then
			why="$plans plans"
		elif [ "$plans" = 1 ] && [ "$results" -ne "$plan" ]; then
			why="$results of $plan results"
		fi
	fi
	if [ -z "$why" ]; then
		ok "$entry"
		guest_passed=1
	else
		gl_failed "$entry # $why"
	fi
}

# gl_list LIST TIMEOUT SCRATCH: the entries of LIST, from its directory.
gl_list() {
	local list="$1" tmo="$2" scratch="$3" name line plain n=0
	name=${list##*/}
	name=${name%.list}
	if [ ! -f "$list" ]; then
		gl_failed "list-$name # no $list"
		return 0
	fi
	cd "${list%/*}" || {
		gl_failed "list-$name # cannot enter the directory of $list"
		return 0
	}
	while IFS= read -r line <&3 || [ -n "$line" ]; do
		gl_trim "${line%%#*}"
		[ -n "$gl_entry" ] || continue
		plain=0
		case $gl_entry in
		plain:*) plain=1 && gl_trim "${gl_entry#plain:}" ;;
		esac
		n=$((n + 1))
		guest_entry "$gl_entry" "$plain" "$tmo" "$scratch"
	done 3<"$list"
	cd / || return 0
	[ "$n" -gt 0 ] || gl_failed "list-$name # no entries in $list"
}

gl_kmemleak() {
	local leaks="${GUEST_KMEMLEAK_FILE:-/sys/kernel/debug/kmemleak}" report line
	if [ "${GUEST_KMEMLEAK:-1}" = 0 ]; then
		skip "kmemleak (scan turned off)"
	elif [ ! -e "$leaks" ]; then
		skip "kmemleak (not in this kernel)"
	else
		say "kmemleak scan"
		sleep 6
		echo scan >"$leaks"
		sleep 6
		echo scan >"$leaks"
		report=$(cat "$leaks" 2>/dev/null)
		if [ -n "$report" ]; then
			# Diagnostics, inside the document: a line of the report
			# must not read as a result or a plan.
			while IFS= read -r line; do
				echo "# $line"
			done <<EOF
$report
EOF
			gl_failed "kmemleak # unreferenced objects"
		else
			ok kmemleak
		fi
	fi
}

guest_run() {
	local tmo="$1" scratch="$2" list plan=1 line
	shift 2
	while IFS= read -r line; do
		[ -z "$line" ] || plan=$((plan + 1))
	done <<EOF
$guest_setup
EOF
	for list; do
		gl_count "$list"
		plan=$((plan + (REPLY > 0 ? REPLY : 1)))
	done
	guest_passed=0
	ktap_plan "$plan"
	while IFS= read -r line; do
		[ -z "$line" ] || gl_failed "$line"
	done <<EOF
$guest_setup
EOF
	for list; do
		say "running $list (timeout ${tmo}s per entry)"
		gl_list "$list" "$tmo" "$scratch"
	done
	gl_kmemleak
	[ -z "$guest_failures" ] || say "failed:$guest_failures"
	say "done"
	guest_ok=0
	# shellcheck disable=SC2154 # ktap.sh's count of not ok lines
	[ "$ktap_failed" -gt 0 ] || [ "$guest_passed" = 0 ] || guest_ok=1
}

guest_exit() {
	sync
	if [ -c /dev/port ]; then
		if [ "$guest_ok" = 1 ]; then printf '\000'; else printf '\001'; fi |
			dd of=/dev/port bs=1 seek=244 count=1 conv=notrunc 2>/dev/null
	fi
	sleep 2
	say "isa-debug-exit did not stop QEMU; rebooting"
	if command -v systemctl >/dev/null; then
		systemctl reboot --force --force
	else
		reboot -f
	fi
}
