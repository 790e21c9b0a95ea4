#!/usr/bin/env bash
# check.sh HEADERS: the fallback copies in this directory are what the
# installed kernel headers HEADERS (make headers_install of our patched
# tree: the directory holding linux/ and asm/) say: linux/mshare.h and
# linux/msharefs.h byte for byte, and the __NR_mshare_* numbers of
# mshare_sysnum.h those of asm/unistd_64.h. Run by `make -C libmshare
# check` and by the selftests build whenever they are given HEADERS, so
# that a change to the kernel's uapi cannot leave the copies behind
# silently. Prints one line when everything matches; otherwise shows the
# differences and exits 1.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 HEADERS" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
hdr=$1
bad=0

for h in linux/mshare.h linux/msharefs.h; do
	if [ ! -f "$hdr/$h" ]; then
		echo "check.sh: $hdr has no $h" >&2
		bad=1
	elif ! diff -u "$hdr/$h" "$here/$h" >&2; then
		echo "check.sh: $here/$h differs from $hdr/$h; they must be identical (README.md)" >&2
		bad=1
	fi
done

# "NAME NUMBER" of every #define __NR_mshare_* of a file.
numbers() {
	sed -n 's/^[[:space:]]*#[[:space:]]*define[[:space:]]\{1,\}\(__NR_mshare_[a-z_]*\)[[:space:]]\{1,\}\([0-9]\{1,\}\)[[:space:]]*$/\1 \2/p' "$1" |
		LC_ALL=C sort
}
unistd=$hdr/asm/unistd_64.h
if [ ! -f "$unistd" ]; then
	echo "check.sh: $hdr has no asm/unistd_64.h" >&2
	bad=1
else
	kernel=$(numbers "$unistd")
	ours=$(numbers "$here/mshare_sysnum.h")
	if [ -z "$kernel" ]; then
		echo "check.sh: $unistd defines no __NR_mshare_*" >&2
		bad=1
	elif [ "$kernel" != "$ours" ]; then
		diff -u --label "$unistd" --label "$here/mshare_sysnum.h" \
			<(echo "$kernel") <(echo "$ours") >&2 || true
		echo "check.sh: the numbers of $here/mshare_sysnum.h differ from $unistd" >&2
		bad=1
	fi
fi

[ $bad = 0 ] || exit 1
echo "uapi fallback: linux/mshare.h, linux/msharefs.h and $(wc -l <<<"$kernel") system call numbers match $hdr"
