#!/bin/bash
# Containers side by side: one cannot obtain or see another's region, the
# other gets it through its own channel, and
# the installed example config.json for plain crun works as it is.
. "$(dirname "$0")/lib.sh"
ktap_plan "5"
fresh
ann='{"io.mshare.regions": "pool:rw,catalog", "io.mshare.test": "trusted", "run.oci.hooks.stderr": "/dev/stderr"}'
line() { sed -n "s/^$1: //p" <<<"$out"; }

# Another container's region: secret-1 holds secret, trusted-2 cannot get it.
b=$(bundle secret '{"io.mshare.regions": "secret:rw", "io.mshare.test": "x"}' /bin/sleep 600)
crun run -d -b "$b" secret-1 >/dev/null 2>&1 </dev/null
b=$(bundle trusted2 "$ann" /bin/sh -c 'echo "secret: $(hook-probe get secret) $(hook-probe get --ro secret)"; echo "list: $(hook-probe list)"')
crun_run trusted-2 "$b"
show
if [ "$(registered)" = "secret-1 " ]; then ok "secret-1 is registered while it runs"; else not_ok "registered: '$(registered)'"; fi
if [ "$(line secret)" = "error EACCES error EACCES" ] && [[ $(line list) != *secret* ]]; then
	ok "another container cannot obtain secret-1's region, nor see it listed"
else
	not_ok "secret from trusted-2: '$(line secret)', list '$(line list)'"
fi
# A process of the container (crun exec joins its cgroup), as its root.
out=$(crun exec secret-1 /bin/hook-probe get secret 2>&1)
if [ "$out" = ok ]; then ok "secret-1 itself gets it (grant by ContainerId=secret-*)"; else not_ok "secret-1: $out"; fi
crun delete -f secret-1 >/dev/null 2>&1
wait_for 20 sh -c '[ -z "$(mshare-ctl --json containers | jq -r ".[].id")" ]'
if [ -z "$(registered)" ]; then ok "and it is unregistered once deleted"; else not_ok "still registered: $(registered)"; fi

# The installed example config.json for plain crun, as it is (with the
# test grant's annotation added).
b=$BUNDLES/example
rm -rf "$b" && mkdir -p "$b" && cp -a "$ROOTFS" "$b/rootfs"
jq '.annotations["io.mshare.test"] = "trusted"' /usr/share/mshare/examples/oci-config.json >"$b/config.json"
crun_run example-1 "$b"
show
if [ "$rc" = 0 ] && [[ $out == srw-rw-rw-*" /run/mshare/mshare.sock" ]] && [ -z "$(registered)" ]; then
	ok "the example config.json runs a container with its channel (read-only root, tmpfs /run)"
else
	not_ok "the example config.json: status $rc"
fi
