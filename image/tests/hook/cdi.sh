#!/bin/bash
# The CDI spec adds the hook to a container given the device
# mshare.io/channel=hook (podman 4.3, with its hooks.d directories replaced
# by an empty one, else the hook would run twice), and without the device
# there is no hook.
. "$(dirname "$0")/lib.sh"
ktap_plan "3"
fresh
make_rootfs
mkdir -p /etc/cdi /tmp/no-hooks
check "the CDI spec is installed" cp /usr/share/mshare/cdi/mshare.yaml /etc/cdi/mshare.yaml
prun --hooks-dir /tmp/no-hooks -- --device mshare.io/channel=hook \
	--annotation io.mshare.regions=pool:rw --annotation io.mshare.test=trusted -- \
	/bin/hook-probe get pool /bin/region-probe --bytes=$POOL write 3
show
if [ "$rc" = 0 ]; then
	ok "podman run --device mshare.io/channel=hook (CDI) runs the hook and the container gets pool"
else
	not_ok "CDI: status $rc"
fi
prun --hooks-dir /tmp/no-hooks -- --annotation io.mshare.regions=pool:rw \
	--annotation io.mshare.test=trusted -- /bin/hook-probe get pool
show
if [ "$rc" = 1 ] && { [ "$out" = "error ENOENT" ] || [ "$out" = "error ECONNREFUSED" ]; } && [ -z "$(registered)" ]; then
	ok "without the CDI device (and no hooks.d) there is no hook: nothing serves the container ($out)"
else
	not_ok "no CDI device: status $rc"
fi
rm -f /etc/cdi/mshare.yaml
