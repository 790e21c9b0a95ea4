#!/bin/bash
# Bad messages and 1,000 concurrent clients (owner-stress, its KTAP nested as a
# subtest) leave the daemon up, with the same pid, and every region intact.
. "$(dirname "$0")/lib.sh"
ktap_plan "5"
fresh_owner || echo "# systemctl start $UNIT failed"
B=--bytes=$((64 * MiB))
probe pool $B write 11 >/dev/null || echo "# writing pool failed"
pid=$(main_pid) before=$(region_names) rss=$(region_field pool rss_bytes)

# owner-stress's own results stay nested, for the reader of the log; its
# exit status says whether all of them passed and its plan was met
# (tap_finish).
echo "# Subtest: owner-stress --clients=1000 --region=pool"
"$STRESS" --clients=1000 --region=pool 2>&1 | sed 's/^/    /'
rc=${PIPESTATUS[0]}
if [ "$rc" = 0 ]; then
	ok "owner-stress: bad, truncated, oversized and slow messages, vanishing and 1000 concurrent clients"
else
	not_ok "owner-stress failed (status $rc)"
fi

now="$(main_pid) $(systemctl show -P NRestarts "$UNIT") $(systemctl show -P ActiveState "$UNIT")"
if [ "$now" = "$pid 0 active" ]; then
	ok "the daemon is still up, same pid $pid, never restarted"
else
	not_ok "the daemon was pid $pid; now MainPID NRestarts ActiveState = $now"
fi
after=$(region_names)
if [ "$after" = "$before" ] && [ "$(mshare-ctl --json list | jq -r '[.[].state] | unique | join(",")')" = active ]; then
	ok "every region is still there and active: $after"
else
	not_ok "regions before: '$before', after: '$after'"
	mshare-ctl list | sed 's/^/# /'
fi
check "pool still holds what was written before the crowd" probe --ro pool $B verify 11
now_rss=$(region_field pool rss_bytes)
if [ "$now_rss" = "$rss" ]; then
	ok "pool's resident size is unchanged ($rss bytes)"
else
	not_ok "pool's resident size went from $rss to $now_rss bytes"
fi
