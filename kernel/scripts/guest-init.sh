#!/bin/sh
# /init of the test initramfs (busybox sh, PID 1 inside QEMU).
#
# Kernel command line:
#   mshare.tests=NAME     run the entries of /tests/NAME.list (default: all)
#   mshare.timeout=SECS   per-entry timeout (default 300)
# The run itself, the list's format, the KTAP document it prints and the
# exit through isa-debug-exit are guest-lib.sh's (/lib/mshare/guest-lib.sh,
# with ktap.sh). If this script dies, the kernel panics and QEMU exits 0,
# which the host never judges a pass.
# shellcheck shell=sh

export PATH=/bin:/sbin:/usr/bin:/usr/sbin
export HOME=/root TERM=dumb

# The initramfs carries no device nodes: get them from devtmpfs, then
# (re)open the console, which the kernel could not open for us.
mkdir -p /dev
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1

# say, guest_fail, guest_run and guest_exit.
GUEST_TAG=mshare-init
# shellcheck source-path=SCRIPTDIR source=../../common/ktap.sh
. /lib/mshare/ktap.sh
# shellcheck source-path=SCRIPTDIR source=guest-lib.sh
. /lib/mshare/guest-lib.sh

mkdir -p /proc /sys /tmp /root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t debugfs debugfs /sys/kernel/debug || say "no debugfs"
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t cgroup2 cgroup2 /sys/fs/cgroup || say "no cgroup2"
mkdir -p /dev/hugepages /dev/shm /dev/pts
mount -t hugetlbfs hugetlbfs /dev/hugepages || say "no hugetlbfs"
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t devpts devpts /dev/pts 2>/dev/null || true
# The host attaches a scratch ext4 disk: tests find it among the mounts.
if [ -b /dev/vda ]; then
	mkdir -p /mnt/scratch
	if mount -t ext4 /dev/vda /mnt/scratch; then
		chmod 1777 /mnt/scratch
	else
		say "cannot mount the scratch disk"
	fi
fi
echo 64 >/proc/sys/vm/nr_hugepages 2>/dev/null || say "cannot reserve hugetlb pages"
say "hugetlb pages: $(cat /proc/sys/vm/nr_hugepages 2>/dev/null)"

if grep -q msharefs /proc/filesystems; then
	[ -d /sys/fs/mshare ] || say "msharefs registered but /sys/fs/mshare is missing"
	if mount -t msharefs msharefs /sys/fs/mshare; then
		say "msharefs mounted on /sys/fs/mshare"
	else
		guest_fail mount-msharefs "mount -t msharefs failed"
	fi
else
	say "msharefs not in /proc/filesystems (kernel without the series?)"
fi

tests=all
tmo=300
read -r cmdline </proc/cmdline
for arg in $cmdline; do
	case $arg in
	mshare.tests=*) tests=${arg#mshare.tests=} ;;
	mshare.timeout=*) tmo=${arg#mshare.timeout=} ;;
	esac
done

guest_run "$tmo" /tmp "/tests/$tests.list"
guest_exit
