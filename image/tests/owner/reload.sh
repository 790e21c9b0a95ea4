#!/bin/bash
# Reloading the configuration: a new region appears, a removed one is no
# longer handed out and goes once no client has it attached, a changed one
# is replaced, an unchanged one is untouched, and a broken configuration is
# refused with the reason while everything stays as it was.
. "$(dirname "$0")/lib.sh"
ktap_plan "11"
fresh_owner || echo "# systemctl start $UNIT failed"
B=--bytes=$((64 * MiB))
probe pool $B write 21 >/dev/null || echo "# writing pool failed"
pid=$(main_pid) inode=$(region_field pool inode)

cat >"$CONF_DIR/extra.conf" <<'CONF'
[Region]
Name=scratch
Size=8M

[Grant]
Region=scratch
Mode=rw
User=root
CONF
check "mshare-ctl reload applies a new file" mshare-ctl reload
if [ "$(region_field scratch state)" = active ]; then ok "the new region scratch is there"; else not_ok "no active region scratch after the reload"; fi

probe scratch --bytes=$((8 * MiB)) write 5 >/dev/null || echo "# writing scratch failed"
hold scratch 5 $((8 * MiB)) || echo "# the holder of scratch did not start: $(cat "$HOLDER_OUT")"
rm "$CONF_DIR/extra.conf"
check "a reload with scratch removed succeeds" mshare-ctl reload
st=$(region_field scratch state) att=$(region_field scratch attached)
if [ "$st" = retiring ] && [ "$att" = 1 ]; then
	ok "scratch, still attached by a client, is kept as retiring"
else
	not_ok "scratch after removal: state '$st', attached '$att' (expected retiring, 1)"
fi
refused "a retiring region is no longer handed out" "no region 'scratch' is configured" \
	probe --ro scratch --bytes=$((8 * MiB)) verify 5
if kill -0 "$HOLDER" 2>/dev/null; then ok "the client holding scratch still runs on it"; else not_ok "the holder of scratch died: $(cat "$HOLDER_OUT")"; fi
kill "$HOLDER"
wait "$HOLDER" 2>/dev/null
gone() { ! mshare-ctl --json list | jq -e '.[] | select(.name == "scratch")' >/dev/null; }
if wait_for 40 gone; then ok "scratch is destroyed once its last client is gone"; else not_ok "scratch is still listed 40 s after its last client left"; fi

sed -i 's/^Size=16M$/Size=32M/' "$CONF_DIR/test.conf"
mshare-ctl reload >/dev/null || echo "# reload with cache resized failed"
resized() { [ "$(region_field cache size)" = $((32 * MiB)) ] && [ "$(region_field cache state)" = active ]; }
if wait_for 40 resized; then ok "cache, changed and not attached, is replaced at its new size"; else not_ok "cache is '$(region_field cache state)' with size $(region_field cache size), expected active 32 MiB"; fi

if [ -n "$inode" ] && [ "$(region_field pool inode)" = "$inode" ] && probe --ro pool $B verify 21 >/dev/null; then
	ok "pool, unchanged, is untouched: same region (inode $inode), same contents"
else
	not_ok "pool changed across the reloads"
fi

printf '[Region]\nName=broken\nSize=64Q\n' >"$CONF_DIR/broken.conf"
refused "a reload with a bad file is refused, naming it" "broken.conf" mshare-ctl reload
rm "$CONF_DIR/broken.conf"
if [ "$(main_pid)" = "$pid" ] && [ "$(region_names)" = "cache example pool " ]; then
	ok "after the refused reload the daemon (pid $pid) serves the same regions"
else
	not_ok "after the refused reload: pid $(main_pid) (was $pid), regions '$(region_names)'"
fi
