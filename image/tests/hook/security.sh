#!/bin/bash
# Who a container's channel serves, and where the hook may make it (issue
# 15). With a writable root file system and no tmpfs on /run, the channel
# is a file of the host's: any local user can reach it, and only the
# daemon's check of the peer's cgroup keeps it the container's. A read-only
# root or a read-only bind mount is made read-only by crun only after the
# createRuntime hooks, so the hook itself must not write there.
. "$(dirname "$0")/lib.sh"
ktap_plan "13"
fresh
make_rootfs
ann='{"io.mshare.regions": "pool:rw", "io.mshare.test": "trusted", "run.oci.hooks.stderr": "/dev/stderr"}'

# private_bundle NAME JQ-FILTER CMD...: a bundle with a root file system of
# its own (a copy), no tmpfs on /run, and JQ-FILTER applied to config.json.
private_bundle() {
	local name=$1 filter=$2 b
	shift 2
	b=$(bundle "$name" "$ann" "$@") || return 1
	cp -a "$ROOTFS" "$b/rootfs"
	jq --arg root "$b/rootfs" '.root.path = $root | .mounts |= map(select(.destination != "/run"))'" | $filter" \
		"$b/config.json" >"$b/config.new" && mv "$b/config.new" "$b/config.json" && echo "$b"
}

# probe_as WHO SOCKET: hook-probe get pool on SOCKET from the host, as WHO
# (root or nobody), outside the container's cgroup.
probe_as() {
	if [ "$1" = nobody ]; then
		MSHARE_SOCKET=$2 setpriv --reuid=65534 --regid=65534 --clear-groups "$TOOLS/hook-probe" get pool 2>&1
	else
		MSHARE_SOCKET=$2 "$TOOLS/hook-probe" get pool 2>&1
	fi
}

# A crun container on a writable root with its channel in it.
b=$(private_bundle sec-w . /bin/sleep 600)
chmod 0755 "$BUNDLES" "$b" "$b/rootfs"
# Detached, its output must not go to a pipe we wait on.
crun run -d -b "$b" sec-w >"$BUNDLES/sec-w.out" 2>&1 </dev/null
out=$(cat "$BUNDLES/sec-w.out")
sock=$b/rootfs/run/mshare/mshare.sock
if [ -S "$sock" ] && [ "$(stat -c %a "$sock")" = 666 ]; then
	ok "a crun container on a writable root: its channel is a file of the host's ($sock, 0666)"
else
	not_ok "no channel at $sock: $out"
fi
for who in nobody root; do
	r=$(probe_as "$who" "$sock")
	if [ "$r" = "error EACCES" ]; then
		ok "$who on the host reaches the channel and is refused (EACCES)"
	else
		not_ok "$who on the host asked the channel for pool: '$r'"
	fi
done
pid=$(crun state sec-w | jq .pid)
r=$(nsenter -t "$pid" -m -- /bin/hook-probe get pool 2>&1)
if [ "$r" = "error EACCES" ]; then
	ok "root in the container's mount namespace but not its cgroup is refused too"
else
	not_ok "nsenter -m: '$r'"
fi
r=$(crun exec sec-w /bin/hook-probe get pool 2>&1)
if [ "$r" = ok ]; then ok "crun exec in the container gets pool"; else not_ok "crun exec: '$r'"; fi
journalctl --sync 2>/dev/null
if journalctl -q -o cat -u "$UNIT" | grep -q "on the channel of container sec-w: it is not in the container's cgroup"; then
	ok "the daemon's journal names the refused outsiders"
else
	not_ok "no refusal in the journal of $UNIT"
	journalctl -q -o cat -u "$UNIT" | tail -n 5 | sed 's/^/# /'
fi
crun delete -f sec-w >/dev/null 2>&1

# root.readonly: nothing may be made in the image.
b=$(private_bundle sec-ro '.root.readonly = true' /bin/true)
crun_run sec-ro "$b"
show
if [ "$rc" != 0 ] && grep -q "mshare-oci-hook: container sec-ro: .*read-only root file system" <<<"$out" &&
	[ ! -e "$b/rootfs/run/mshare" ] && [ -z "$(registered)" ]; then
	ok "a read-only root: the container fails with the hook's message, nothing is made in its root"
else
	not_ok "read-only root: status $rc, $(ls -a "$b/rootfs/run" | tr '\n' ' ')"
fi

# A read-only bind mount of a host directory, with the channel asked there.
data=/tmp/hook-ro-data
rm -rf "$data" && mkdir -p "$data"
b=$(private_bundle sec-bind '.annotations["io.mshare.socket"] = "/data/mshare.sock"
	| .mounts += [{"destination": "/data", "type": "bind", "source": "'"$data"'", "options": ["rbind", "ro"]}]' /bin/true)
mkdir -p "$b/rootfs/data"
crun_run sec-bind "$b"
show
if [ "$rc" != 0 ] && grep -q "mshare-oci-hook: container sec-bind: .*read-only mount" <<<"$out" &&
	[ -z "$(ls -A "$data")" ] && [ -z "$(registered)" ]; then
	ok "a read-only bind mount: the container fails with the hook's message, the host directory stays empty"
else
	not_ok "read-only bind: status $rc, $data holds '$(ls -A "$data" | tr '\n' ' ')'"
fi

# A symlink on the way to the channel.
b=$(private_bundle sec-link '.annotations["io.mshare.socket"] = "/link/mshare.sock"' /bin/true)
ln -s /tmp "$b/rootfs/link"
crun_run sec-link "$b"
show
if [ "$rc" != 0 ] && grep -q "mshare-oci-hook: container sec-link: " <<<"$out" &&
	[ ! -e "$b/rootfs/tmp/mshare.sock" ] && [ ! -e /tmp/mshare.sock ]; then
	ok "a symlink on the channel's path: the container fails, no socket is made"
else
	not_ok "symlink: status $rc"
fi

# podman mounts no tmpfs on /run: its channel is in the --rootfs directory.
chmod 0755 "$ROOTFS"
timeout 300 podman run -d --name sec-p --network none --annotation io.mshare.regions=pool:rw \
	--annotation io.mshare.test=trusted --rootfs "$ROOTFS" /bin/sleep 600 >"$BUNDLES/sec-p.out" 2>&1 </dev/null
out=$(cat "$BUNDLES/sec-p.out")
r=$(probe_as nobody "$ROOTFS/run/mshare/mshare.sock")
if [ "$r" = "error EACCES" ]; then
	ok "nobody on the host reaches a podman container's channel and is refused"
else
	not_ok "nobody and the podman container's channel: '$r' ($out)"
fi
r=$(timeout 120 podman exec sec-p /bin/hook-probe get pool 2>&1)
if [ "$r" = ok ]; then ok "podman exec in the container gets pool"; else not_ok "podman exec: '$r'"; fi
timeout 120 podman rm -f -t 0 sec-p >/dev/null 2>&1

# A crun container in a user namespace of its own (its root is host uid
# 100000), with a tmpfs on /run; host root reaches its channel through
# /proc/PID/root and is refused.
b=$(SPEC=rootless bundle sec-u "$ann" /bin/sleep 600)
userns "$b"
crun run -d -b "$b" sec-u >"$BUNDLES/sec-u.out" 2>&1 </dev/null
pid=$(crun state sec-u | jq .pid)
r=$(crun exec sec-u /bin/hook-probe get pool 2>&1)
if [ "$r" = ok ]; then
	ok "a container in a user namespace gets pool (crun exec)"
else
	not_ok "user namespace, crun exec: '$r' ($(cat "$BUNDLES/sec-u.out"))"
fi
r=$(probe_as root "/proc/$pid/root/run/mshare/mshare.sock")
if [ "$r" = "error EACCES" ]; then
	ok "host root reaching its channel through /proc/$pid/root is refused"
else
	not_ok "host root on /proc/$pid/root: '$r'"
fi
crun delete -f sec-u >/dev/null 2>&1
