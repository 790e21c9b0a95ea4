#!/usr/bin/env bash
# build.sh KSRC OUT
# Build the mm-regress suite: the tools/testing/selftests/mm programs that
# mm-regress.list names, out of the tree KSRC, statically linked (the guest
# has no libc), into OUT/mm/, plus OUT/mm/wrap.sh and OUT/mm-regress.list.
# OUT/mm is replaced whole; nothing else in OUT is touched, and nothing is
# ever written into KSRC.
#
#   HEADERS=DIR   installed UAPI headers to build against (the directory
#                 holding linux/ and asm/, e.g. headers.sh output). Default:
#                 `make headers_install` of KSRC, done out of tree (O=) once
#                 and cached in $MSHARE_CACHE/mm-regress/ by the content of
#                 KSRC's uapi directories.
#   CC            compiler (default gcc)
#
# Each program is compiled the way tools/testing/selftests/mm/Makefile does
# (same CFLAGS and helper files), from a private copy of the selftest
# sources so that a stale generated local_config.h in KSRC cannot leak in;
# our local_config.h says "no liburing", so io_uring subtests are left out.
# Build dependency beyond libc6-dev: libcap-dev (static libcap.a, for
# memfd_secret and mlock-random-test). x86_64 only.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../../scripts/common.sh
. "$here/../../scripts/common.sh"

[ $# -eq 2 ] || die "usage: $0 KSRC OUT"
ksrc=$(cd "$1" && pwd) || die "KSRC $1 is not a directory"
mkdir -p "$2"
out=$(cd "$2" && pwd)
list=$here/mm-regress.list
mmsrc=$ksrc/tools/testing/selftests/mm
cc=${CC:-gcc}

[ -f "$mmsrc/vm_util.c" ] || die "$ksrc has no tools/testing/selftests/mm"
[ "$(uname -m)" = x86_64 ] || die "only x86_64 is supported (the list assumes x86 THP/hugetlb sizes)"
command -v "$cc" >/dev/null || die "$cc missing (apt-get install build-essential)"

# Programs named by the list: every mm/NAME word of an entry (entries run
# through wrap.sh name their program as an argument). wrap.sh is a script.
mapfile -t progs < <(sed -e 's/#.*//' -e 's/^[[:space:]]*plain:[[:space:]]*//' "$list" |
	tr -s '[:space:]' '\n' | sed -n 's|^mm/||p' | grep -vx 'wrap.sh' | LC_ALL=C sort -u)
[ ${#progs[@]} -gt 0 ] || die "no programs in $list"
for p in "${progs[@]}"; do
	[ -f "$mmsrc/$p.c" ] || die "$list names mm/$p, but $mmsrc/$p.c does not exist"
done

# Per-program extras, as the upstream Makefile has them.
prog_objs() { case $1 in uffd-unit-tests | uffd-stress) echo uffd-common.o ;; esac; }
prog_libs() { case $1 in memfd_secret | mlock-random-test) echo -lcap ;; esac; }
# khugepaged.c in 6.12 uses KSFT_SKIP without including kselftest.h.
prog_cflags() { case $1 in khugepaged) echo -DKSFT_SKIP=4 ;; esac; }

needs_cap=0
for p in "${progs[@]}"; do [ -z "$(prog_libs "$p")" ] || needs_cap=1; done
if [ $needs_cap = 1 ] && ! printf '#include <sys/capability.h>\n' | "$cc" -E -x c - >/dev/null 2>&1; then
	die "sys/capability.h missing: apt-get install libcap-dev"
fi

# --- UAPI headers ----------------------------------------------------------
uapi_id() {
	(cd "$ksrc" && find include/uapi arch/x86/include/uapi -type f -print0 |
		LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16
}
if [ -n "${HEADERS:-}" ]; then
	hdr=$(cd "$HEADERS" && pwd) || die "HEADERS=$HEADERS is not a directory"
else
	hdr_root=$MSHARE_CACHE/mm-regress/headers-$(uapi_id)
	hdr=$hdr_root/include
	if [ ! -d "$hdr/linux" ]; then
		log "installing UAPI headers of $ksrc into $hdr_root"
		obj=$hdr_root.obj
		rm -rf "$obj" "$hdr_root.tmp"
		mkdir -p "$obj"
		nice -n 10 make -C "$ksrc" O="$obj" ARCH=x86_64 INSTALL_HDR_PATH="$hdr_root.tmp" \
			-s -j1 headers_install >&2 || die "make headers_install failed"
		[ -d "$hdr_root.tmp/include/linux" ] || die "headers_install left no include/linux"
		rm -rf "$obj" "$hdr_root"
		mv "$hdr_root.tmp" "$hdr_root"
	fi
fi
if [ ! -f "$hdr/linux/userfaultfd.h" ] || [ ! -f "$hdr/asm/unistd_64.h" ]; then
	die "$hdr does not look like installed UAPI headers (no linux/userfaultfd.h or asm/unistd_64.h)"
fi

# --- up to date? -------------------------------------------------------------
# Everything that goes into OUT/mm: sources, list, scripts, flags, headers.
fingerprint() {
	{
		echo "cc=$cc $("$cc" --version | head -n1) hdr=$hdr"
		sha256sum "$here/build.sh" "$here/wrap.sh" "$list"
		(cd "$ksrc" && sha256sum tools/testing/selftests/kselftest.h \
			tools/testing/selftests/kselftest_harness.h mm/gup_test.h \
			tools/testing/selftests/mm/*.[ch])
		(cd "$hdr" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
	} | sha256sum | cut -c1-16
}
stamp=$out/mm/.fingerprint
fp=$(fingerprint)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$fp" ] && [ -f "$out/mm-regress.list" ]; then
	ok=1
	for p in "${progs[@]}"; do [ -x "$out/mm/$p" ] || ok=0; done
	if [ $ok = 1 ]; then
		log "mm-regress: ${#progs[@]} programs in $out/mm up to date"
		echo "$out"
		exit 0
	fi
fi

# --- build -----------------------------------------------------------------
build=$(mktemp -d "${TMPDIR:-/tmp}/mm-regress.XXXXXX")
trap 'rm -rf "$build"' EXIT
# A copy of the sources, laid out as in the tree: the programs include
# "../kselftest.h" and "../../../../mm/gup_test.h".
src=$build/src
mkdir -p "$src/tools/testing/selftests/mm" "$src/mm"
cp "$ksrc/tools/testing/selftests/kselftest.h" "$ksrc/tools/testing/selftests/kselftest_harness.h" \
	"$src/tools/testing/selftests/"
cp "$mmsrc"/*.[ch] "$src/tools/testing/selftests/mm/"
cp "$ksrc/mm/gup_test.h" "$src/mm/"
echo '// No liburing support found' >"$src/tools/testing/selftests/mm/local_config.h"

# CFLAGS of the mm Makefile and ../lib.mk (KHDR_INCLUDES, TOOLS_INCLUDES,
# -D_GNU_SOURCE=, -no-pie on x86_64), plus -static.
cflags=(-Wall -O2 -I "$src" -isystem "$hdr" -isystem "$ksrc/tools/include/uapi"
	-U_FORTIFY_SOURCE -D_GNU_SOURCE= -no-pie)
ldflags=(-static)
ldlibs=(-lrt -lpthread -lm)
bin=$build/mm
mkdir -p "$bin"
# Compile from the source directory with relative file names: __FILE__ ends
# up in names of files some tests create in their working directory.
cd "$src/tools/testing/selftests/mm"
compile() { nice -n 10 "$cc" "$@"; }

helpers=(vm_util thp_settings)
for p in "${progs[@]}"; do
	case $(prog_objs "$p") in *uffd-common.o*) helpers+=(uffd-common) ;; esac
done
for h in $(printf '%s\n' "${helpers[@]}" | sort -u); do
	compile "${cflags[@]}" -c "$h.c" -o "$build/$h.o" || die "compiling $h.c failed"
done
log "mm-regress: building ${#progs[@]} programs from $mmsrc"
for p in "${progs[@]}"; do
	objs=("$build/vm_util.o" "$build/thp_settings.o")
	for o in $(prog_objs "$p"); do objs+=("$build/$o"); done
	# shellcheck disable=SC2046 # the per-program words are meant to split
	compile "${cflags[@]}" $(prog_cflags "$p") "$p.c" "${objs[@]}" "${ldflags[@]}" \
		"${ldlibs[@]}" $(prog_libs "$p") -o "$bin/$p" || die "building mm/$p failed"
done
cd /

# Static or nothing: the guest has no dynamic loader.
for p in "${progs[@]}"; do
	if readelf -lW "$bin/$p" | grep -q 'INTERP'; then
		die "mm/$p is dynamically linked"
	fi
done
install -m 0755 "$here/wrap.sh" "$bin/wrap.sh"
echo "$fp" >"$bin/.fingerprint"

rm -rf "$out/mm.old"
[ ! -e "$out/mm" ] || mv "$out/mm" "$out/mm.old"
mv "$bin" "$out/mm"
rm -rf "$out/mm.old"
cp "$list" "$out/mm-regress.list.tmp"
mv "$out/mm-regress.list.tmp" "$out/mm-regress.list"
log "mm-regress: ${#progs[@]} programs and wrap.sh in $out/mm, list $out/mm-regress.list ($(grep -cEv '^[[:space:]]*(#|$)' "$list") entries)"
echo "$out"
