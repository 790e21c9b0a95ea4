#!/bin/sh
# crun runs a container from an OCI bundle whose root is a static busybox,
# with the cgroupfs and the systemd cgroup managers; podman is installed.
. "$(dirname "$0")/tap.sh"
ktap_plan "6"
check "crun is installed" crun --version
bundle=$(mktemp -d /tmp/crun-smoke.XXXXXX)
trap 'rm -rf "$bundle"' EXIT
mkdir -p "$bundle/rootfs/bin" "$bundle/rootfs/proc" "$bundle/rootfs/sys" "$bundle/rootfs/dev" "$bundle/rootfs/tmp"
cp /bin/busybox "$bundle/rootfs/bin/busybox"
ln -s busybox "$bundle/rootfs/bin/sh"
(cd "$bundle" && crun spec) || not_ok "crun spec"
# The default spec runs an interactive `sh` on a terminal; run a command
# that prints the container's PID (1 in its own PID namespace) and cgroup.
sed -i -e 's/"terminal": true/"terminal": false/' \
	-e 's|^\([[:space:]]*\)"sh"$|\1"/bin/sh", "-c", "echo pid=$$ cgroup=$(cat /proc/self/cgroup)"|' \
	"$bundle/config.json"
check "crun spec made a bundle that runs /bin/sh -c" grep -q '"/bin/sh", "-c"' "$bundle/config.json"
run() {
	out=$(cd "$bundle" && timeout 120 crun "$@" run "smoke-$$" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/# /'
	[ $rc = 0 ] && printf '%s\n' "$out" | grep -q '^pid=1 cgroup=0::/'
}
if run; then ok "crun run (cgroupfs manager)"; else not_ok "crun run (cgroupfs manager)"; fi
if run --systemd-cgroup; then ok "crun --systemd-cgroup run"; else not_ok "crun --systemd-cgroup run"; fi
check "no container left behind" sh -c '[ -z "$(crun list -q)" ]'
check "podman is installed" podman --version
