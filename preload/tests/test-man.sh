#!/bin/bash
# The manual pages of the library and of mshare-run render without a groff
# warning, and name every environment variable and option there is.
# Usage: test-man.sh DOCS-DIR SRC-DIR
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
docs=$1
src=$2
pages="mshare-run.1 libmshare-preload.7"

if ! command -v groff >/dev/null; then
	for p in $pages; do skip "$p: groff is not installed"; done
	ktap_finish
	exit
fi
for p in $pages; do
	run groff -t -man -ww -z "$docs/$p"
	check "$p renders without warnings" eval 'status 0 && quiet'
done
# What the code reads, the page tells.
vars=$(grep -ho 'secure_getenv("[A-Z_]*")' "$src"/*.c | sed 's/.*("\(.*\)")/\1/' | sort -u)
text=$(sed 's/\\-/-/g' "$docs/libmshare-preload.7")
check "libmshare-preload(7) describes every variable the library reads: $(echo $vars)" \
	eval 'for v in $vars; do grep -q "^\.B $v\$" <<<"$text" || exit 1; done'
opts=$(grep -o '{ "[a-z-]*", [a-z_]*_argument' "$src/run.c" | sed 's/{ "\([a-z-]*\)".*/\1/')
text=$(sed 's/\\-/-/g' "$docs/mshare-run.1")
check "mshare-run(1) describes every option: $(echo $opts)" \
	eval 'for o in $opts; do grep -q -- "--$o" <<<"$text" || exit 1; done'
ktap_finish
