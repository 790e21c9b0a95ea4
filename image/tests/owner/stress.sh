#!/bin/bash
# Bad messages and 1,000 concurrent clients (owner-stress, its KTAP nested as a
# subtest) leave the daemon up, with the same pid, and every region intact.
. "$(dirname "$0")/lib.sh"
ktap_plan "5"
fresh_owner || echo "# systemctl start $UNIT failed"
B=--bytes=$((64 * MiB))
probe pool $B write 11 >/dev/null || echo "# writing pool failed"
pid=$(main_pid) before=$(region_names) rss=$(region_field pool rss_bytes)

echo "# Subtest: owner-stress --clients=1000 --region=pool"
out=$("$STRESS" --clients=1000 --region=pool 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's/^/    /'
checks=$(grep -c '^ok ' <<<"$out")
failed=$(grep -c '^not ok ' <<<"$out")
if [ "$rc" = 0 ] && [ "$checks" -gt 0 ] && [ "$failed" = 0 ] && [ "$(tail -n1 <<<"$out")" = "1..$checks" ]; then
	ok "owner-stress: bad, truncated, oversized and slow messages, vanishing and 1000 concurrent clients ($checks checks)"
else
	not_ok "owner-stress failed (status $rc): $failed of $((checks + failed)) checks failed"
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
