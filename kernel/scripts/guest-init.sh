#!/bin/sh
# /init of the test initramfs (busybox sh, PID 1 inside QEMU).
#
# Kernel command line:
#   mshare.tests=NAME     run the entries of /tests/NAME.list (default: all)
#   mshare.timeout=SECS   per-entry timeout (default 300)
# A list has one entry per line, `path/of/binary [args]` relative to /tests,
# `#` starts a comment; the prefix `plain: ` marks an entry that prints no
# TAP and passes by exit status 0 alone (run_list, run-list.sh).
#
# Prints `MSHARE-RESULT: passed=N failed=M skipped=K` once, then leaves QEMU
# through isa-debug-exit (iobase 0xf4): byte 0 (QEMU status 1) if nothing
# failed and something passed, byte 1 (QEMU status 3) otherwise. If this
# script dies, the kernel panics and QEMU exits 0 with no result line.
# shellcheck shell=sh

export PATH=/bin:/sbin:/usr/bin:/usr/sbin
export HOME=/root TERM=dumb

# The initramfs carries no device nodes: get them from devtmpfs, then
# (re)open the console, which the kernel could not open for us.
mkdir -p /dev
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1

say() {
	read -r up _ </proc/uptime 2>/dev/null || up='?'
	echo "mshare-init: [$up] $*"
}

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

# The counters, fail() and run_list.
# shellcheck source-path=SCRIPTDIR source=run-list.sh
. /lib/mshare/run-list.sh

if grep -q msharefs /proc/filesystems; then
	[ -d /sys/fs/mshare ] || say "msharefs registered but /sys/fs/mshare is missing"
	if mount -t msharefs msharefs /sys/fs/mshare; then
		say "msharefs mounted on /sys/fs/mshare"
	else
		fail mount-msharefs "mount -t msharefs failed"
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

# Send the QEMU exit byte; falls back to a power-off (QEMU status 0, which
# the host judges a failure) if /dev/port is unusable.
qemu_exit() {
	if [ -c /dev/port ]; then
		if [ "$1" = 0 ]; then printf '\000'; else printf '\001'; fi |
			dd of=/dev/port bs=1 seek=244 count=1 conv=notrunc 2>/dev/null
	fi
	sleep 2
	# QEMU runs with -no-reboot and exits on a reboot, which needs no
	# ACPI (the host sees no result line: a failure).
	say "isa-debug-exit did not stop QEMU; rebooting"
	reboot -f
}

say "running /tests/$tests.list (timeout ${tmo}s per entry)"
run_list "$tests" "/tests/$tests.list" "$tmo" /tmp

leaks=/sys/kernel/debug/kmemleak
if [ -e $leaks ]; then
	say "kmemleak scan"
	sleep 6
	echo scan >$leaks
	sleep 6
	echo scan >$leaks
	report=$(cat $leaks 2>/dev/null)
	if [ -n "$report" ]; then
		echo "$report"
		fail kmemleak "unreferenced objects"
	fi
fi

[ -z "$failures" ] || say "failed:$failures"
say "done"
echo "MSHARE-RESULT: passed=$passed failed=$failed skipped=$skipped"
sync
if [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]; then
	qemu_exit 0
else
	qemu_exit 1
fi
