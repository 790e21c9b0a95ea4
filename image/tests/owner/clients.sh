#!/bin/bash
# Clients of mshare-owner: an allowed client gets a descriptor and shares the
# region's page tables with the next one; a client without a grant, a
# read-write request under a read-only grant, and an unknown region are
# refused with the daemon's reason; a read-only descriptor cannot write.
. "$(dirname "$0")/lib.sh"
ktap_plan "10"
fresh_owner || echo "# systemctl start $UNIT failed"
B=--bytes=$((64 * MiB))

rep=$(probe pool $B write 7)
rc=$?
if [ "$rc" = 0 ] && [ "$(field pages "$rep")" = 16384 ]; then
	ok "root (rw grant) gets pool and writes all 16384 pages ($rep)"
else
	not_ok "root could not write pool (status $rc): $rep"
fi
cheap "the writer took no page tables of its own: pool was populated by the daemon" "$rep"

rep=$(probe --ro --as $READER $READERS pool $B verify 7)
rc=$?
if [ "$rc" = 0 ]; then ok "uid $READER (ro grant by group) reads what root wrote"; else not_ok "uid $READER read pool: status $rc ($rep)"; fi
cheap "the reader shares the page tables: a handful of faults, no VmPTE growth" "$rep"

check "uid $READER's descriptor is read-only: rw window EACCES, stores SIGSEGV" \
	probe --ro --as $READER $READERS pool $B readonly
check "root's read-only request gives a read-only descriptor too" probe --ro pool $B readonly

refused "uid $READER asking for pool read-write is refused" "is granted read-only" \
	probe --as $READER $READERS pool $B verify 7
refused "uid $STRANGER (no grant) is refused" "is not granted to uid $STRANGER" \
	probe --ro --as $STRANGER $STRANGER pool $B verify 7
refused "no implicit grants: root is refused cache, granted only to group $READERS" \
	"is not granted to uid 0" probe --ro cache --bytes=$((16 * MiB)) verify 0
refused "an unknown region is refused" "no region 'nosuch' is configured" \
	probe --ro nosuch $B verify 7
