#!/bin/bash
# Stopping the service destroys its regions, as the kernel's ownership rule
# says: a client still reading one gets SIGSEGV, and the region started
# again is a new one.
. "$(dirname "$0")/lib.sh"
ktap_plan "4"
fresh_owner || echo "# systemctl start $UNIT failed"
B=--bytes=$((64 * MiB))
probe pool $B write 31 >/dev/null || echo "# writing pool failed"
hold pool 31 $((64 * MiB)) || echo "# the holder of pool did not start: $(cat "$HOLDER_OUT")"

check "systemctl stop $UNIT" systemctl stop "$UNIT"
timeout 30 tail --pid="$HOLDER" -f /dev/null
wait "$HOLDER"
rc=$?
if [ "$rc" = $((128 + 11)) ]; then
	ok "the client reading pool got SIGSEGV when its owner stopped"
else
	not_ok "the client reading pool ended with status $rc, expected SIGSEGV (139): $(cat "$HOLDER_OUT")"
fi

check "the daemon starts again" systemctl start "$UNIT"
refused "pool is a new region: what was written before the stop is gone" "differ" \
	probe --ro pool $B verify 31
