#!/bin/bash
# guest-preload (make -C preload install-tests) under `mshare-run --strict`:
# a program's big shared mapping is a window onto a region, and forked
# children reach all of it with a few faults and no page tables of their own.
exec mshare-run --strict -- "$(dirname "$0")/mshare-preload/guest-preload" "$@"
