#!/usr/bin/env bash
# check-series.sh [VARIANT] [FIRST]: build every prefix of the series, from
# FIRST patches (default 1) to all of them, with the config of VARIANT
# (default check: tinyconfig plus every option the series' code depends
# on, kernel/config/check.config), and report which prefixes build. Each
# prefix is a kernel build (incremental in one object directory, with
# ccache); with the check variant the whole series takes about an hour on
# 2 cores, with release or debug many hours: run it by hand, not in CI.
set -euo pipefail
. "$(dirname "$0")/common.sh"

variant=${1:-check}
first=${2:-1}
total=$(series_patches | wc -l)
failed=0
for ((k = first; k <= total; k++)); do
	name=$(basename "$(MSHARE_SERIES_PREFIX=$k series_patches | tail -n1)")
	if MSHARE_SERIES_PREFIX=$k "$KERNEL_DIR/scripts/build.sh" "$variant" >/dev/null; then
		echo "ok     $k/$total $name"
	else
		echo "FAILED $k/$total $name"
		failed=$((failed + 1))
	fi
done
echo "$((total - first + 1 - failed)) passed, $failed failed"
[ "$failed" = 0 ]
