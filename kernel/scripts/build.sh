#!/usr/bin/env bash
# Build a kernel variant (debug, release, baseline, check) and print the directory
# holding its bzImage; with --config-only, configure it and check that every
# option of its fragments took, and build nothing. Results are cached under a key of tarball + series +
# config fragments; a hit costs nothing, a changed patch always rebuilds.
set -euo pipefail
. "$(dirname "$0")/common.sh"

config_only=0
[ "${1:-}" != --config-only ] || { config_only=1 && shift; }
variant=${1:-debug}
[ "$variant" = baseline ] && export MSHARE_SERIES=none
key=$(build_key "$variant")
out=$MSHARE_CACHE/kernels/$variant-$key
if [ $config_only = 0 ] && [ -f "$out/bzImage" ]; then
	log "kernel $variant-$key cached"
	echo "$out"
	exit 0
fi

tree=$("$KERNEL_DIR/scripts/prepare-tree.sh")
obj=$MSHARE_CACHE/obj/$variant
mkdir -p "$obj" "$CCACHE_DIR"
cc="gcc"
command -v ccache >/dev/null && cc="ccache gcc"
jobs=${JOBS:-$(nproc)}
mk() { make -C "$tree" O="$obj" CC="$cc" HOSTCC="$cc" -j"$jobs" "$@"; }

log "configuring $variant kernel"
# shellcheck disable=SC2046
mk -s "$(variant_base "$variant")" >/dev/null
# shellcheck disable=SC2046
KCONFIG_CONFIG=$obj/.config "$tree/scripts/kconfig/merge_config.sh" -m -O "$obj" \
	"$obj/.config" $(variant_fragments "$variant") >"$obj/merge.log" 2>&1
mk -s olddefconfig >/dev/null
# Every option the fragments ask for must have survived olddefconfig. A
# later fragment overrides an earlier one (release.config turns off some of
# what base.config turns on), so only the last assignment of a symbol counts.
bad=0
while IFS=$'\t' read -r line frag; do
	case $line in CONFIG_*=n) opt=${line%%=*}; grep -q "^$opt=" "$obj/.config" && { log "$frag: $opt is not off"; bad=1; } ;;
	CONFIG_*) grep -qxF "$line" "$obj/.config" && continue
		# check builds every prefix of the series: a symbol a
		# later patch adds does not exist yet.
		if [ "$variant" = check ] && ! kconfig_defines "$tree" "${line%%=*}"; then
			log "$frag: ${line%%=*} is not defined by this tree; skipped"
			continue
		fi
		log "$frag: '$line' did not take"; bad=1 ;; esac
done < <(fragment_assignments "$variant")
[ $bad = 0 ] || die "config fragments do not apply cleanly (see above)"
if [ $config_only = 1 ]; then
	log "the $variant configuration takes every option of its fragments: $obj/.config"
	exit 0
fi

log "building $variant kernel ($jobs jobs) in $obj"
start=$(date +%s)
cpu_before=0 cpu_after=0
child_cpu_seconds cpu_before
mk bzImage >"$obj/build.log" 2>&1 || { tail -40 "$obj/build.log" >&2; die "kernel build failed"; }
# The CPU time is what a shared machine does not distort: CPU seconds over
# the job count is the wall time this build takes on idle cores.
child_cpu_seconds cpu_after
cpu=$((cpu_after - cpu_before))
log "built $variant kernel in $(($(date +%s) - start)) s (CPU $cpu s, $((cpu / jobs)) s on $jobs idle cores)"

mkdir -p "$out.tmp"
cp "$obj/arch/x86/boot/bzImage" "$obj/.config" "$obj/System.map" "$out.tmp/"
cp "$obj/vmlinux" "$out.tmp/" 2>/dev/null || true
echo "$(($(date +%s) - start))" >"$out.tmp/build-seconds"
echo "$cpu" >"$out.tmp/build-cpu-seconds"
rm -rf "$out" && mv "$out.tmp" "$out"
# Keep the three newest kernels of each variant.
find "$MSHARE_CACHE/kernels" -mindepth 1 -maxdepth 1 -name "$variant-*" -printf '%T@ %p\n' |
	sort -rn | tail -n +4 | cut -d' ' -f2- | xargs -r rm -rf
echo "$out"
