# Shared by the in-guest tests of mshare-oci-hook (hook/*.sh); sourced.
# shellcheck disable=SC2034 # used by the scripts that source this
# They run as root under mshare-guest-tests.service in the booted image,
# against the installed hook (/usr/libexec/mshare/mshare-oci-hook, its
# hooks.d file), the installed daemon and units, crun and podman, with the
# static test tools of `make -C crun-hook install-tests` next to them (in
# crun-hook/): hook-probe (the workload's side) and region-probe.
# shellcheck shell=bash
. "$(dirname "${BASH_SOURCE[0]}")/../owner/lib.sh"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

HOOK=/usr/libexec/mshare/mshare-oci-hook
HOOKS_D=/usr/share/containers/oci/hooks.d/mshare.json
TOOLS=$here/crun-hook
ROOTFS=/tmp/hook-rootfs
BUNDLES=/tmp/hook-bundles
POOL=$((64 * MiB))
CATALOG=$((16 * MiB))

# The test configuration (it replaces the owner tests' test.conf): pool is
# granted read-write to containers with io.mshare.test=trusted and read-only
# to those with io.mshare.test=x, catalog read-only to any container with
# io.mshare.test, secret only to container ids secret-*.
write_config() {
	cat >"$CONF_DIR/test.conf" <<'CONF'
[Region]
Name=pool
Size=64M
Backing=anonymous
Protection=rw
Populate=yes

[Region]
Name=catalog
Size=16M
Backing=memfd
Populate=yes

[Region]
Name=secret
Size=16M
Backing=anonymous
Populate=yes

[Grant]
Region=pool
Mode=rw
Annotation=io.mshare.test=trusted

[Grant]
Region=pool
Mode=ro
Annotation=io.mshare.test=x

[Grant]
Region=catalog
Mode=ro
Annotation=io.mshare.test=*

[Grant]
Region=secret
Mode=rw
ContainerId=secret-*
CONF
}

# One root file system for every test container: a static busybox and the
# static test tools. Each container gets a tmpfs of its own on /run, so each
# has its own channel at /run/mshare/mshare.sock.
make_rootfs() {
	[ -x "$ROOTFS/bin/hook-probe" ] && return
	# Every mount point exists: a container whose root is host uid 100000
	# cannot make one in this root file system, which host root owns.
	mkdir -p "$ROOTFS"/{bin,proc,sys/fs/cgroup,dev,tmp,run,etc}
	cp /bin/busybox "$ROOTFS/bin/busybox"
	for c in sh ls stat cat true sleep grep id; do ln -sf busybox "$ROOTFS/bin/$c"; done
	cp "$TOOLS/hook-probe" "$TOOLS/region-probe" "$ROOTFS/bin/"
}

# bundle NAME ANNOTATIONS CMD...: an OCI bundle $BUNDLES/NAME whose container
# runs CMD, with mshare-oci-hook as its createRuntime and poststop hooks
# and the annotations given (a JSON object). Prints the bundle's path.
# With SPEC=rootless the configuration is `crun spec --rootless`'s, which
# has a user namespace, else `crun spec`'s.
bundle() {
	local b=$BUNDLES/$1 ann=$2 base=$BUNDLES/spec-${SPEC:-default}.json args
	shift 2
	make_rootfs
	rm -rf "$b"
	mkdir -p "$b"
	if [ ! -f "$base" ]; then
		(cd "$b" && crun spec ${SPEC:+--$SPEC} && mv config.json "$base") || return 1
	fi
	# The command as a JSON array, one --arg at a time: jq 1.6 would take a
	# "-c" among positional arguments for its own option.
	args=$(for a in "$@"; do jq -n --arg a "$a" '$a'; done | jq -s .)
	jq --arg root "$ROOTFS" --arg hook "$HOOK" --argjson ann "$ann" --argjson args "$args" '
	  .process.terminal = false
	| .process.args = $args
	| .root = {"path": $root, "readonly": false}
	| .mounts += [{"destination": "/run", "type": "tmpfs", "source": "tmpfs",
	               "options": ["nosuid", "nodev", "mode=755", "size=1024k"]}]
	| .annotations = $ann
	| .hooks = {"createRuntime": [{"path": $hook, "args": ["mshare-oci-hook", "createRuntime"]}],
	            "poststop": [{"path": $hook, "args": ["mshare-oci-hook", "poststop"]}]}
	' "$base" >"$b/config.json" || return 1
	echo "$b"
}

# userns BUNDLE: the container (made with SPEC=rootless, which has
# a user namespace) maps its root to host uid and gid 100000, as a rootful
# engine with user namespaces does.
userns() {
	jq '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
	  | .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
	  | .process.user = {"uid": 0, "gid": 0}
	  | .mounts |= map(select(.destination != "/sys" and .destination != "/dev/mqueue"))' \
		"$1/config.json" >"$1/config.json.new" && mv "$1/config.json.new" "$1/config.json"
}

# crun_run ID BUNDLE [crun options...]: runs the container in the
# foreground; sets out (its output and crun's) and rc.
crun_run() {
	local id=$1 b=$2
	shift 2
	out=$(timeout 120 crun "$@" run -b "$b" "$id" 2>&1 </dev/null)
	rc=$?
}

# show: the last output as TAP comments.
show() { [ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/# /'; }

# registered: the ids of the containers the daemon has registered, sorted,
# on one line.
registered() { mshare-ctl --json containers | jq -r '.[].id' | sort | tr '\n' ' '; }

# journal_has ID TEXT: the journal has an error from the hook for
# container ID saying TEXT.
journal_has() {
	journalctl --sync 2>/dev/null
	journalctl -q -o cat SYSLOG_IDENTIFIER=mshare-oci-hook CONTAINER_ID="$1" PRIORITY=3 |
		grep -qF -- "$2"
}

# owner_state: the daemon's descriptors and resident memory (kB).
owner_fds() { ls "/proc/$(main_pid)/fd" | wc -l; }
owner_rss() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$(main_pid)/status"; }

# fails ID ANNOTATIONS TEXT DESCRIPTION: the container fails to start, crun
# prints TEXT (the hook's message) and "error executing hook", and the journal
# has TEXT for the container. Three checks.
fails() {
	local id=$1 ann=$2 text=$3 desc=$4 b
	b=$(bundle "$id" "$ann" /bin/true)
	crun_run "$id" "$b"
	[ -z "${AFTER_RUN:-}" ] || $AFTER_RUN # a command to run right after crun
	if [ "$rc" != 0 ] && grep -qF -- "mshare-oci-hook: container $id: $text" <<<"$out" &&
		grep -q 'error executing hook' <<<"$out"; then
		ok "$desc: the container fails, crun shows the hook's message"
	else
		not_ok "$desc: status $rc, expected a failure with 'mshare-oci-hook: container $id: $text'"
	fi
	show
	if journal_has "$id" "container $id: $text"; then
		ok "$desc: the message is in the journal (SYSLOG_IDENTIFIER=mshare-oci-hook CONTAINER_ID=$id PRIORITY=3)"
	else
		not_ok "$desc: no such message in the journal for $id"
		journalctl -q -o short-monotonic SYSLOG_IDENTIFIER=mshare-oci-hook | tail -n 5 | sed 's/^/# /'
	fi
	if ! crun list -q | grep -qx "$id" && [ -z "$(registered 2>/dev/null)" ]; then
		ok "$desc: no container is left behind and nothing is registered"
	else
		not_ok "$desc: left behind: crun list '$(crun list -q | tr '\n' ' ')', registered '$(registered 2>/dev/null)'"
	fi
}

# fresh: the daemon on the test configuration, no container left over.
fresh() {
	for id in $(crun list -q 2>/dev/null); do crun delete -f "$id" >/dev/null 2>&1; done
	fresh_owner || echo "# systemctl start $UNIT failed"
	mkdir -p "$BUNDLES"
}

# prun [GLOBAL OPTIONS] -- [RUN OPTIONS] -- CMD...: podman run of a container
# whose root is $ROOTFS (--rootfs makes the first argument after the
# options a root file system instead of an image); sets out and rc.
# podman's default seccomp profile stays on: it answers the mshare calls
# with ENOSYS, and libmshare's mshare_attach() makes the window with mmap().
prun() {
	local global=() opts=()
	while [ "$1" != -- ]; do global+=("$1"); shift; done
	shift
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	out=$(timeout 300 podman "${global[@]}" run --rm --network none \
		"${opts[@]}" --rootfs "$ROOTFS" "$@" 2>&1 </dev/null)
	rc=$?
}
