#!/usr/bin/env bash
# image/build.sh [--force] [--print-key]
# Build the guest image (or reuse the cached one) and print its path:
#   $MSHARE_CACHE/images/<key>/rootfs.ext4
# A Debian 12 root filesystem made by mmdebstrap (Essential:yes set plus
# image/packages.list and the libraries our binaries link against), with
# image/rootfs/ copied over it, our userspace installed from
# `make install DESTDIR=`, units enabled offline, and turned into an ext4
# image by `mkfs.ext4 -d` (no loop mount). Needs root.
#   <key> = hash of image/packages.list, this script, image/rootfs/, the
#           guest test runner (kernel/scripts/guest-lib.sh, common/ktap.sh) and the
#           `make install DESTDIR=` tree (paths, modes, owners, contents), so
#           a changed binary or package list gives a new image and an
#           unchanged one reuses the cache. The two newest images are kept.
#   --force      rebuild even if the image is cached
#   --print-key  print the key and exit (runs `make install` into a stage)
#   --no-userspace  leave our userspace out (no `make install`): the base
#                image alone, e.g. while the userspace does not build
#                (also MSHARE_IMAGE_USERSPACE=0); a key of its own
# Downloaded .debs are kept in $MSHARE_CACHE/apt-archives for the next build.
# MSHARE_IMAGE_SUITE (default bookworm) picks the Debian release.
set -euo pipefail
IMAGE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$IMAGE_DIR/../kernel/scripts/common.sh"

force=0
print_key=0
userspace=${MSHARE_IMAGE_USERSPACE:-1}
while [ $# -gt 0 ]; do
	case $1 in
	--force) force=1 ;;
	--print-key) print_key=1 ;;
	--no-userspace) userspace=0 ;;
	-h | --help) sed -n '2,/^[^#]/{/^#/p}' "$0"; exit 0 ;;
	*) die "unknown option '$1' (see --help)" ;;
	esac
	shift
done

t0=$(date +%s)
suite=${MSHARE_IMAGE_SUITE:-bookworm}
images=$MSHARE_CACHE/images
debs=$MSHARE_CACHE/apt-archives
pkglist=$IMAGE_DIR/packages.list
runner=("$KERNEL_DIR/scripts/guest-lib.sh" "$REPO_DIR/common/ktap.sh")
[ "$(id -u)" = 0 ] || die "image/build.sh needs root (mmdebstrap --mode=root, device nodes and owners in the image)"

# Host tools, installed on first use (a fresh CI machine has none of them).
missing=()
command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
command -v mkfs.ext4 >/dev/null || missing+=(e2fsprogs)
command -v readelf >/dev/null || missing+=(binutils)
command -v flock >/dev/null || missing+=(util-linux)
if [ ${#missing[@]} -gt 0 ]; then
	log "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y --no-install-recommends "${missing[@]}" >&2 ||
		{ apt-get update >&2 && apt-get install -y --no-install-recommends "${missing[@]}" >&2; } ||
		die "cannot install ${missing[*]}"
fi

mkdir -p "$images" "$debs"
exec 9>"$images/.lock"
flock 9

work=$(mktemp -d "$images/.build.XXXXXX")
# mmdebstrap mounts /proc, /sys and /dev pieces inside the root while it
# works: never delete through a mount that an interrupted run left behind.
cleanup() {
	local m
	awk -v w="$work/" 'index($2, w) == 1 { print $2 }' /proc/self/mounts | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null || true; done
	rm -rf --one-file-system "$work"
}
trap cleanup EXIT

# Identity of a directory tree: paths, types, modes, link targets, file
# contents; owners too when $2 is "owners" (a `make install` tree).
tree_hash() {
	local fmt='%y %m %p -> %l\n'
	[ "${2:-}" = owners ] && fmt='%y %m %U:%G %p -> %l\n'
	(
		cd "$1"
		find . -mindepth 1 -printf "$fmt" | LC_ALL=C sort
		find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum
	) | sha256sum | cut -c1-16
}

# Our userspace, as a package would install it.
destdir=$work/destdir
mkdir -p "$destdir"
if [ "$userspace" = 1 ]; then
	log "make install DESTDIR=$destdir"
	make -s -C "$REPO_DIR" install DESTDIR="$destdir" >&2 || die "make install failed (--no-userspace builds the image without it)"
else
	log "leaving our userspace out (--no-userspace)"
fi

# Debian packages of the libraries our ELF files need (from the host, which
# runs the same release), so a new dependency needs no edit of the list.
libpkgs() {
	local f so path own
	find "$destdir" -type f -print0 | while IFS= read -r -d '' f; do
		readelf -h "$f" >/dev/null 2>&1 || continue
		readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
	done | LC_ALL=C sort -u | while read -r so; do
		# Our own libraries come with the install tree.
		[ -z "$(find "$destdir" -name "$so" -print -quit)" ] || continue
		# (awk reads to the end: an early exit would SIGPIPE ldconfig, and
		# pipefail would end the script)
		path=$(ldconfig -p | awk -v so="$so" '$1 == so && /x86-64/ && !p { print $NF; p = 1 }')
		[ -n "$path" ] || { log "warning: $so (needed by our binaries) not found on the host"; continue; }
		own=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$(readlink -f "$path")" 2>/dev/null ||
			dpkg -S "/usr$path" 2>/dev/null || true)
		[ -n "$own" ] || { log "warning: no Debian package owns $path ($so)"; continue; }
		echo "${own%%:*}"
	done | tr ', ' '\n\n' | sed '/^$/d; s/:.*//' | LC_ALL=C sort -u
}
mapfile -t listed < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$pkglist")
mapfile -t auto < <(libpkgs)
mapfile -t pkgs < <(printf '%s\n' "${listed[@]}" "${auto[@]}" | LC_ALL=C sort -u)

key=$(
	{
		echo "image-v1 $suite"
		sha256sum <"$pkglist"
		sha256sum <"$IMAGE_DIR/build.sh"
		cat "${runner[@]}" | sha256sum
		echo "overlay $(tree_hash "$IMAGE_DIR/rootfs")"
		echo "install $userspace $(tree_hash "$destdir" owners)"
		printf 'pkg %s\n' "${pkgs[@]}"
	} | sha256sum | cut -c1-16
)
if [ $print_key = 1 ]; then
	echo "$key"
	exit 0
fi
out=$images/$key
if [ $force = 0 ] && [ -f "$out/rootfs.ext4" ]; then
	touch "$out"
	log "image $key cached ($(($(date +%s) - t0)) s)"
	echo "$out/rootfs.ext4"
	exit 0
fi

[ ${#auto[@]} -eq 0 ] || log "packages for our binaries' libraries: ${auto[*]}"
rootfs=$work/rootfs
log "mmdebstrap $suite: ${#pkgs[@]} packages on top of the Essential set (log: $out.mmdebstrap.log)"
t1=$(date +%s)
ndebs_before=$(find "$debs" -maxdepth 1 -name '*.deb' | wc -l)
# Mirrors: mmdebstrap's defaults for a stable release (main, updates,
# security). The .deb cache is linked in before the download and kept
# (--skip=essential/unlink, cleanup/apt/cache); documentation, man pages and
# translations of Debian's packages are left out; dpkg does not fsync
# (the tree is copied into the image afterwards anyway).
mmdebstrap --mode=root --variant=essential --format=directory \
	--include="$(IFS=,; echo "${pkgs[*]}")" \
	--aptopt='Acquire::Retries "3"' \
	--dpkgopt='force-unsafe-io' \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-exclude=/usr/share/info/*' \
	--skip=essential/unlink --skip=cleanup/apt/cache \
	--setup-hook="mkdir -p \"\$1/var/cache/apt/archives\" && find '$debs' -maxdepth 1 -name '*.deb' -exec cp -l -t \"\$1/var/cache/apt/archives/\" {} + 2>/dev/null || find '$debs' -maxdepth 1 -name '*.deb' -exec cp -t \"\$1/var/cache/apt/archives/\" {} +" \
	"$suite" "$rootfs" </dev/null >"$out.mmdebstrap.log" 2>&1 ||
	{ tail -n 30 "$out.mmdebstrap.log" >&2; die "mmdebstrap failed (log: $out.mmdebstrap.log)"; }
log "mmdebstrap took $(($(date +%s) - t1)) s"

# Keep the packages for the next build; drop versions no longer installed.
find "$rootfs/var/cache/apt/archives" -maxdepth 1 -name '*.deb' -exec cp -l -f -t "$debs/" {} + 2>/dev/null ||
	find "$rootfs/var/cache/apt/archives" -maxdepth 1 -name '*.deb' -exec cp -f -t "$debs/" {} +
dpkg-query --admindir="$rootfs/var/lib/dpkg" -W -f '${Package}_${Version}_${Architecture}.deb\n' |
	sed 's/:/%3a/g' | LC_ALL=C sort >"$work/installed-debs"
find "$debs" -maxdepth 1 -name '*.deb' -printf '%f\n' | LC_ALL=C sort |
	comm -23 - "$work/installed-debs" | while read -r f; do rm -f "$debs/$f"; done
find "$rootfs/var/cache/apt/archives" -maxdepth 1 -name '*.deb' -delete
ndebs=$(find "$debs" -maxdepth 1 -name '*.deb' | wc -l)
log ".deb cache $debs: $ndebs packages ($((ndebs - ndebs_before > 0 ? ndebs - ndebs_before : 0)) new), $(du -sh "$debs" | cut -f1)"

# The image's own configuration (fstab, journald, test runner, ...): files
# owned by root, existing directories (and /lib -> usr/lib links) kept.
tar -C "$IMAGE_DIR/rootfs" --owner=0 --group=0 -cf - . |
	tar -C "$rootfs" --no-overwrite-dir --keep-directory-symlink -xf -
# The guest test runner, shared with the initramfs's /init.
install -m 0644 "${runner[@]}" "$rootfs/usr/lib/mshare-image/"
# Our userspace, exactly the tree hashed into the key; the dynamic loader's
# cache must know our libraries (the multiarch directory is found through it).
tar -C "$destdir" -cf - . | tar -C "$rootfs" --no-overwrite-dir --keep-directory-symlink -xf -
chroot "$rootfs" /sbin/ldconfig

# A fixed machine id: no first-boot logic (systemd-firstboot would prompt
# on the console); every boot of one image is the same machine.
printf '%s\n' "$(printf 'mshare-image %s' "$key" | sha256sum | cut -c1-32)" >"$rootfs/etc/machine-id"
# Root logs in on the serial console without a password (a test guest with
# no network).
sed -i 's/^root:[^:]*:/root::/' "$rootfs/etc/shadow"

mkdir -p "$rootfs/usr/lib/mshare-tests" "$rootfs/mnt/scratch"

# Units: the image's own, then the ones our install put in place. Of ours,
# everything with an [Install] section is enabled, except a service that
# has a socket of the same name (socket activation starts it) and templates.
# (mshare-guest-tests.service is pulled in by its generator, only when the
# kernel command line asks for tests.)
enable=(sys-fs-mshare.mount)
for d in usr/lib/systemd/system lib/systemd/system; do
	[ -d "$destdir/$d" ] || continue
	for u in "$destdir/$d"/*; do
		[ -f "$u" ] || continue
		name=${u##*/}
		case $name in
		*@.*) continue ;;
		*.service) [ ! -e "${u%.service}.socket" ] || continue ;;
		*.socket | *.timer | *.path | *.mount | *.target) ;;
		*) continue ;;
		esac
		grep -q '^\[Install\]' "$u" && enable+=("$name")
	done
done
log "enabling ${enable[*]}"
systemctl --root="$rootfs" enable "${enable[@]}" >&2
# What Debian enables and a test guest does not want running on its own:
# podman's API service and socket and its restart/auto-update units (Go
# programs that take a minute at boot under TCG; tests start them when they
# need them), periodic jobs, and a getty on the VGA console nobody sees.
disable=(podman.service podman.socket podman-restart.service podman-auto-update.service
	podman-auto-update.timer fstrim.timer dpkg-db-backup.timer getty@tty1.service
	postgresql.service)
for u in "${disable[@]}"; do
	if systemctl --root="$rootfs" is-enabled -q "$u" 2>/dev/null; then
		systemctl --root="$rootfs" disable "$u" >&2
	fi
done
# Our kernel has no modules (CONFIG_MODULES=n): nothing to load, so no
# modprobe@*.service instances and no systemd-modules-load.service.
systemctl --root="$rootfs" mask modprobe@.service systemd-modules-load.service >&2

# The ext4 image, sized from the tree plus headroom for what tests write
# (the file is sparse: free space costs no disk on the host).
used=$(du -sm "$rootfs" | cut -f1)
size=$((used * 12 / 10 + 1024))
mkdir -p "$work/image"
log "mkfs.ext4 -d: ${used} MiB of files, image ${size} MiB"
mkfs.ext4 -q -F -L mshare-root -m 0 -U "$(printf '%s' "$key" | sha256sum | sed -E 's/^(.{8})(.{4})(.{4})(.{4})(.{12}).*/\1-\2-\3-\4-\5/')" \
	-d "$rootfs" "$work/image/rootfs.ext4" "${size}M" >&2
dpkg-query --admindir="$rootfs/var/lib/dpkg" -W -f '${Package} ${Version}\n' >"$work/image/packages.txt"
(cd "$destdir" && find . -mindepth 1 -printf '%y %m %U:%G %p\n' | LC_ALL=C sort) >"$work/image/install-tree.txt"
t2=$(date +%s)
rm -rf --one-file-system "$rootfs" "$destdir"
log "removed the build tree in $(($(date +%s) - t2)) s"
secs=$(($(date +%s) - t0))
echo "$secs" >"$work/image/build-seconds"
rm -rf "$out"
mv "$work/image" "$out"
mv "$out.mmdebstrap.log" "$out/mmdebstrap.log"

# Keep the two newest images.
find "$images" -mindepth 1 -maxdepth 1 -type d -regex '.*/[0-9a-f]+' -printf '%T@ %p\n' |
	sort -rn | tail -n +3 | cut -d' ' -f2- | xargs -r rm -rf
log "built image $key in $secs s: $out/rootfs.ext4 ($(du -h "$out/rootfs.ext4" | cut -f1) on disk, ${size} MiB)"
echo "$out/rootfs.ext4"
