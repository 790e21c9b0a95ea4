#!/usr/bin/env bash
# Install what building and testing the mshare kernel needs on Debian 12
# (`make deps`; .ci/run calls it too). Idempotent; needs root or sudo.
set -euo pipefail

packages=(
	# the kernel source the series applies to
	linux-source-6.12 xz-utils
	# kernel build (kernel/scripts/build.sh, prepare-tree.sh, headers.sh)
	build-essential bc bison flex libelf-dev libssl-dev pkg-config kmod
	perl python3 rsync git ccache cpio gzip
	# static libcap for the mm regression selftests (memfd_secret, mlock-random-test)
	libcap-dev
	# guest tests (mkinitramfs.sh, run-qemu.sh); libc6-dev (via
	# build-essential) provides the static libc the test binaries link
	qemu-system-x86 busybox-static file coreutils e2fsprogs
	# userspace: libmshare, mshare-owner and mshare-ctl (libsystemd for
	# sd_notify, socket activation and the journal; jansson for the
	# protocol; inih for the configuration), their fuzz target (clang with
	# libFuzzer), unit checks (systemd-analyze) and man page checks
	libsystemd-dev libjansson-dev libinih-dev clang libclang-rt-14-dev
	systemd man-db groff-base
	# libmshare's guest test puts a seccomp filter in front of the calls
	libseccomp-dev
	# the guest image (image/build.sh also installs these on first use)
	mmdebstrap binutils qemu-utils
	# make bench / make demo: the workers' JSON, the plots
	jq gnuplot-nox
	# preload's host test runs PostgreSQL (initdb, pg_ctl, pgbench) under
	# mshare-run
	postgresql-15
)

# Nothing to do when everything is there already (make test and make demo
# call this every time).
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all ${#packages[@]} packages are installed"
	exit 0
fi
echo "install-deps: installing ${missing[*]}"

sudo=
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || { echo "install-deps: run as root (or install sudo)" >&2; exit 1; }
	sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${packages[@]}"
