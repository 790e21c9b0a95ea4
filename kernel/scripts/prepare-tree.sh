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
	# Files the old series touched and the new one leaves as they were keep
	# their mtime, so that make rebuilds only what really changed.
	stamps=$(mktemp)
	trap 'rm -f "$stamps"' EXIT
	git_q diff --name-only pristine HEAD 2>/dev/null | while read -r f; do
		[ -f "$tree/$f" ] || continue
		printf '%s %s %s\n' "$(git -C "$tree" hash-object "$f")" \
			"$(stat -c %Y "$tree/$f")" "$f"
	done >"$stamps"
	rm -f "$tree/.mshare-series"
	git_q am --abort >/dev/null 2>&1 || true
	git_q reset -q --hard pristine
	git_q clean -fdqx -e .mshare-unpacked -e .mshare-series
	n=0
	for p in $(series_patches); do
		n=$((n + 1))
		git_q am -q --keep-cr "$p" || die "patch $(basename "$p") does not apply"
	done
	while read -r sum mtime f; do
		[ -f "$tree/$f" ] || continue
		[ "$(git -C "$tree" hash-object "$f")" = "$sum" ] || continue
		touch -d "@$mtime" "$tree/$f"
	done <"$stamps"
	echo "$want" >"$tree/.mshare-series"
	log "tree at pristine + $n patches"
fi
echo "$tree"
