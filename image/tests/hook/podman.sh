#!/bin/bash
# podman runs the hook from the installed hooks.d file when a container has
# io.mshare.regions, and not otherwise. The containers keep podman's default
# seccomp profile, which answers the mshare calls with ENOSYS. podman 4.3 with crun, --rootfs, no
# network. podman mounts no tmpfs on /run: the channel is made in the root
# file system, here the --rootfs directory itself, where it stays after the
# container (no longer served: ECONNREFUSED; the hook replaces it for the
# next container that asks).
. "$(dirname "$0")/lib.sh"
ktap_plan "4"
fresh
make_rootfs
prun -- --annotation io.mshare.regions=pool:rw --annotation io.mshare.test=trusted -- \
	/bin/hook-probe get pool /bin/region-probe --bytes=$POOL write 3
show
if [ "$rc" = 0 ] && [ "$(field pages "$out")" = 16384 ]; then
	ok "podman run with io.mshare.regions=pool:rw: the hook from hooks.d gave the container pool"
else
	not_ok "podman run with the annotation: status $rc"
fi

prun -- -- /bin/hook-probe get pool
show
if [ "$rc" = 1 ] && { [ "$out" = "error ENOENT" ] || [ "$out" = "error ECONNREFUSED" ]; }; then
	ok "podman run without the annotation: no hook, nothing serves it ($out)"
else
	not_ok "podman run without the annotation: status $rc"
fi
if [ -z "$(registered)" ]; then ok "nothing is registered"; else not_ok "registered: $(registered)"; fi

# The first container's window came through libmshare's mmap() stand-in
# only if podman's default seccomp filter was on (mode 2).
prun -- -- /bin/grep Seccomp: /proc/self/status
show
if [ "$rc" = 0 ] && [ "$(tr -d '[:space:]' <<<"$out")" = Seccomp:2 ]; then
	ok "podman's containers run under its default seccomp filter (Seccomp: 2)"
else
	not_ok "no seccomp filter in a podman container: status $rc, '$out'"
fi

