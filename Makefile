# mshare: shared page tables for Linux (msharefs). Kernel work lives in
# kernel/, its caches in $MSHARE_CACHE (default ~/.cache/mshare).

.PHONY: all kernel kernel-release test demo demo-initramfs bench bench-pg bench-flush soak soak-tlb deps clean image install

all: kernel

# Debug kernel (KASAN, lockdep, ...) with the series applied.
kernel:
	kernel/scripts/build.sh debug

kernel-release:
	kernel/scripts/build.sh release

# The test command: host tests of the userspace (libmshare, mshare-helper
# and a bounded fuzz run of its protocol decoder), then the debug kernel,
# selftests and QEMU boot; ends on "N passed, N failed".
test: deps
	scripts/test-all.sh

# The main job (docs/demo.md): database workers in crun containers on one
# buffer pool held by mshare-owner, with an mshare region and with plain
# shared memory, side by side, in the guest image on the release kernel.
# `make demo ARGS="--workers 64 --size 1G --mem 6G"` for a bigger run.
demo: deps
	scripts/demo.sh $(ARGS)

# The first demo: 64 processes sharing a 1 GiB region against 2 memfd
# mappers, on a busybox initramfs (no daemon, no containers).
demo-initramfs: deps
	kernel/scripts/demo.sh

# The benchmark: mshare, plain shared memory and hugetlbfs side by side over
# a sweep of workers (docs/demo.md), then PostgreSQL plain, on mshare and
# with huge_pages (docs/postgresql.md), then what changing a region costs
# with 1 to 1024 attached processes (docs/kernel-status.md); results into
# docs/results/. `make bench ARGS="--quick"` (the workers),
# `make bench-pg PGARGS="--more 2048"`, `make bench-flush FLUSHARGS="--reps 5"`.
bench: deps
	scripts/bench.sh $(ARGS)
	scripts/bench.sh --postgres $(PGARGS)
	kernel/scripts/bench-flush.sh $(FLUSHARGS)

bench-flush: deps
	kernel/scripts/bench-flush.sh $(FLUSHARGS)

bench-pg: deps
	scripts/bench.sh --postgres $(PGARGS)

# Issue 16's soak: mshare-owner restarted, killed and upgraded 100 times
# while database workers in crun containers run on its region, in the guest
# image on the debug kernel (`make kernel` first); the report goes to
# docs/results/soak-restart-*.md. `make soak ARGS="--cycles 20"`.
soak: deps
	scripts/soak.sh $(ARGS)

# TLB coherence under the debug kernel for minutes: mshare_tlb's coherence
# fixture, TLB_SECONDS a variant (five of them, one list entry).
# `make soak-tlb TLB_SECONDS=600`.
TLB_SECONDS ?= 300
soak-tlb: deps
	MSHARE_TESTS=tlb-soak MSHARE_TLB_SECONDS=$(TLB_SECONDS) \
		MSHARE_TEST_TIMEOUT=$$((5 * $(TLB_SECONDS) + 300)) \
		MSHARE_QEMU_TIMEOUT=$$((5 * $(TLB_SECONDS) + 900)) kernel/scripts/test.sh

deps:
	scripts/install-deps.sh

# Our userspace, installed the way a package would install it:
# `make install DESTDIR=/some/root`. Components not written yet are skipped.
DESTDIR ?=
install:
	@if [ -f libmshare/Makefile ]; then $(MAKE) -C libmshare install DESTDIR=$(DESTDIR); fi
	@if [ -f mshare-helper/Makefile ]; then $(MAKE) -C mshare-helper install DESTDIR=$(DESTDIR); fi
	@if [ -f demo-app/Makefile ]; then $(MAKE) -C demo-app install DESTDIR=$(DESTDIR); fi
	@if [ -f crun-hook/Makefile ]; then $(MAKE) -C crun-hook install DESTDIR=$(DESTDIR); fi
	@if [ -f preload/Makefile ]; then $(MAKE) -C preload install DESTDIR=$(DESTDIR); fi

# The guest image: Debian 12 with systemd, crun, podman and `make install`,
# cached in $MSHARE_CACHE/images/<key>/rootfs.ext4 (image/README.md).
image:
	image/build.sh

# Removes build output inside the repository only; the cache is kept
# (rm -rf ~/.cache/mshare by hand to drop kernels, trees and ccache).
clean:
	rm -rf kernel/selftests/build
