#!/usr/bin/env bash
# The flush-cost benchmark (part of `make bench`): what mshare_unmap() and
# mshare_protect() of 2 MiB cost the owner with 1 to 1024 attached
# processes, against the same change to plain shared memory mapped by as
# many (kernel/selftests/bench/mshare_flush.c), on the release kernel booted
# on the busybox initramfs. Writes docs/results/bench-flush-STAMP.{jsonl,md}.
#   --sharers LIST   sharer counts (default 1,16,256,1024)
#   --reps N         repetitions a point (default 21)
#   --spin           the sharers spin on CPUs 1..N-1 instead of sleeping
#                    (protect only; see mshare_flush.c)
#   --smp N          guest CPUs (default 2)
#   --kernel DIR     a kernel directory (default: build.sh release)
#   --out DIR        where the results go (default docs/results)
set -euo pipefail
. "$(dirname "$0")/common.sh"

sharers=1,16,256,1024 reps=21 kdir='' out=$REPO_DIR/docs/results spin='' smp=2
while [ $# -gt 0 ]; do
	case $1 in
	--sharers) [[ ${2:-} =~ ^[0-9,]+$ ]] || die "--sharers: expected counts such as 1,16 (got '${2:-}')"; sharers=$2; shift ;;
	--reps) [[ ${2:-} =~ ^[0-9]+$ ]] || die "--reps: expected a number (got '${2:-}')"; reps=$2; shift ;;
	--spin) spin=' --spin' ;;
	--smp) [[ ${2:-} =~ ^[0-9]+$ ]] && [ "$2" -ge 2 ] || die "--smp: expected 2 or more CPUs (got '${2:-}')"; smp=$2; shift ;;
	--kernel) kdir=$2; shift ;;
	--out) out=$2; shift ;;
	-h | --help) sed -n '2,/^[^#]/{/^#/p}' "$0"; exit 0 ;;
	*) die "unknown option '$1' (see --help)" ;;
	esac
	shift
done
scripts=$KERNEL_DIR/scripts
[ -n "$kdir" ] || kdir=$("$scripts/build.sh" release)
initrd=$MSHARE_CACHE/bench-initramfs.cpio.gz
list_initramfs bench-flush "bench/mshare_flush --sharers $sharers --reps $reps$spin" "$initrd"

stamp=$(date -u +%Y%m%d-%H%M)
mkdir -p "$MSHARE_CACHE/logs" "$out"
logf=$MSHARE_CACHE/logs/bench-flush-$stamp.log
log "booting ${kdir##*/}: $sharers sharers, $reps repetitions a point (TCG emulation)"
rc=0
verdict=$("$scripts/run-qemu.sh" --kernel "$kdir" --initrd "$initrd" --tests bench-flush --log "$logf" \
	--timeout 3600 --test-timeout 3000 --mem 4G --smp "$smp" | grep '^ktap-judge: verdict=') || rc=$?
# The entry's output is nested one level down in the guest's KTAP document.
sed -n 's/^ *# MSHARE-BENCH-FLUSH //p' "$logf" | tr -d '\r' >"$out/bench-flush-$stamp.jsonl"
[ -s "$out/bench-flush-$stamp.jsonl" ] || die "the guest printed no records; see $logf"
sharers_do="The sharers sleep meanwhile."
[ -z "$spin" ] || sharers_do="The sharers run meanwhile: the owner is on CPU 0, sharer i spins
reading the memory on CPU 1 + i % $((smp - 1)), so a change must interrupt every CPU that runs one."
head="# Flush cost: changing a region with 1 to N attached processes

\`mshare_unmap()\` and \`mshare_protect()\` (to read-only) of a 2 MiB object in
a region that N processes have attached and read, timed in the owner,
against plain shared memory: a 2 MiB memfd that N processes map and read,
\`fallocate(PUNCH_HOLE)\` for the unmap, and for the protect the sum of the
N processes' own \`mprotect()\` calls (plain shared memory has no call that
changes every process). $sharers_do Median and 90th
percentile of $reps repetitions. **Times are TCG emulation figures** ($smp
vCPUs, no KVM): compare the columns with each other.

- Command: \`kernel/scripts/bench-flush.sh --sharers $sharers --reps $reps$spin --smp $smp\`
- Kernel: ${kdir##*/}; QEMU TCG, \`-m 4G -smp $smp\`
- Date: $(date -u '+%Y-%m-%d %H:%M') UTC; host: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)
- Guest: ${verdict:-no verdict (see the log)}"
jq -rs --arg head "$head" -f "$KERNEL_DIR/bench/flush-report.jq" "$out/bench-flush-$stamp.jsonl" \
	>"$out/bench-flush-$stamp.md"
log "wrote $out/bench-flush-$stamp.md"
cat "$out/bench-flush-$stamp.md"
exit "$rc"
