#!/bin/sh
# wrap.sh [-C] [-H NR] PROG [ARG...]
# Guest-side helper (busybox sh) for the mm-regress entries that need some
# setup that a list line cannot express:
#   -C     run PROG from its own directory (ksm_functional_tests execs
#          "./ksm_functional_tests" relative to the working directory)
#   -H NR  run PROG with vm.nr_hugepages=NR and restore the old count after;
#          a count that cannot be restored fails the entry, since the tests
#          after it rely on the huge pages
# PROG is taken relative to the working directory the runner gives (/tests).
# Exit status: PROG's (1 if the setup or the restore failed).
# shellcheck shell=sh

chdir=0
nr=
while [ $# -gt 0 ]; do
	case $1 in
	-C) chdir=1 ;;
	-H) nr=$2; shift ;;
	*) break ;;
	esac
	shift
done
[ $# -ge 1 ] || { echo "usage: wrap.sh [-C] [-H NR] PROG [ARG...]" >&2; exit 1; }
prog=$1
shift
case $prog in
/*) ;;
*) prog=$PWD/$prog ;;
esac
[ -x "$prog" ] || { echo "wrap.sh: $prog is not executable" >&2; exit 1; }
[ $chdir = 0 ] || cd "${prog%/*}" || exit 1

if [ -z "$nr" ]; then
	exec "$prog" "$@"
fi

knob=/proc/sys/vm/nr_hugepages
old=$(cat $knob) || exit 1
if ! echo "$nr" >$knob || [ "$(cat $knob)" != "$nr" ]; then
	echo "wrap.sh: cannot set nr_hugepages to $nr (now $(cat $knob))" >&2
	echo "$old" >$knob
	exit 1
fi
echo "wrap.sh: nr_hugepages $old -> $nr"

# Run PROG in the background so that a timeout's SIGTERM to this shell
# reaches it too, and the huge pages are still put back.
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

echo "$old" >$knob
now=$(cat $knob)
if [ "$now" != "$old" ]; then
	echo "wrap.sh: could restore only $now of $old huge pages" >&2
	[ $rc -ne 0 ] || rc=1
else
	echo "wrap.sh: nr_hugepages restored to $old"
fi
exit $rc
