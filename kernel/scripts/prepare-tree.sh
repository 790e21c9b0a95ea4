#!/usr/bin/env bash
# Unpack linux-source-6.12 into the cache (once per tarball) and bring the
# tree to "pristine + the series" (or pristine alone with MSHARE_SERIES=none).
# Prints the tree's path. Files a patch does not touch keep their mtime, so
# the out-of-tree builds stay incremental.
set -euo pipefail
. "$(dirname "$0")/common.sh"

src=$(source_id)
tree=$MSHARE_CACHE/linux-$src
git_q() { git -C "$tree" -c user.name=mshare-build -c user.email=build@mshare.invalid "$@"; }

if [ ! -f "$tree/.mshare-unpacked" ]; then
	log "unpacking $LINUX_TARBALL into $tree"
	rm -rf "$tree" "$tree.tmp"
	mkdir -p "$tree.tmp"
	tar -xf "$LINUX_TARBALL" -C "$tree.tmp" --strip-components=1
	git -C "$tree.tmp" init -q
	git -C "$tree.tmp" -c user.name=mshare-build -c user.email=build@mshare.invalid \
		-c core.autocrlf=false add -A -f .
	git -C "$tree.tmp" -c user.name=mshare-build -c user.email=build@mshare.invalid \
		commit -q -m "linux-source-6.12 ($src)" --no-verify
	git -C "$tree.tmp" tag pristine
	touch "$tree.tmp/.mshare-unpacked"
	mv "$tree.tmp" "$tree"
fi

want=$(series_hash)
have=$(cat "$tree/.mshare-series" 2>/dev/null || true)
if [ "$want" != "$have" ]; then
	rm -f "$tree/.mshare-series"
	git_q am --abort >/dev/null 2>&1 || true
	git_q reset -q --hard pristine
	git_q clean -fdqx -e .mshare-unpacked -e .mshare-series
	n=0
	for p in $(series_patches); do
		n=$((n + 1))
		git_q am -q --keep-cr "$p" || die "patch $(basename "$p") does not apply"
	done
	echo "$want" >"$tree/.mshare-series"
	log "tree at pristine + $n patches"
fi
echo "$tree"
