#!/usr/bin/env bash
# Install the UAPI headers of the prepared tree (pristine + the series) into
# $MSHARE_CACHE/headers/<series_hash>/ and print the include directory.
# Userspace tests build with -I<that dir> and #include <linux/msharefs.h>.
# Cached per series: a second run with the same patches costs nothing.
set -euo pipefail
. "$(dirname "$0")/common.sh"

hash=$(series_hash)
out=$MSHARE_CACHE/headers/$hash
if [ -d "$out/include/linux" ]; then
	log "headers $hash cached"
	echo "$out/include"
	exit 0
fi

tree=$("$KERNEL_DIR/scripts/prepare-tree.sh")
# Out of tree, so the source stays clean for the O= kernel builds.
obj=$MSHARE_CACHE/obj/headers-$hash
log "installing UAPI headers of $tree into $out"
rm -rf "$out.tmp" "$obj"
mkdir -p "$obj" "$out.tmp"
make -C "$tree" O="$obj" ARCH=x86_64 INSTALL_HDR_PATH="$out.tmp" -s headers_install >&2 ||
	die "make headers_install failed"
[ -d "$out.tmp/include/linux" ] || die "headers_install left no include/linux in $out.tmp"
rm -rf "$out" "$obj"
mv "$out.tmp" "$out"
echo "$out/include"
