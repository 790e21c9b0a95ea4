#!/usr/bin/env bash
# `make demo`: boot our kernel in QEMU and show what mshare does: 64
# processes reading every page of 1 GiB through one msharefs region, next to
# processes mapping the same amount of plain shared memory (memfd MAP_SHARED).
#   MSHARE_DEMO_KERNEL=release|debug   kernel variant (default release)
set -euo pipefail
. "$(dirname "$0")/common.sh"

scripts=$KERNEL_DIR/scripts
variant=${MSHARE_DEMO_KERNEL:-release}
kdir=$("$scripts/build.sh" "$variant")
initrd=$MSHARE_CACHE/demo-initramfs.cpio.gz
list_initramfs demo mshare/msharefs_pgtable "$initrd"

mkdir -p "$MSHARE_CACHE/logs"
logf=$MSHARE_CACHE/logs/demo-$(date +%Y%m%d-%H%M%S).log
log "booting the $variant kernel; the guest runs under TCG emulation, so times are not native"
"$scripts/run-qemu.sh" --kernel "$kdir" --tests demo --initrd "$initrd" --log "$logf" >/dev/null ||
	die "the demo run failed; see $logf"

field() { sed -n "s/.*# $1-numbers: .*$2=\([0-9.]*\).*/\1/p" "$logf" | tail -n1; }
ms_n=$(field mshare sharers)
ms_pt=$(field mshare pagetables_kib)
ms_flt=$(field mshare minflt_max)
fd_n=$(field memfd procs)
fd_pt=$(field memfd pagetables_kib)
fd_per=$(field memfd pagetables_kib_per_proc)
fd_flt=$(field memfd minflt_max)
[ -n "$ms_pt" ] && [ -n "$fd_pt" ] || die "the guest printed no numbers; see $logf"

cat <<TABLE

Page tables for processes that each read every page of 1 GiB of shared memory
(kernel $(basename "$kdir"), QEMU TCG guest; log: $logf)

| backing                 | processes | PageTables added | per process | page faults per process |
|-------------------------|-----------|------------------|-------------|-------------------------|
| mshare region           | $(printf '%9s' "$ms_n") | $(printf '%12s KiB' "$ms_pt") | $(printf '%7s KiB' "$((ms_pt / ms_n))") | $(printf '%23s' "$ms_flt") |
| memfd MAP_SHARED        | $(printf '%9s' "$fd_n") | $(printf '%12s KiB' "$fd_pt") | $(printf '%7s KiB' "$fd_per") | $(printf '%23s' "$fd_flt (MAP_POPULATE)") |

With plain shared memory every process pays about 2 MiB of page tables per
GiB it maps; through an mshare region it pays nothing, and touching the whole
GiB costs it a single page fault, which links the region's page tables.
TABLE
