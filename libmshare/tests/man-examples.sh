#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# man-examples.sh OUTDIR PAGE...: write the example program of each manual
# page, the lines between '.\" SRC BEGIN (NAME.c)' and '.\" SRC END', to
# OUTDIR/NAME.c, undoing the roff escapes the pages use in code (\- \[rs]
# \[aq] \&). Prints the files written.
set -eu

out=$1
shift
mkdir -p "$out"
for page in "$@"; do
	name=$(sed -n 's/^\.\\" SRC BEGIN (\(.*\))$/\1/p' "$page")
	[ -n "$name" ] || continue
	sed -n '/^\.\\" SRC BEGIN/,/^\.\\" SRC END/p' "$page" |
		sed -e '/^\./d' \
		    -e 's/\\-/-/g' \
		    -e "s/\\\\\\[aq\\]/'/g" \
		    -e 's/\\&//g' \
		    -e 's/\\\[rs\]/\\/g' >"$out/$name"
	echo "$out/$name"
done
