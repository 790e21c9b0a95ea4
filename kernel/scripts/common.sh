# Shared settings for the kernel scripts; sourced, not run.
# shellcheck shell=bash

KERNEL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO_DIR=$(cd "$KERNEL_DIR/.." && pwd)
MSHARE_CACHE=${MSHARE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mshare}
LINUX_TARBALL=${LINUX_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
export CCACHE_DIR=${CCACHE_DIR:-$MSHARE_CACHE/ccache}
export CCACHE_BASEDIR=$MSHARE_CACHE
export CCACHE_NOHASHDIR=1
# Depend mode: no preprocessor run per compile; the hash covers the headers
# the compiler's own dependency file (kbuild's -Wp,-MMD) names. A cold
# kernel build takes about a quarter less CPU than with ccache's default.
export CCACHE_DEPEND=${CCACHE_DEPEND:-1}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
export KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026'
export KBUILD_BUILD_USER=mshare
export KBUILD_BUILD_HOST=builder

log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Identity of the unpacked source: the tarball's content.
source_id() {
	[ -r "$LINUX_TARBALL" ] || die "$LINUX_TARBALL missing (apt-get install linux-source-6.12)"
	local stamp="$MSHARE_CACHE/tarball.sha"
	local meta
	meta=$(stat -c '%s %Y' "$LINUX_TARBALL")
	if [ -f "$stamp" ] && [ "$(sed -n 1p "$stamp")" = "$meta" ]; then
		sed -n 2p "$stamp"
		return
	fi
	mkdir -p "$MSHARE_CACHE"
	local sum
	sum=$(sha256sum "$LINUX_TARBALL" | cut -c1-16)
	printf '%s\n%s\n' "$meta" "$sum" >"$stamp"
	echo "$sum"
}

# The patches of the series, in order, as absolute paths.
series_patches() {
	local series=$KERNEL_DIR/patches/series
	[ "${MSHARE_SERIES:-full}" = none ] && return 0
	[ -f "$series" ] || return 0
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$series" |
		head -n "${MSHARE_SERIES_PREFIX:-1000000}" |
		while read -r p; do echo "$KERNEL_DIR/patches/$p"; done
}

# Config fragments of a variant, in merge order.
variant_fragments() {
	local c=$KERNEL_DIR/config
	case $1 in
	debug) echo "$c/base.config $c/mshare.config $c/debug.config" ;;
	release) echo "$c/base.config $c/mshare.config $c/release.config" ;;
	baseline) echo "$c/base.config $c/debug.config" ;;
	check) echo "$c/check.config" ;;
	*) die "unknown kernel variant '$1' (debug, release, baseline or check)" ;;
	esac
}

# The CONFIG_ assignments of a variant's fragments, the last one of each
# symbol only, in the order they first appear: "ASSIGNMENT<tab>FRAGMENT".
fragment_assignments() {
	local f
	for f in $(variant_fragments "$1"); do
		sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e "s|[[:space:]]*\$|\t${f##*/}|" "$f"
	done | awk -F'\t' '{ split($1, a, "="); s = a[1]; if (!(s in v)) k[n++] = s; v[s] = $0 }
		END { for (i = 0; i < n; i++) print v[k[i]] }'
}

series_hash() {
	local p
	{
		echo "series:${MSHARE_SERIES:-full}"
		for p in $(series_patches); do
			sha256sum <"$p"
		done
	} | sha256sum | cut -c1-16
}

# child_cpu_seconds VAR: sets VAR to the user plus system CPU seconds of
# this shell's waited-for children so far. `times` must run in this shell
# (a subshell has children of its own), hence the file.
child_cpu_seconds() {
	local f
	f=$(mktemp)
	times >"$f"
	printf -v "$1" '%s' "$(sed -n 2p "$f" | awk '{
		t = 0
		for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] }
		printf "%d", t
	}')"
	rm -f "$f"
}

# kconfig_defines TREE CONFIG_FOO: whether some Kconfig file of TREE
# defines the symbol.
kconfig_defines() {
	grep -rqE "^[[:space:]]*(menu)?config[[:space:]]+${2#CONFIG_}[[:space:]]*$" "$1" --include='Kconfig*'
}

# The configuration a variant's fragments go on top of.
variant_base() {
	case $1 in
	check) echo tinyconfig ;;
	*) echo x86_64_defconfig ;;
	esac
}

# Key of a built kernel: source, series and the assignments of the config
# fragments (comments and blank lines do not change the kernel, so editing
# them does not cost a rebuild).
build_key() {
	local variant=$1 f
	{
		echo "$variant"
		source_id
		[ "$variant" = baseline ] || series_hash
		for f in $(variant_fragments "$variant"); do
			sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$f" | sha256sum
		done
	} | sha256sum | cut -c1-16
}

# list_initramfs NAME ENTRY INITRD: build the in-guest selftests against the
# series' UAPI headers into $MSHARE_CACHE/selftests-build, write the list
# NAME.list holding ENTRY (a guest-lib.sh list entry), and pack them into the
# initramfs INITRD: what a one-entry guest run (the demo, a benchmark)
# boots.
list_initramfs() {
	local name=$1 entry=$2 initrd=$3 hdr tree obj=$MSHARE_CACHE/selftests-build
	hdr=$("$KERNEL_DIR/scripts/headers.sh")
	tree=$("$KERNEL_DIR/scripts/prepare-tree.sh")
	make -s -C "$KERNEL_DIR/selftests" HEADERS="$hdr" KSRC="$tree" O="$obj" \
		-j"${JOBS:-$(nproc)}" >&2
	echo "$entry" >"$obj/$name.list"
	"$KERNEL_DIR/scripts/mkinitramfs.sh" "$initrd" "$obj" >/dev/null
}

# ktap_judge: the path of the host's one reader of test results and serial
# logs (common/tools/ktap-judge.c), built first if it is not up to date.
ktap_judge() {
	make -s -C "$REPO_DIR/common" judge >&2 || die "cannot build the log judge (make -C common judge)"
	echo "$REPO_DIR/common/build/ktap-judge"
}
