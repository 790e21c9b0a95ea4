#!/usr/bin/env bash
# run-qemu.sh [--kernel DIR] [--initrd FILE] [--tests NAME] [--mem 4G]
#             [--smp 2] [--timeout SEC] [--test-timeout SEC] [--log FILE]
#             [--append ARGS] [--acpi-irq] [--no-check]
#             [--disk FILE [--extra-disk FILE]...] [--no-initrd]
# Boot a kernel under QEMU TCG with the test initramfs, run the list
# /tests/NAME.list in the guest, tee the serial console into the log and
# judge it with common/build/ktap-judge, whose last line is
# `N passed, N failed` (exit status 0 only on PASS).
#   --no-check     leave the judging to the caller
#   --kernel DIR   directory with bzImage (default: build.sh debug, cached)
#   --initrd FILE  initramfs from mkinitramfs.sh (default $MSHARE_CACHE/initramfs.cpio.gz)
#   --log FILE     default $MSHARE_CACHE/logs/<timestamp>.log
#   --disk FILE    boot this root disk image (raw or qcow2; first virtio disk,
#                  root=/dev/vda rw) instead of the initramfs: the image's
#                  own init runs mshare.tests=NAME (image/README.md). It is
#                  written to: pass a qcow2 overlay (image/run-tests.sh does).
#                  No initramfs unless --initrd is given too.
#   --extra-disk FILE  another virtio disk after the scratch disk (repeatable)
#   --no-initrd    boot without an initramfs
#   --acpi-irq     leave out acpi=noirq (added by default: under TCG the
#                  debug kernel can spend 30 s per virtio PCI device in an
#                  ACPI _PRT loop timeout at boot; without ACPI IRQ routing
#                  it uses the PIIX router, which needs no AML)
# Every boot gets a fresh 512M ext4 scratch disk (label mshare-scratch).
# MSHARE_KVM=1 tries KVM after a probe boot; TCG is the default and the
# fallback (nested KVM is known to hang on some hosts).
set -euo pipefail
. "$(dirname "$0")/common.sh"

kdir=
initrd=$MSHARE_CACHE/initramfs.cpio.gz
tests=all
mem=4G
smp=2
tmo=1200
test_tmo=
logf=
append=
acpi_irq=0
check=1
disk=
extra_disks=()
initrd_set=0
no_initrd=0
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kdir=$2; shift ;;
	--initrd) initrd=$2; initrd_set=1; shift ;;
	--disk) disk=$2; shift ;;
	--extra-disk) extra_disks+=("$2"); shift ;;
	--no-initrd) no_initrd=1 ;;
	--tests) tests=$2; shift ;;
	--mem) mem=$2; shift ;;
	--smp) smp=$2; shift ;;
	--timeout) tmo=$2; shift ;;
	--test-timeout) test_tmo=$2; shift ;;
	--log) logf=$2; shift ;;
	--append) append=$2; shift ;;
	--acpi-irq) acpi_irq=1 ;;
	--no-check) check=0 ;;
	-h | --help) sed -n '2,/^[^#]/{/^#/p}' "$0"; exit 0 ;;
	*) die "unknown option '$1' (see --help)" ;;
	esac
	[ $# -gt 0 ] && shift
done

[ -n "$kdir" ] || kdir=$("$KERNEL_DIR/scripts/build.sh" debug)
kernel=$kdir/bzImage
[ -f "$kernel" ] || die "no bzImage in $kdir"
# A root disk replaces the initramfs unless one is asked for explicitly.
[ -z "$disk" ] || [ $initrd_set = 1 ] || no_initrd=1
initrd_args=()
if [ $no_initrd = 0 ]; then
	[ -f "$initrd" ] || die "initramfs $initrd missing (mkinitramfs.sh)"
	initrd_args=(-initrd "$initrd")
fi
# Root disk first (/dev/vda), then the scratch disk, then the extra disks.
# qcow2 files start with "QFI\xfb"; anything else is taken as raw.
disk_args=()
drive() {
	[ -f "$1" ] || die "disk image $1 missing"
	local fmt=raw
	[ "$(head -c 3 "$1" | tr -d '\0')" != QFI ] || fmt=qcow2
	disk_args+=(-drive "file=$1,if=virtio,format=$fmt,cache=unsafe")
}
[ -z "$disk" ] || drive "$disk"
if [ -z "$logf" ]; then
	logf=$MSHARE_CACHE/logs/$(date +%Y%m%d-%H%M%S).log
fi
mkdir -p "$(dirname "$logf")"
qemu=${QEMU:-qemu-system-x86_64}
command -v "$qemu" >/dev/null || die "$qemu missing (apt-get install qemu-system-x86)"
[ $check = 0 ] || judge=$(ktap_judge)

cmdline="console=ttyS0 panic=-1 oops=panic panic_on_warn=0 softlockup_panic=0 mshare.tests=$tests"
[ -z "$test_tmo" ] || cmdline+=" mshare.timeout=$test_tmo"
[ -z "$disk" ] || cmdline+=" root=/dev/vda rw rootfstype=ext4"
[ $acpi_irq = 1 ] || cmdline+=" acpi=noirq"
[ -z "$append" ] || cmdline+=" $append"

# Boot the kernel under KVM with an init that exits at once; KVM is usable
# if the guest gets as far as printing its banner within 60 s.
probe_kvm() {
	[ -w /dev/kvm ] || { log "KVM probe: /dev/kvm missing or not writable"; return 1; }
	local out rc=0
	out=$(timeout -k 5 60 "$qemu" -accel kvm -cpu host -m 512M -smp 1 -nographic -no-reboot \
		-nic none -kernel "$kernel" "${initrd_args[@]}" \
		-append "console=ttyS0 panic=-1 rdinit=/bin/true" </dev/null 2>&1) || rc=$?
	if grep -q 'Linux version' <<<"$out"; then
		log "KVM probe: guest booted (status $rc)"
		return 0
	fi
	log "KVM probe: no kernel banner within 60 s (status $rc)"
	return 1
}

# shellcheck disable=SC2054 # commas belong to the option values
accel=(-accel tcg,thread=multi -cpu max)
if [ "${MSHARE_KVM:-0}" = 1 ]; then
	if probe_kvm; then
		accel=(-accel kvm -cpu host)
	else
		log "KVM unusable here; using TCG"
	fi
fi

# A scratch ext4 disk for the tests that need a real block filesystem
# (O_DIRECT into windows, files on disk mapped into regions).
command -v mkfs.ext4 >/dev/null || die "mkfs.ext4 missing (apt-get install e2fsprogs)"
scratch=$(mktemp "${TMPDIR:-/tmp}/mshare-scratch.XXXXXX")
trap 'rm -f "$scratch"' EXIT
truncate -s 512M "$scratch"
mkfs.ext4 -q -F -L mshare-scratch "$scratch"
drive "$scratch"
for d in "${extra_disks[@]}"; do drive "$d"; done

log "booting $kernel${disk:+ with root disk $disk} (${accel[1]}, $smp CPUs, $mem, tests=$tests, timeout ${tmo}s); log: $logf"
start=$(date +%s)
rc=0
# -nic none: no default NIC, so no option ROM is needed either.
timeout -k 10 "$tmo" "$qemu" "${accel[@]}" -m "$mem" -smp "$smp" -nographic -no-reboot \
	-nic none -kernel "$kernel" "${initrd_args[@]}" -append "$cmdline" \
	"${disk_args[@]}" \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04 </dev/null 2>&1 |
	tee "$logf" || rc=${PIPESTATUS[0]}
secs=$(($(date +%s) - start))
[ "$rc" != 124 ] || log "QEMU timed out after ${tmo}s"
echo "MSHARE-HOST: qemu-exit=$rc seconds=$secs" | tee -a "$logf"
log "QEMU exited with status $rc after ${secs}s"

[ $check = 1 ] || exit 0
"$judge" "$logf"
