#!/bin/sh
# run-tap.sh CMD...: the host tests' runner. Runs each CMD (a shell command
# line printing KTAP or TAP) as one test of a KTAP document, its output
# nested below it, the way the guest runner runs a list entry
# (guest_entry, kernel/scripts/guest-lib.sh: a command fails if it exits
# non-zero, prints a `not ok`, or prints no result), shows the document,
# and reads it with common/build/ktap-judge --ktap: one count a subtest,
# `# SKIP` counted apart, never as passed. The last line is the judge's
# "N passed, N failed".
#   RUN_TAP_TIMEOUT   seconds a command may take (default 3600)
here=$(cd "$(dirname "$0")" && pwd)
make -s -C "$here" judge >&2 || { echo "0 passed, 1 failed"; exit 1; }
# shellcheck source-path=SCRIPTDIR source=ktap.sh
. "$here/ktap.sh"
# shellcheck source-path=SCRIPTDIR source=../kernel/scripts/guest-lib.sh
. "$here/../kernel/scripts/guest-lib.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
{
	ktap_plan $#
	for t; do guest_entry "$t" 0 "${RUN_TAP_TIMEOUT:-3600}" "$scratch"; done
} | tee "$scratch/document"
"$here/build/ktap-judge" --ktap "$scratch/document"
