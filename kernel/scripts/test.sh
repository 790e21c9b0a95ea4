#!/usr/bin/env bash
# The whole kernel test run (`make test`): debug kernel, UAPI headers,
# in-guest selftests, initramfs, QEMU boot, judgement of the serial log
# (common/build/ktap-judge). The last line printed is `N passed, N failed`;
# exit status 0 only if nothing failed and the log is clean.
#   MSHARE_TESTS=NAME       list to run (default all)
#   MSHARE_TEST_TIMEOUT=S   per-test timeout in the guest (default 300)
#   MSHARE_QEMU_TIMEOUT=S   whole boot (default 2400)
#   MSHARE_QEMU_MEM, MSHARE_QEMU_SMP   (default 4G, 2)
set -euo pipefail
. "$(dirname "$0")/common.sh"

scripts=$KERNEL_DIR/scripts
finished=0
# Whatever stops the run early (a build error, a missing file) is a failure
# and still ends on the summary line.
trap '[ $finished = 1 ] || { log "test run aborted"; echo "0 passed, 1 failed"; }' EXIT

judge=$(ktap_judge)
kdir=$("$scripts/build.sh" debug)
hdr=$("$scripts/headers.sh")
tree=$("$scripts/prepare-tree.sh")

obj=$MSHARE_CACHE/selftests-build
log "building selftests into $obj"
make -C "$KERNEL_DIR/selftests" HEADERS="$hdr" KSRC="$tree" O="$obj" -j"${JOBS:-$(nproc)}" >&2
# The tree's own mm selftests that must keep passing (the regression list),
# run after the msharefs suites in the same boot.
HEADERS="$hdr" "$KERNEL_DIR/selftests/mm-regress/build.sh" "$tree" "$obj" >&2
# libmshare's end-to-end test of its wrappers, static, runs after the
# kernel's own msharefs suites.
make -C "$KERNEL_DIR/../libmshare" HEADERS="$hdr" guest-test >&2
mkdir -p "$obj/libmshare"
cp "$KERNEL_DIR/../libmshare/tests/guest_libmshare" "$obj/libmshare/"
echo libmshare/guest_libmshare >"$obj/libmshare.list"
# The flush-cost benchmark's short version: every operation it times works
# with sharers attached (make bench runs it up to 1024 sharers).
echo "bench/mshare_flush --sharers 1,16 --reps 3" >"$obj/bench-short.list"
# TLB coherence for minutes (make soak-tlb): the coherence fixture of
# mshare_tlb, which make test runs for 10 s a variant.
echo "env MSHARE_TLB_SECONDS=${MSHARE_TLB_SECONDS:-300} mshare/mshare_tlb -f coherence" >"$obj/tlb-soak.list"
cat "$obj/mshare.list" "$obj/libmshare.list" "$obj/bench-short.list" "$obj/mm-regress.list" >"$obj/all.list"
[ -f "$obj/${MSHARE_TESTS:-all}.list" ] || die "selftests build left no $obj/${MSHARE_TESTS:-all}.list"

initrd=$MSHARE_CACHE/initramfs.cpio.gz
"$scripts/mkinitramfs.sh" "$initrd" "$obj" >/dev/null

logf=$MSHARE_CACHE/logs/test-$(date +%Y%m%d-%H%M%S).log
args=(--kernel "$kdir" --initrd "$initrd" --tests "${MSHARE_TESTS:-all}" --log "$logf"
	--timeout "${MSHARE_QEMU_TIMEOUT:-2400}" --mem "${MSHARE_QEMU_MEM:-4G}"
	--smp "${MSHARE_QEMU_SMP:-2}")
[ -z "${MSHARE_TEST_TIMEOUT:-}" ] || args+=(--test-timeout "$MSHARE_TEST_TIMEOUT")
"$scripts/run-qemu.sh" "${args[@]}" --no-check

# The judge's last line is the summary, a crash or a timeout counted in it.
finished=1
exec "$judge" "$logf"
