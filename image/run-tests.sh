#!/usr/bin/env bash
# image/run-tests.sh [--tests NAME[,NAME...]] [--extra-dir DIR]... [--kernel DIR]
#                    [--build-kernel] [--image FILE] [--log FILE] [--timeout SEC]
#                    [--test-timeout SEC] [--mem 4G] [--smp 2] [--append ARGS]
#                    [--acpi-irq] [--no-check]
# Boot the guest image (image/build.sh, built or reused) on our kernel under
# QEMU TCG and run /usr/lib/mshare-tests/NAME.list in it under systemd
# (mshare-guest-tests.service); run-qemu.sh judges the serial log
# (common/build/ktap-judge). Exit status 0 only on PASS; the last line is
# the judge's "N passed, N failed" (none with --no-check).
#   --tests NAMES     lists to run, comma-separated (default smoke): smoke
#                     (the image itself), owner (mshare-owner under systemd;
#                     its tools, `make -C mshare-helper install-tests`, are
#                     built and put on the tests disk in owner/mshare-helper/),
#                     hook (mshare-oci-hook with crun and podman; its tools,
#                     `make -C crun-hook install-tests`, go to hook/crun-hook/),
#                     postgres (PostgreSQL under libmshare-preload.so; its
#                     tool, `make -C preload install-tests`, goes to
#                     postgres/mshare-preload/), preload (that tool alone),
#                     hook-cost (what the hook adds to a container start; a
#                     measurement, not part of make test)
#   --extra-dir DIR   copied onto the tests disk after image/tests/ (repeatable;
#                     later files win): test lists and programs
#   --acpi-irq        leave out acpi=noirq (run-qemu.sh adds it by default:
#                     under TCG each virtio PCI device can cost 30 s in an ACPI
#                     _PRT loop timeout at boot; without ACPI IRQ routing the
#                     kernel uses the PIIX router, 20 s instead of 100 s of
#                     kernel boot here)
#   --kernel DIR      directory with bzImage; default $MSHARE_KERNEL, else the
#                     cached debug kernel of the current series, else the
#                     newest cached debug kernel (with a warning)
#   --build-kernel    build (or reuse) the debug kernel with build.sh first
#   --image FILE      root image (default: the output of image/build.sh)
# The image is never written to: the guest boots a qcow2 overlay backed by
# it, thrown away afterwards. The tests reach the guest on a second small
# ext4 disk (label mshare-tests, made by mkfs.ext4 -d, no loop mount) that
# the image mounts on /usr/lib/mshare-tests; run-qemu.sh adds the scratch
# disk (label mshare-scratch, mounted on /mnt/scratch).
set -euo pipefail
IMAGE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$IMAGE_DIR/../kernel/scripts/common.sh"

tests=smoke
extra=()
kdir=${MSHARE_KERNEL:-}
build_kernel=0
image=
qargs=()
tmo=900
append=
while [ $# -gt 0 ]; do
	case $1 in
	--tests) tests=$2; shift ;;
	--extra-dir) extra+=("$2"); shift ;;
	--kernel) kdir=$2; shift ;;
	--build-kernel) build_kernel=1 ;;
	--image) image=$2; shift ;;
	--timeout) tmo=$2; shift ;;
	--append) append=$2; shift ;;
	--log | --test-timeout | --mem | --smp) qargs+=("$1" "$2"); shift ;;
	--acpi-irq | --no-check) qargs+=("$1") ;;
	-h | --help) sed -n '2,/^[^#]/{/^#/p}' "$0"; exit 0 ;;
	*) die "unknown option '$1' (see --help)" ;;
	esac
	shift
done
for d in "${extra[@]}"; do [ -d "$d" ] || die "--extra-dir $d is not a directory"; done
command -v qemu-img >/dev/null || die "qemu-img missing (apt-get install qemu-utils)"
command -v mkfs.ext4 >/dev/null || die "mkfs.ext4 missing (apt-get install e2fsprogs)"

# The kernel: the harness normally builds it (build.sh debug, keyed by the
# series); here a cached one is enough, so no kernel build starts by itself.
if [ -z "$kdir" ]; then
	if [ $build_kernel = 1 ]; then
		kdir=$("$KERNEL_DIR/scripts/build.sh" debug)
	else
		key=$(build_key debug 2>/dev/null) || key=none
		if [ -f "$MSHARE_CACHE/kernels/debug-$key/bzImage" ]; then
			kdir=$MSHARE_CACHE/kernels/debug-$key
		else
			kdir=$(find "$MSHARE_CACHE/kernels" -mindepth 2 -maxdepth 2 -path '*/debug-*/bzImage' ! -path '*.tmp/*' \
				-printf '%T@ %h\n' 2>/dev/null | sort -rn | sed -n 1p | cut -d' ' -f2-)
			[ -n "$kdir" ] || die "no debug kernel in $MSHARE_CACHE/kernels (kernel/scripts/build.sh debug, or --build-kernel)"
			log "warning: no debug kernel of the current series (debug-$key) cached; using the newest one, ${kdir##*/}"
		fi
	fi
fi
[ -f "$kdir/bzImage" ] || die "no bzImage in $kdir"

[ -n "$image" ] || image=$("$IMAGE_DIR/build.sh")
[ -f "$image" ] || die "image $image missing"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mshare-run.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The disk with the test lists and programs.
stage=$tmp/tests
mkdir -p "$stage"
for d in "$IMAGE_DIR/tests" "${extra[@]}"; do
	tar -C "$d" --exclude='*.o' --exclude='*.d' -cf - . | tar -C "$stage" -xf -
done
# The KTAP helper of the shell tests, next to their directories.
install -m 0644 "$REPO_DIR/common/ktap.sh" "$stage/ktap.sh"
# The tools of the owner and hook lists, when they run.
listed() { [[ ",$tests," == *",$1,"* ]]; }
if { listed owner || listed soak; } && [ -d "$stage/owner" ]; then
	make -s -C "$REPO_DIR/mshare-helper" install-tests DESTDIR="$stage" LIBEXECDIR=/owner >&2 ||
		die "cannot build the owner tests' tools (make -C mshare-helper install-tests)"
fi
if { listed hook || listed hook-cost || listed soak; } && [ -d "$stage/hook" ]; then
	make -s -C "$REPO_DIR/crun-hook" install-tests DESTDIR="$stage" LIBEXECDIR=/hook >&2 ||
		die "cannot build the hook tests' tools (make -C crun-hook install-tests)"
fi
if { listed postgres || listed preload; } && [ -d "$stage/postgres" ]; then
	make -s -C "$REPO_DIR/preload" install-tests DESTDIR="$stage" LIBEXECDIR=/postgres >&2 ||
		die "cannot build the PostgreSQL tests' tools (make -C preload install-tests)"
fi
for t in ${tests//,/ }; do
	[ -f "$stage/$t.list" ] || log "warning: no $t.list among the tests; the guest will report it"
done
mb=$(du -sm "$stage" | cut -f1)
mkfs.ext4 -q -F -L mshare-tests -d "$stage" "$tmp/tests.ext4" "$((mb * 12 / 10 + 32))M" >/dev/null

# Copy-on-write: the guest writes into the overlay, never into the image.
qemu-img create -q -f qcow2 -F raw -b "$image" "$tmp/root.qcow2"

[ -z "$append" ] || qargs+=(--append "$append")
log "image $image, kernel $kdir, tests $tests"
rc=0
"$KERNEL_DIR/scripts/run-qemu.sh" --kernel "$kdir" --disk "$tmp/root.qcow2" \
	--extra-disk "$tmp/tests.ext4" --tests "$tests" --timeout "$tmo" "${qargs[@]}" || rc=$?
exit "$rc"
