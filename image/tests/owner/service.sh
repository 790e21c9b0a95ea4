#!/bin/bash
# mshare-owner under systemd: it starts on the test configuration and says
# when it is ready, mshare-ctl shows what is configured, and a populated
# region's memory is charged to the service's cgroup.
. "$(dirname "$0")/lib.sh"
ktap_plan "8"

write_config
check "mshare-owner --check-config accepts the example and the test configuration" \
	mshare-owner --check-config
check "systemctl start $UNIT" fresh_owner
state="$(systemctl show -P ActiveState "$UNIT")|$(systemctl show -P SubState "$UNIT")|$(systemctl show -P StatusText "$UNIT")"
if [[ $state == "active|running|Serving 3 regions: 3 active"* ]]; then
	ok "the service is active, and ready by sd_notify ($state)"
else
	not_ok "the service is not ready: $state"
fi

names=$(region_names)
if [ "$names" = "cache example pool " ]; then
	ok "mshare-ctl list shows the configured regions: $names"
else
	not_ok "mshare-ctl list shows '$names', expected 'cache example pool '"
fi
mshare-ctl list | sed 's/^/# /'

pid=$(main_pid) owner=$(region_field pool owner_pid)
if [ -n "$pid" ] && [ "$pid" != 0 ] && [ "$owner" = "$pid" ]; then
	ok "the daemon (pid $pid) owns region pool"
else
	not_ok "region pool is owned by '$owner', the daemon is '$pid'"
fi

rss=$(region_field pool rss_bytes) rss_cache=$(region_field cache rss_bytes)
if [ "$rss" -ge $((64 * MiB)) ] && [ "$rss_cache" = 0 ]; then
	ok "Populate=yes made pool resident ($rss bytes), cache is not ($rss_cache)"
else
	not_ok "resident bytes: pool '$rss' (expected >= 64 MiB), cache '$rss_cache' (expected 0)"
fi

shmem=$(memstat shmem) pt=$(memstat pagetables)
if [ "${shmem:-0}" -ge $((64 * MiB)) ] && [ "${pt:-0}" -ge $((128 * 1024)) ]; then
	ok "pool's pages and page tables are charged to $UNIT (shmem $shmem, pagetables $pt)"
else
	not_ok "$UNIT's memory.stat: shmem '$shmem' (expected >= 64 MiB), pagetables '$pt' (expected >= 128 KiB)"
fi

# root sees the grants that name the region: rw to uid 0, ro to gid 4343.
check "mshare-ctl show pool shows its two grants" \
	sh -c 'out=$(mshare-ctl show pool) && printf "%s\n" "$out" &&
		printf "%s\n" "$out" | grep -q "Grant: rw uid 0 (" &&
		printf "%s\n" "$out" | grep -q "Grant: ro gid 4343 ("'
