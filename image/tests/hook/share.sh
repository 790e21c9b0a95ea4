#!/bin/bash
# Two containers share a region's page tables: while one keeps reading
# pool, a second one that maps and reads all 64 MiB takes a handful of minor
# faults and no page tables of its own (plain shared memory would cost 16384
# faults and 128 KiB of page tables). Faults are counted inside the
# container, by region-probe.
. "$(dirname "$0")/lib.sh"
ktap_plan "5"
fresh
ann='{"io.mshare.regions": "pool:rw", "io.mshare.test": "trusted"}'
b=$(bundle writer "$ann" /bin/hook-probe get pool /bin/region-probe --bytes=$POOL write 21)
crun_run writer-1 "$b"
w=$out
if [ "$rc" = 0 ] && [ "$(field pages "$w")" = 16384 ]; then ok "container 1 wrote pool ($w)"; else not_ok "container 1: status $rc: $w"; fi

b=$(bundle holder "$ann" /bin/hook-probe get --ro pool /bin/region-probe --bytes=$POOL hold 21)
crun run -d -b "$b" holder-1 >/tmp/holder-1.out 2>&1 </dev/null
if wait_for 60 grep -q '^ready$' /tmp/holder-1.out; then
	ok "container 2 maps pool and keeps reading it"
else
	not_ok "container 2 did not get ready: $(cat /tmp/holder-1.out)"
fi
b=$(bundle reader "$ann" /bin/hook-probe get --ro pool /bin/region-probe --bytes=$POOL verify 21)
crun_run reader-1 "$b"
r=$out
if [ "$rc" = 0 ]; then ok "container 3 reads what container 1 wrote ($r)"; else not_ok "container 3: status $rc: $r"; fi
cheap "container 3 shares the page tables: a handful of faults, no VmPTE growth" "$r"
if [ "$(mshare-ctl --json containers | jq -r '.[] | select(.id == "holder-1") | .regions[0].region')" = pool ]; then
	ok "container 2 is registered with pool while it runs"
else
	not_ok "containers: $(mshare-ctl --json containers)"
fi
crun delete -f holder-1 >/dev/null 2>&1
