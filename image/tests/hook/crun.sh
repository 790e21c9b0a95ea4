#!/bin/bash
# crun containers with and without io.mshare.regions. Without it the hook
# does nothing. With it the container finds its channel at
# /run/mshare/mshare.sock, gets the regions it registered and no others,
# in at most the registered mode (a read-only grant cannot write), cannot
# map or unmap inside a region, cannot reach the daemon's main socket, and
# is unregistered when it stops.
. "$(dirname "$0")/lib.sh"
ktap_plan "17"
fresh

check "the hook is installed ($HOOK --version)" "$HOOK" --version
check "its hooks.d file names it for createRuntime and poststop, when io.mshare.regions is set" \
	jq -e '.hook.path == "/usr/libexec/mshare/mshare-oci-hook" and .stages == ["createRuntime", "poststop"]
	       and .when.annotations["^io\\.mshare\\.regions$"] != null' "$HOOKS_D"

# Without the annotation.
b=$(bundle plain '{}' /bin/sh -c 'ls -A /run; echo done')
crun_run plain-1 "$b"
if [ "$rc" = 0 ] && [ "$out" = done ]; then
	ok "a container without io.mshare.regions runs as before, and its /run is empty"
else
	not_ok "a container without the annotation: status $rc"
fi
show
if [ -z "$(registered)" ]; then ok "nothing was registered"; else not_ok "registered: $(registered)"; fi

# With it: pool read-write, catalog read-only.
ann='{"io.mshare.regions": "pool:rw,catalog", "io.mshare.test": "trusted", "run.oci.hooks.stderr": "/dev/stderr"}'
b=$(bundle trusted "$ann" /bin/sh -c '
	echo "channel: $(stat -c "%A %u" /run/mshare/mshare.sock)"
	echo "list: $(hook-probe list)"
	echo "write: $(hook-probe get pool /bin/region-probe --bytes='$POOL' write 5)"
	echo "verify: $(hook-probe get --ro pool /bin/region-probe --bytes='$POOL' verify 5)"
	r=$(hook-probe get --ro catalog /bin/region-probe --bytes='$CATALOG' readonly)
	echo "readonly: $r status=$?"
	echo "catalog-rw: $(hook-probe get catalog)"
	echo "secret: $(hook-probe get secret)"
	echo "example: $(hook-probe get example)"
	echo "control: $(hook-probe control pool | tr "\n" " ")"
	echo "owner-socket: $(hook-probe connect /run/mshare/owner.sock)"
	echo "host-run: $(ls /run/mshare)"')
crun_run trusted-1 "$b"
show
line() { sed -n "s/^$1: //p" <<<"$out"; }
if [ "$rc" = 0 ]; then ok "a container with io.mshare.regions=pool:rw,catalog runs"; else not_ok "it failed: status $rc"; fi
if [ "$(line channel)" = "srw-rw-rw- 0" ]; then
	ok "its channel is a socket at /run/mshare/mshare.sock, mode 0666, owned by its root"
else
	not_ok "channel: '$(line channel)'"
fi
if [ "$(line list)" = "pool catalog" ] || [ "$(line list)" = "catalog pool" ]; then
	ok "the channel lists the registered regions only: $(line list)"
else
	not_ok "the channel lists '$(line list)', expected pool and catalog"
fi
w=$(line write)
if [ "$(field pages "$w")" = 16384 ]; then
	ok "mshare_request(\"pool\") read-write: the workload writes all 16384 pages ($w)"
else
	not_ok "writing pool: '$w'"
fi
cheap "writing the populated pool took a handful of faults and no page tables" "$w"
v=$(line verify)
if [ "$(field pages "$v")" = 16384 ]; then ok "a read-only request reads back what was written ($v)"; else not_ok "verify: '$v'"; fi
if [[ $(line readonly) == faults=*" pages=4096 status=0" ]]; then
	ok "the read-only grant of catalog cannot write: rw windows EACCES, stores SIGSEGV"
else
	not_ok "catalog read-only: '$(line readonly)'"
fi
if [ "$(line catalog-rw)" = "error EACCES" ]; then
	ok "asking for catalog read-write is refused (EACCES): it was registered read-only"
else
	not_ok "catalog read-write: '$(line catalog-rw)'"
fi
if [ "$(line secret)" = "error EACCES" ] && [ "$(line example)" = "error EACCES" ]; then
	ok "regions the container did not register are refused (EACCES): secret, example"
else
	not_ok "secret: '$(line secret)', example: '$(line example)'"
fi
if [ "$(line control)" = "mshare_map: EPERM mshare_unmap: EPERM mshare_protect: EPERM " ]; then
	ok "inside the region the container can neither map, nor unmap, nor protect (EPERM)"
else
	not_ok "control: '$(line control)'"
fi
if [ "$(line owner-socket)" = "error ENOENT" ]; then
	ok "the daemon's main socket is not in the container (ENOENT)"
else
	not_ok "owner socket: '$(line owner-socket)'"
fi
if [ "$(line host-run)" = "mshare.sock" ]; then ok "/run/mshare holds the channel only"; else not_ok "/run/mshare: '$(line host-run)'"; fi
if [ -z "$(registered)" ]; then ok "once it stopped it is no longer registered"; else not_ok "still registered: $(registered)"; fi

