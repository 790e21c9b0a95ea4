#!/bin/sh
# wrap.sh [-C] [-S NAME=VALUE] PROG [ARG...]
# Guest-side helper (busybox sh) for the mm-regress entries that need some
# setup that a list line cannot express:
#   -C             run PROG from its own directory (ksm_functional_tests
#                  execs "./ksm_functional_tests" relative to the working
#                  directory)
#   -S NAME=VALUE  run PROG with the sysctl NAME (dotted, as sysctl(8)
#                  writes it: vm.nr_hugepages) set to VALUE, and put the old
#                  value back after; a value that cannot be restored fails
#                  the entry, since the entries after it rely on it
# PROG is taken relative to the working directory the runner gives (/tests).
# Exit status: PROG's (1 if the setup or the restore failed).
# shellcheck shell=sh

usage="usage: wrap.sh [-C] [-S NAME=VALUE] PROG [ARG...]"
chdir=0
name=
while [ $# -gt 0 ]; do
	case $1 in
	-C) chdir=1 ;;
	-S)
		case $2 in
		?*=?*) name=${2%%=*} value=${2#*=} ;;
		*) echo "wrap.sh: -S wants NAME=VALUE, not '$2'" >&2; exit 1 ;;
		esac
		shift
		;;
	-*) echo "wrap.sh: unknown option $1; $usage" >&2; exit 1 ;;
	*) break ;;
	esac
	shift
done
[ $# -ge 1 ] || { echo "$usage" >&2; exit 1; }
prog=$1
shift
case $prog in
/*) ;;
*) prog=$PWD/$prog ;;
esac
[ -x "$prog" ] || { echo "wrap.sh: $prog is not executable" >&2; exit 1; }
[ $chdir = 0 ] || cd "${prog%/*}" || exit 1

if [ -z "$name" ]; then
	exec "$prog" "$@"
fi

knob=/proc/sys/$(echo "$name" | tr . /)
[ -w "$knob" ] || { echo "wrap.sh: no sysctl $name ($knob)" >&2; exit 1; }
old=$(cat "$knob") || exit 1
if ! echo "$value" >"$knob" || [ "$(cat "$knob")" != "$value" ]; then
	echo "wrap.sh: cannot set $name to $value (now $(cat "$knob"))" >&2
	echo "$old" >"$knob"
	exit 1
fi
echo "wrap.sh: $name $old -> $value"

# Run PROG in the background so that a timeout's SIGTERM to this shell
# reaches it too, and the old value is still put back.
"$prog" "$@" &
pid=$!
trap 'kill -TERM $pid 2>/dev/null' TERM INT HUP
rc=0
wait $pid || rc=$?
# wait returns early (status > 128) when a trapped signal arrives.
while kill -0 $pid 2>/dev/null; do
	rc=0
	wait $pid || rc=$?
done
trap - TERM INT HUP

echo "$old" >"$knob"
now=$(cat "$knob")
if [ "$now" != "$old" ]; then
	echo "wrap.sh: could restore $name only to $now, not $old" >&2
	[ $rc -ne 0 ] || rc=1
else
	echo "wrap.sh: $name restored to $old"
fi
exit $rc
