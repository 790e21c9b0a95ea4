#!/usr/bin/env bash
# scripts/soak.sh [--cycles N] [--kernel DIR | --release] [--out DIR] [--name NAME] [--timeout SEC]
# `make soak`: the long loops of the guest image's tests, under systemd.
# image/tests/owner/restart.sh with N cycles (default 100) alternating
# `systemctl restart`, kill -9 of the daemon and an upgrade of its binary,
# while two database workers in crun containers update and check pool and
# a new container verifies every record after each cycle; then
# image/tests/hook/loop.sh with 100 containers, two at a time. make test
# runs the same scripts with 3 cycles (owner.list) and 20 containers
# (hook.list). Writes OUT/NAME.md (default docs/results/soak-restart-
# YYYYMMDD-HHMM.md): every cycle's line, the workers' reports, what a
# restart costs next to a cold start (TCG emulation figures), the loop's
# lines, the kernel and the command; ends with "N passed, N failed".
#   --cycles N     cycles, a multiple of 10 (default 100; $SOAK_CYCLES too)
#   --kernel DIR   default: the cached debug kernel of the current series
#                  (image/run-tests.sh picks it; --build-kernel is not done
#                  here: `make kernel` first)
#   --release      the release kernel (built or reused): shorter cycles
#                  than the debug kernel's; the report names the kernel
#   --timeout SEC  of the whole QEMU run (default: 120 s per cycle plus 1800)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cycles=${SOAK_CYCLES:-100}
kargs=()
out=$root/docs/results
name=soak-restart-$(date +%Y%m%d-%H%M)
tmo=
while [ $# -gt 0 ]; do
	case $1 in
	--cycles) cycles=$2; shift ;;
	--kernel) kargs=(--kernel "$2"); shift ;;
	--release) kargs=(--kernel "$("$root/kernel/scripts/build.sh" release)") ;;
	--out) out=$2; shift ;;
	--name) name=$2; shift ;;
	--timeout) tmo=$2; shift ;;
	-h | --help) sed -n '2,/^[^#]/{/^#/p}' "$0"; exit 0 ;;
	*) echo "soak.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
if ! [[ $cycles =~ ^[1-9][0-9]*0$ ]]; then
	echo "soak.sh: --cycles must be a multiple of 10" >&2
	exit 2
fi
tmo=${tmo:-$((cycles * 120 + 1800))}

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
{
	echo "# make soak: $cycles cycles of restart, kill -9 and upgrade (scripts/soak.sh)"
	echo "owner/restart.sh begin"
	for _ in $(seq $((cycles / 10))); do echo "owner/restart.sh cycles 10"; done
	echo "owner/restart.sh end"
	echo "owner/restart.sh cost 1G"
	echo "hook/loop.sh begin"
	for _ in $(seq 10); do echo "hook/loop.sh run 10"; done
	echo "hook/loop.sh end 100"
} >"$stage/soak.list"

start=$(date +%s)
rc=0
"$root/image/run-tests.sh" --tests soak --extra-dir "$stage" "${kargs[@]}" --timeout "$tmo" \
	--test-timeout 3000 >"$stage/run.out" 2>&1 || rc=$?
secs=$(($(date +%s) - start))
summary=$(tail -n1 "$stage/run.out")
# The entries' own lines, which the guest's KTAP document nests one level
# down, at the start of the line again.
sed 's/\r$//; s/^    //' "$stage/run.out" >"$stage/run.txt"

mkdir -p "$out"
report=$out/$name.md
{
	echo "# Soak: mshare-owner restarts, $cycles cycles ($(date -u +%Y-%m-%d))"
	echo
	echo "\`make soak\` (\`scripts/soak.sh --cycles $cycles\`): \`image/tests/owner/restart.sh\` in the"
	echo "guest image under systemd, on the kernel named below, QEMU TCG (2 vCPUs, 4 GiB),"
	echo "while two demo-workers in crun containers update and check \`pool\` and a new"
	echo "container verifies every record after each cycle. Cycles alternate"
	echo "\`systemctl restart\`, \`kill -9\` of the daemon (\`Restart=on-failure\`) and an"
	echo "upgrade (a changed binary renamed over \`/usr/sbin/mshare-owner\`, then a restart)."
	echo
	echo "Result: **$summary** (guest run exit $rc) in $secs s wall time."
	echo "Kernel: $(grep -o 'kernel [^,]*' "$stage/run.txt" | head -n1 | sed 's/^kernel //')"
	echo "Guest log: \`$(grep -a '^ktap-judge: verdict=' "$stage/run.txt" | tail -n1)\`"
	echo
	echo "## What a restart costs (TCG emulation figures, not hardware)"
	echo
	echo '```'
	sed -n '/^# What a restart costs/,/^#     upgrade/p' "$stage/run.txt" | sed 's/^# \{0,1\}//' || true
	echo '```'
	echo
	echo "## The workers and the daemon"
	echo
	echo '```'
	grep -E '(ok|not ok) [0-9]+ (after|both workers|no worker|the workers|two database|pool is region|the fd store)' \
		"$stage/run.txt" || true
	grep -E '^# daemon pid' "$stage/run.txt" | sed 's/^# //' || true
	echo '```'
	echo
	echo "## Every cycle"
	echo
	echo '```'
	grep -E '^(ok|not ok) [0-9]+ cycle ' "$stage/run.txt" || true
	echo '```'
	echo
	echo "## 100 containers through mshare-oci-hook"
	echo
	echo '```'
	sed -n '/^# RUN hook\/loop.sh/,/^\(not \)\{0,1\}ok [0-9]* hook\/loop.sh end/p' "$stage/run.txt" |
		grep -E '^(ok|not ok|# before)' || true
	echo '```'
	echo
	if [ "$rc" != 0 ]; then
		echo "## Failures"
		echo
		echo '```'
		grep -E '^(not ok|ktap-judge|FAIL:)' "$stage/run.txt" | head -n 50 || true
		echo '```'
	fi
} >"$report"
echo "soak: $report"
echo "$summary"
exit "$rc"
