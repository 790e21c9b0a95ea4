#!/usr/bin/env bash
# The whole test run (`make test`, what CI runs): the host tests of the
# userspace (libmshare, mshare-helper, demo-app, crun-hook, preload,
# including a bounded fuzz run of the protocol decoder) and of the guests'
# test runner and log judge (kernel/scripts/guest-lib.sh,
# common/tools/ktap-judge.c); then the kernel's in-guest tests
# on the debug kernel (kernel/scripts/test.sh: KASAN, lockdep, DEBUG_VM,
# page table check and kmemleak, booted on a busybox initramfs); then the
# guest image under systemd on the release kernel, the one `make demo` and
# `make bench` boot (image/run-tests.sh: the image itself, mshare-owner with
# its units, clients, reloads and restarts, mshare-oci-hook with crun and
# podman containers, PostgreSQL under libmshare-preload.so), and the
# benchmark's CI bound in a boot of its own.
# The image lists run on the release kernel because they test userspace on
# top of the kernel, and on the debug kernel under TCG they took 4 to 12
# times as long (PostgreSQL's connections the most): about 75 minutes for
# what takes 15 here (docs/kernel-status.md, "Where the tests run").
# Every part runs even if an earlier one failed; the last line printed is
# the sum, "N passed, N failed", and the exit status is 0 only if nothing
# failed.
#   MSHARE_FUZZ_SECONDS   length of the protocol fuzz run (default 30)
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
total_passed=0
total_failed=0

# run NAME CMD...: run a part, count what its last "N passed, M failed"
# line says, and a failure if it exits non-zero without reporting one.
run() {
	local name=$1 out rc p f
	shift
	echo "=== $name: $*"
	out=$(mktemp)
	"$@" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	read -r p f < <(sed -n 's/^\([0-9]\+\) passed, \([0-9]\+\) failed$/\1 \2/p' "$out" | tail -n1)
	rm -f "$out"
	p=${p:-0}
	f=${f:-0}
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	# A part with no count of its own that succeeded counts as one pass.
	if [ "$rc" -eq 0 ] && [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
		p=1
	fi
	echo "=== $name: $p passed, $f failed (exit $rc)"
	total_passed=$((total_passed + p))
	total_failed=$((total_failed + f))
}

run libmshare make -C "$root/libmshare" check
run mshare-helper make -C "$root/mshare-helper" check
run demo-app make -C "$root/demo-app" check
run crun-hook make -C "$root/crun-hook" check
run preload make -C "$root/preload" check
run mshare-helper-fuzz make -C "$root/mshare-helper" fuzz-run \
	FUZZ_SECONDS="${MSHARE_FUZZ_SECONDS:-30}"
run guest-runner "$root/common/run-tap.sh" "bash $root/kernel/scripts/tests/test-guest-lib.sh" \
	"bash $root/common/tests/test-ktap-judge.sh"
run kernel "$root/kernel/scripts/test.sh"

# The image part: the smoke, owner, hook and postgres lists in one boot of
# the release kernel, then issue 6's bound in a boot of its own
# (scripts/bench.sh --ci, list bench-ci: 16 workers on a 1 GiB pool, mshare
# against plain shared memory; page-table bytes at least 20 times and
# warm-up faults per worker at least 100 times fewer). The workers run as
# processes: the counts do not depend on how a worker was started, and the
# hook list covers containers.
if relk=$("$root/kernel/scripts/build.sh" release); then
	run image "$root/image/run-tests.sh" --kernel "$relk" --tests smoke,owner,hook,postgres \
		--timeout 3600 --test-timeout 900
	stage=$(mktemp -d)
	trap 'rm -rf "$stage"' EXIT
	if "$root/scripts/bench.sh" --ci --launch processes --stage "$stage/ci" >/dev/null; then
		run bench-ci "$root/image/run-tests.sh" --kernel "$relk" --tests bench-ci \
			--extra-dir "$stage/ci" --timeout 1800 --test-timeout 1200
	else
		echo "=== bench-ci: scripts/bench.sh --stage failed; the bound is not checked"
		total_failed=$((total_failed + 1))
	fi
else
	echo "=== image, bench-ci: the release kernel did not build (kernel/scripts/build.sh release)"
	total_failed=$((total_failed + 2))
fi

echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
