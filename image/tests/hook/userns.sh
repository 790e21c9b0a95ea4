#!/bin/bash
# A container in a user namespace of its own (its root is host uid 100000):
# the hook makes the channel on the container's /run, a tmpfs mounted in
# that user namespace, as the container's root (a file system mounted in a
# user namespace takes no file from an id it does not map, not even from
# the host's root), and the container gets its region.
. "$(dirname "$0")/lib.sh"
ktap_plan "6"
fresh

ann='{"io.mshare.regions": "pool:rw,catalog", "io.mshare.test": "trusted", "run.oci.hooks.stderr": "/dev/stderr"}'
b=$(SPEC=rootless bundle userns "$ann" /bin/sh -c '
	echo "uid_map: $(cat /proc/self/uid_map | tr -s " " | sed "s/^ //")"
	echo "channel: $(stat -c "%A %u %g" /run/mshare/mshare.sock) $(stat -c "%A %u" /run/mshare)"
	echo "write: $(hook-probe get pool /bin/region-probe --bytes='$POOL' write 9)"
	r=$(hook-probe get --ro catalog /bin/region-probe --bytes='$CATALOG' readonly)
	echo "readonly: $r status=$?"
	echo "control: $(hook-probe control pool | tr "\n" " ")"')
userns "$b"
crun_run userns-1 "$b"
show
line() { sed -n "s/^$1: //p" <<<"$out"; }
if [ "$rc" = 0 ] && [ "$(line uid_map)" = "0 100000 65536" ]; then
	ok "a container whose root is host uid 100000 starts with the hook"
else
	not_ok "the user-namespaced container: status $rc, uid_map '$(line uid_map)'"
fi
if [ "$(line channel)" = "srw-rw-rw- 0 0 drwxr-xr-x 0" ]; then
	ok "its channel belongs to its own root (0:0 inside), mode 0666, in a directory 0755"
else
	not_ok "channel: '$(line channel)'"
fi
w=$(line write)
if [ "$(field pages "$w")" = 16384 ]; then ok "it writes pool through its channel ($w)"; else not_ok "write: '$w'"; fi
if [[ $(line readonly) == faults=*" pages=4096 status=0" ]]; then ok "catalog is read-only to it"; else not_ok "readonly: '$(line readonly)'"; fi
if [ "$(line control)" = "mshare_map: EPERM mshare_unmap: EPERM mshare_protect: EPERM " ]; then
	ok "it can neither map nor unmap in the region (EPERM)"
else
	not_ok "control: '$(line control)'"
fi
if [ -z "$(registered)" ]; then ok "it is unregistered once it stopped"; else not_ok "registered: $(registered)"; fi
