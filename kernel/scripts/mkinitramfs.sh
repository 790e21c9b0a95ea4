#!/usr/bin/env bash
# mkinitramfs.sh OUT.cpio.gz DIR...
# Build the test initramfs: busybox-static with its applet links, /init
# (guest-init.sh, with the guest runner guest-lib.sh and common/ktap.sh it
# sources) and the files
# of each DIR under /tests/, subdirectories kept (object and dependency
# files left out). Test binaries are static, so no libraries go in. No
# device nodes either: /init mounts devtmpfs, so neither root nor mknod is
# needed to build it.
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ $# -ge 1 ] || die "usage: $0 OUT.cpio.gz DIR..."
out=$1
shift
busybox=${BUSYBOX:-/bin/busybox}
[ -x "$busybox" ] || die "$busybox missing (apt-get install busybox-static)"
file -L "$busybox" 2>/dev/null | grep -q 'dynamically linked' &&
	die "$busybox is dynamically linked; install busybox-static"

stage=$(mktemp -d "${TMPDIR:-/tmp}/mshare-initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,root,etc,tests}
cp "$busybox" "$stage/bin/busybox"
"$busybox" --list-full | while read -r applet; do
	[ "$applet" = bin/busybox ] && continue
	[ -e "$stage/$applet" ] || ln -s /bin/busybox "$stage/$applet"
done
[ -e "$stage/bin/sh" ] || ln -s /bin/busybox "$stage/bin/sh"
install -m 0755 "$KERNEL_DIR/scripts/guest-init.sh" "$stage/init"
install -D -m 0644 "$KERNEL_DIR/scripts/guest-lib.sh" "$stage/lib/mshare/guest-lib.sh"
install -D -m 0644 "$REPO_DIR/common/ktap.sh" "$stage/lib/mshare/ktap.sh"
echo "root:x:0:0:root:/root:/bin/sh" >"$stage/etc/passwd"
echo "root:x:0:" >"$stage/etc/group"

for dir in "$@"; do
	[ -d "$dir" ] || die "$dir is not a directory"
	tar -C "$dir" --exclude='*.o' --exclude='*.d' -cf - . | tar -C "$stage/tests" -xf -
done

mkdir -p "$(dirname "$out")"
(
	cd "$stage"
	find . -mindepth 1 -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc --owner=0:0 --reproducible --quiet
) | gzip -6n >"$out.tmp"
mv "$out.tmp" "$out"
log "initramfs $out: $(du -h "$out" | cut -f1), $(find "$stage/tests" -type f | wc -l) files under /tests"
echo "$out"
