#!/bin/sh
# msharefs is in the kernel and mounted on /sys/fs/mshare by sys-fs-mshare.mount.
. "$(dirname "$0")/tap.sh"
ktap_plan "4"
check "msharefs is a registered filesystem" grep -qw msharefs /proc/filesystems
check "/sys/fs/mshare exists" test -d /sys/fs/mshare
check "msharefs is mounted on /sys/fs/mshare" findmnt -n -t msharefs /sys/fs/mshare
check "sys-fs-mshare.mount is active" systemctl is-active sys-fs-mshare.mount
