# mshare: shared page tables for Linux (msharefs). Kernel work lives in
# kernel/, its caches in $MSHARE_CACHE (default ~/.cache/mshare).

.PHONY: all kernel kernel-release test demo demo-db bench deps clean image install

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

# The main job: boot our kernel in QEMU and show page-table sharing against
# plain shared memory (64 processes on a 1 GiB region, busybox initramfs).
demo: deps
	kernel/scripts/demo.sh

# The database demo on the guest image (docs/demo.md): mshare-owner with a
# buffer pool, workers on it and on plain shared memory, side by side.
# `make demo-db ARGS="--workers 64"`. To become `make demo` once verified
# end to end (issue 6).
demo-db: deps
	scripts/demo.sh $(ARGS)

# The benchmark: mshare, plain shared memory and hugetlbfs side by side over
# a sweep of workers, results into docs/results/ (docs/demo.md).
# `make bench ARGS="--quick"`.
bench: deps
	scripts/bench.sh $(ARGS)

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

# The guest image: Debian 12 with systemd, crun, podman and `make install`,
# cached in $MSHARE_CACHE/images/<key>/rootfs.ext4 (image/README.md).
image:
	image/build.sh

# Removes build output inside the repository only; the cache is kept
# (rm -rf ~/.cache/mshare by hand to drop kernels, trees and ccache).
clean:
	rm -rf kernel/selftests/build
