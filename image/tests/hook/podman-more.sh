#!/bin/bash
# A detached podman container is registered under podman's id for it while
# it runs (podman 4.3 puts no name of the container among its annotations,
# so grants by Container= cannot match podman containers; by ContainerId= or
# Annotation= they do), gets its region through podman exec, is unregistered
# by podman rm, and a request beyond its grant fails `podman run` with the
# daemon's reason.
. "$(dirname "$0")/lib.sh"
ktap_plan "5"
fresh
make_rootfs
timeout 300 podman run -d --name web-1 --network none \
	--annotation io.mshare.regions=pool --annotation io.mshare.test=x \
	--rootfs "$ROOTFS" /bin/sleep 600 >/dev/null 2>&1 </dev/null
echo "# podman's annotations: $(podman inspect web-1 --format '{{json .Config.Annotations}}' 2>&1)"
id=$(podman inspect web-1 --format '{{.Id}}' 2>/dev/null)
if [ -n "$id" ] && [ "$(registered)" = "$id " ]; then
	ok "podman's container web-1 is registered under its id while it runs"
else
	not_ok "registered: '$(registered)', podman's id '$id'"
fi
echo "# name: '$(mshare-ctl --json containers | jq -r '.[0].name // empty')'"
out=$(timeout 300 podman exec web-1 /bin/hook-probe get --ro pool /bin/region-probe --bytes=$POOL readonly 2>&1)
rc=$?
show
if [ "$rc" = 0 ]; then ok "podman exec in web-1 maps pool read-only through its channel"; else not_ok "web-1: status $rc"; fi
timeout 300 podman rm -f web-1 >/dev/null 2>&1
if [ -z "$(registered)" ]; then ok "podman rm -f unregistered it"; else not_ok "registered: $(registered)"; fi

# A refusal fails podman run. podman shows only crun's last line ("error
# executing hook"); the hook's reason is in the journal.
since=$(date '+%Y-%m-%d %H:%M:%S')
prun -- --name web-2 --annotation io.mshare.regions=pool:rw --annotation io.mshare.test=x -- /bin/true
show
journalctl --sync 2>/dev/null
reason=$(journalctl -q -o cat --since "$since" SYSLOG_IDENTIFIER=mshare-oci-hook PRIORITY=3)
echo "# journal: $reason"
if [ "$rc" != 0 ] && [[ $out == *"error executing hook"* ]] &&
	[[ $reason == *"refused the registration: region 'pool' is not granted read-write"*"(EACCES)"* ]]; then
	ok "pool:rw for web-2 (granted pool read-only) fails podman run; the daemon's reason is in the journal"
else
	not_ok "web-2 asking for pool:rw: status $rc"
fi
if ! podman ps -a --format '{{.Names}}' | grep -qx web-2 && [ -z "$(registered)" ]; then
	ok "nothing is left of web-2"
else
	not_ok "left: $(podman ps -a --format '{{.Names}}' | tr '\n' ' ') registered: $(registered)"
	podman rm -f web-2 >/dev/null 2>&1
fi

