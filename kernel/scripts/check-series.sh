#!/usr/bin/env bash
# check-series.sh [VARIANT] [FIRST]: build every prefix of the series, from
# FIRST patches (default 1) to all of them, with the config of VARIANT
# (default release), and report which prefixes build. Each prefix is a full
# kernel build (incremental in one object directory, with ccache), so this
# takes hours on 2 cores: run it by hand, not in CI.
set -euo pipefail
. "$(dirname "$0")/common.sh"

variant=${1:-release}
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
