# mshare: shared page tables for Linux (msharefs). Kernel work lives in
# kernel/, its caches in $MSHARE_CACHE (default ~/.cache/mshare).

.PHONY: all kernel kernel-release test demo deps clean

all: kernel

# Debug kernel (KASAN, lockdep, ...) with the series applied.
kernel:
	kernel/scripts/build.sh debug

kernel-release:
	kernel/scripts/build.sh release

# The test command: debug kernel, selftests, QEMU boot; ends on
# "N passed, N failed".
test: deps
	kernel/scripts/test.sh

# The main job: boot our kernel in QEMU and show page-table sharing against
# plain shared memory.
demo: deps
	kernel/scripts/demo.sh

deps:
	scripts/install-deps.sh

# Removes build output inside the repository only; the cache is kept
# (rm -rf ~/.cache/mshare by hand to drop kernels, trees and ccache).
clean:
	rm -rf kernel/selftests/build
