#!/bin/bash
# mshare-oci-hook as a runtime runs it, on the host, against mshare-owner
# itself on its fake kernel (mshare-helper's tests/mshare-owner-fake):
# options, a container that asks for nothing, bad annotations (and control
# characters in them, escaped), a channel where the container cannot write
# (a read-only root, a read-only bind mount), no daemon, a silent daemon
# (stopped: the deadline), refusals (which leave no socket behind), a
# registration (what the daemon lists of it, the channel in the container's
# root file system served by the daemon) and poststop. What the hook sent is
# told by what the daemon did with it: mshare-ctl containers, the channel's
# answers and the daemon's log, not by a stand-in's record of requests.
# Needs root (the hook makes the channel with the container root's ids) and
# cgroup2 (the daemon registers only a container in a cgroup of its own).
# Usage: test-hook.sh BUILD/mshare-oci-hook MSHARE-OWNER-FAKE MSHARE-CTL
hook=$(realpath "$1")
owner=$(realpath "$2")
ctl=$(realpath "$3")
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../../common/ktap.sh
. "$here/../../common/ktap.sh"

if [ "$(id -u)" != 0 ]; then
	not_ok "test-hook.sh needs root"
	ktap_finish
	exit 1
fi
cg_root=$(findmnt -n -t cgroup2 -o TARGET | head -n 1)
if [ -z "$cg_root" ]; then
	not_ok "test-hook.sh needs a cgroup2 file system mounted (mshare-owner tells containers by their cgroup)"
	ktap_finish
	exit 1
fi
tmp=$(mktemp -d /tmp/test-hook.XXXXXX)
# The poststop of a user that is not root must reach the daemon's socket.
chmod 0755 "$tmp"
owner_pid=
sleeper=
ns_sleeper=
# The "container"'s cgroup, below ours: the daemon refuses a container
# that shares the hook's (or its own) cgroup, as test-daemon.py shows.
cg=$cg_root$(sed -n 's/^0:://p' /proc/self/cgroup)
cg=${cg%/}/mshare-hook-test-$$
cleanup() {
	[ -z "$owner_pid" ] || { kill -CONT "$owner_pid"; kill "$owner_pid"; } 2>/dev/null
	[ -z "$sleeper" ] || kill "$sleeper" 2>/dev/null
	[ -z "$ns_sleeper" ] || kill "$ns_sleeper" 2>/dev/null
	wait 2>/dev/null
	# The cgroup can go once the kernel has seen its processes leave.
	for _ in $(seq 50); do [ ! -d "$cg" ] || rmdir "$cg" 2>/dev/null && break; sleep 0.1; done
	rm -rf "$tmp"
}
trap cleanup EXIT
if ! mkdir "$cg"; then
	not_ok "cannot make the container's cgroup $cg"
	ktap_finish
	exit 1
fi

# "${in_cgroup[@]}" COMMAND...: COMMAND in $cg, with the pid of the shell
# that moved itself there (a command, not a function: in the background
# its pid is $!).
in_cgroup=(sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg")

# The "container": a process of ours in a cgroup of its own, a bundle with
# config.json and a root.
"${in_cgroup[@]}" sleep 600 &
sleeper=$!
bundle=$tmp/bundle
mkdir -p "$bundle/rootfs"
echo '{"ociVersion":"1.0.2","root":{"path":"rootfs"}}' >"$bundle/config.json"

# The daemon's configuration: pool read-write only for container t1 named
# k8s_db_* with annotation x=y=z (so that a registration that gets it shows
# the hook sent the container's name and annotations), read-only for t1 and
# t2; catalog read-only for any t*; nosuch is not configured.
mkdir "$tmp/conf"
cat >"$tmp/conf/test.conf" <<'CONF'
[Region]
Name=pool
Size=4M

[Region]
Name=catalog
Size=2M

[Grant]
Region=pool
Mode=rw
ContainerId=t1
Container=k8s_db_*
Annotation=x=y=z

[Grant]
Region=pool
Mode=ro
ContainerId=t1 t2

[Grant]
Region=catalog
Mode=ro
ContainerId=t*
CONF

# start_owner: mshare-owner on its fake at $tmp/owner.sock, logging to
# $tmp/owner.log at debug level (a line for each connection and hello).
start_owner() {
	stop_owner
	"$owner" --config-dir "$tmp/conf" --socket "$tmp/owner.sock" --log-level debug 2>>"$tmp/owner.log" &
	owner_pid=$!
	for _ in $(seq 100); do
		"$ctl" --socket "$tmp/owner.sock" containers >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	not_ok "mshare-owner (fake) did not start: $(tail -n 3 "$tmp/owner.log")"
	ktap_finish
	exit 1
}
# stop_owner [SIGNAL]: SIGKILL leaves its socket behind, unanswered.
stop_owner() {
	[ -z "$owner_pid" ] || { kill -CONT "$owner_pid"; kill "-${1:-TERM}" "$owner_pid"; wait "$owner_pid"; } 2>/dev/null
	owner_pid=
}
# containers JQ: jq's compact JSON of JQ over what the daemon lists as
# registered.
containers() {
	"$ctl" --socket "$tmp/owner.sock" --json containers | jq -c "$1"
}
# mark, then hook_connections: the connections the hook made to the daemon
# since the mark, as the daemon logged them.
mark() { log_mark=$(wc -l <"$tmp/owner.log"); }
since_mark() { tail -n "+$((log_mark + 1))" "$tmp/owner.log"; }
hook_connections() { since_mark | grep -c 'Connection from pid [0-9]* (mshare-oci-hook)'; }

# state ANNOTATIONS-JSON [PID]: an OCI state as crun passes it.
state() {
	printf '{"ociVersion":"1.0","id":"t1","pid":%s,"root":"rootfs","bundle":"%s","status":"created","annotations":%s}' \
		"${2:-$sleeper}" "$bundle" "$1"
}

# [as=COMMAND] run STDIN ARGS...: runs the hook (under COMMAND); sets rc,
# out (stdout and stderr) and tenths (elapsed, in tenths of a second).
run() {
	local input=$1 start end
	shift
	start=$(date +%s%N)
	out=$($as "$hook" "$@" <<<"$input" 2>&1)
	rc=$?
	end=$(date +%s%N)
	tenths=$(((end - start) / 100000000))
}

# expect DESCRIPTION STATUS TEXT: ok if the last run exited with STATUS and
# printed TEXT (or nothing, for an empty TEXT).
expect() {
	local desc=$1 status=$2 text=$3
	if [ "$rc" = "$status" ] && { [ -z "$text" ] && [ -z "$out" ] || [ -n "$text" ] && grep -qF -- "$text" <<<"$out"; }; then
		ok "$desc"
	else
		not_ok "$desc (status $rc, expected $status with '$text')"
	fi
	[ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/# /'
}

# ---- options ----
run "" --help
expect "--help describes the stages" 0 "createRuntime"
run "" --version
expect "--version" 0 "mshare-oci-hook 0.1.0"
run "" createRuntime poststop
expect "two stages are a usage error" 2 "too many arguments"
run "" prestart
expect "an unknown stage is a usage error" 2 "unknown stage 'prestart'"
run "" --timeout=0 createRuntime
expect "--timeout=0 is refused" 2 "--timeout=0: not a number of seconds"
run "" --timeout=5s createRuntime
expect "--timeout=5s is refused" 2 "--timeout=5s"
run "" --socket=relative.sock createRuntime
expect "a relative --socket is refused" 2 "not an absolute path"

# ---- input ----
run "not json" createRuntime
expect "a state that is not JSON fails the container" 1 "mshare-oci-hook: unknown container: the container state is not JSON"
run '{"id":"t1","pid":1}' createRuntime
expect "a state without bundle fails the container" 1 "no \"bundle\""

# ---- no annotation: nothing happens ----
start_owner
mark
run "$(state '{"run.oci.hooks.stderr":"/dev/stderr"}')" --socket="$tmp/owner.sock" createRuntime
expect "a container without io.mshare.regions: exit 0, silent" 0 ""
if [ ! -e "$bundle/rootfs/run" ] && [ "$(hook_connections)" = 0 ]; then
	ok "and nothing was made or asked for"
else
	not_ok "something happened for a container without the annotation: $(ls -R "$bundle/rootfs") $(since_mark)"
fi
mark
run "$(state '{}')" --socket="$tmp/owner.sock" poststop
expect "poststop of a container without the annotation: exit 0, silent" 0 ""
if [ "$(hook_connections)" = 0 ]; then ok "and the daemon was not asked"; else not_ok "poststop asked the daemon: $(since_mark)"; fi

# ---- a pod's sandbox (pause container) gets the pod's annotations: nothing happens ----
mark
run "$(state '{"io.mshare.regions":"pool","io.kubernetes.cri-o.ContainerType":"sandbox"}')" \
	--socket="$tmp/owner.sock" createRuntime
expect "a Kubernetes pod's sandbox with the pod's io.mshare.regions: exit 0, silent" 0 ""
run "$(state '{"io.mshare.regions":"pool","io.kubernetes.cri.container-type":"sandbox"}')" \
	--socket="$tmp/owner.sock" poststop
expect "and its poststop: exit 0, silent" 0 ""
if [ ! -e "$bundle/rootfs/run" ] && [ "$(hook_connections)" = 0 ]; then
	ok "no channel was made for the sandbox and the daemon was not asked"
else
	not_ok "the sandbox was handled: $(since_mark)"
fi

# ---- bad annotations ----
mark
run "$(state '{"io.mshare.regions":"pool:wr"}')" --socket="$tmp/owner.sock" createRuntime
expect "a bad mode fails the container, naming what is wrong" 1 \
	"mshare-oci-hook: container t1: bad annotation io.mshare.regions=\"pool:wr\": region 'pool': mode 'wr' is neither 'ro' nor 'rw'"
run "$(state '{"io.mshare.regions":"pool,pool"}')" --socket="$tmp/owner.sock" createRuntime
expect "a region named twice fails the container" 1 "region 'pool' is named twice"
run "$(state '{"io.mshare.regions":"../etc"}')" --socket="$tmp/owner.sock" createRuntime
expect "a bad region name fails the container" 1 "'../etc' is not a region name"
run "$(state '{"io.mshare.regions":""}')" --socket="$tmp/owner.sock" createRuntime
expect "an empty annotation fails the container" 1 "no region is named"
run "$(state '{"io.mshare.regions":"pool","io.mshare.socket":"run/x.sock"}')" --socket="$tmp/owner.sock" createRuntime
expect "a relative io.mshare.socket fails the container" 1 "bad annotation io.mshare.socket=\"run/x.sock\""
if [ ! -e "$bundle/rootfs/run" ] && [ "$(hook_connections)" = 0 ]; then
	ok "no bad annotation made anything or reached the daemon"
else
	not_ok "a bad annotation got through: $(since_mark)"
fi
run "$(state '{"io.mshare.regions":"pool"}' 0)" --socket="$tmp/owner.sock" createRuntime
expect "createRuntime without a process id fails the container" 1 "has no process id"

# An annotation that tries to forge a log line, and to colour the terminal.
run "$(state '{"io.mshare.regions":"pool:wr\nmshare-oci-hook: container t0: \u001b[32mall is well"}')" \
	--socket="$tmp/owner.sock" createRuntime
if [ "$rc" = 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] &&
	grep -qF 'io.mshare.regions="pool:wr\nmshare-oci-hook: container t0: \x1b[32mall is well"' <<<"$out" &&
	! grep -q $'\x1b' <<<"$out"; then
	ok "control characters in an annotation are escaped: one line, with \\n and \\x1b"
else
	not_ok "an annotation with a newline and ESC: status $rc, $(printf '%s' "$out" | od -c | head -n 20)"
fi
printf '%s\n' "$out" | sed 's/^/# /'

# ---- where the channel may go: only where the container can write ----
mark
echo '{"ociVersion":"1.0.2","root":{"path":"rootfs","readonly":true}}' >"$bundle/config.json"
run "$(state '{"io.mshare.regions":"pool"}')" --socket="$tmp/owner.sock" createRuntime
expect "a read-only root (root.readonly) without a tmpfs on /run fails the container" 1 \
	"cannot create the channel /run/mshare/mshare.sock in the container: the channel's directory /run/mshare is on the read-only root file system (config.json has root.readonly)"
if [ ! -e "$bundle/rootfs/run" ] && [ "$(hook_connections)" = 0 ]; then
	ok "and nothing was made in the root file system, nor asked of the daemon"
else
	not_ok "the read-only root: $(ls -R "$bundle/rootfs") $(since_mark)"
fi

# A host directory bound on /data, read-only from config.json: the runtime
# makes it read-only after createRuntime, so it is writable yet; the
# container's process has the bind mount in a mount namespace of its own
# (and is in the container's cgroup).
mkdir -p "$tmp/host-data" "$bundle/rootfs/data"
"${in_cgroup[@]}" unshare --mount --propagation private \
	sh -c 'mount --bind "$1" "$2" && exec sleep 600' sh "$tmp/host-data" "$bundle/rootfs/data" &
ns_sleeper=$!
for _ in $(seq 50); do
	[ "$(readlink "/proc/$ns_sleeper/exe" 2>/dev/null)" = "$(readlink -f "$(command -v sleep)")" ] && break
	sleep 0.1
done
printf '{"ociVersion":"1.0.2","root":{"path":"rootfs"},"mounts":[{"destination":"/data","type":"bind","source":"%s","options":["rbind","ro"]}]}\n' \
	"$tmp/host-data" >"$bundle/config.json"
run "$(state '{"io.mshare.regions":"pool","io.mshare.socket":"/data/mshare.sock"}' "$ns_sleeper")" \
	--socket="$tmp/owner.sock" createRuntime
expect "io.mshare.socket on a read-only bind mount fails the container" 1 \
	"the channel's directory /data is on a read-only mount (mount /data has \"ro\"); point io.mshare.socket at a writable place such as /run/mshare/mshare.sock"
if [ -z "$(ls -A "$tmp/host-data")" ] && [ "$(hook_connections)" = 0 ]; then
	ok "and the host directory behind it is untouched"
else
	not_ok "the host directory: $(ls -la "$tmp/host-data")"
fi
sed -i 's/"rbind","ro"/"rbind","rw"/' "$bundle/config.json"
run "$(state '{"io.mshare.regions":"pool","io.mshare.socket":"/data/mshare.sock"}' "$ns_sleeper")" \
	--socket="$tmp/owner.sock" createRuntime
expect "a read-write bind mount there is fine" 0 ""
if [ -S "$tmp/host-data/mshare.sock" ]; then
	ok "(the channel is on the bind mount, in the host directory)"
else
	not_ok "no channel through the bind mount: $(ls -la "$tmp/host-data")"
fi
# Its registration goes, for the registrations of t1 below.
run "$(state '{"io.mshare.regions":"pool"}' 0)" --socket="$tmp/owner.sock" poststop
kill "$ns_sleeper"
wait "$ns_sleeper" 2>/dev/null
ns_sleeper=
rm -rf "$tmp/host-data" "$bundle/rootfs/data"
echo '{"ociVersion":"1.0.2","root":{"path":"rootfs"}}' >"$bundle/config.json"

# ---- no daemon ----
# Killed, it leaves its socket behind without a listener.
stop_owner KILL
run "$(state '{"io.mshare.regions":"pool:rw"}')" --socket="$tmp/owner.sock" createRuntime
expect "a daemon that is not running (no listener) fails the container" 1 \
	"mshare-oci-hook: container t1: mshare-owner is not running: cannot connect to $tmp/owner.sock: Connection refused"
run "$(state '{"io.mshare.regions":"pool:rw"}')" --socket="$tmp/none.sock" createRuntime
expect "a daemon that is not running (no socket) fails the container" 1 \
	"mshare-owner is not running: cannot connect to $tmp/none.sock: No such file or directory"
if [ ! -e "$bundle/rootfs/run/mshare/mshare.sock" ]; then
	ok "no channel is left when the daemon cannot be reached"
else
	not_ok "a channel was left behind: $(ls -la "$bundle/rootfs/run/mshare")"
fi
run "$(state '{"io.mshare.regions":"pool:rw"}')" --socket="$tmp/none.sock" poststop
expect "poststop without a daemon: exit 0 (nothing is registered)" 0 ""

# ---- a daemon that does not answer ----
# Stopped: connections wait in its backlog, unanswered.
start_owner
kill -STOP "$owner_pid"
run "$(state '{"io.mshare.regions":"pool:rw"}')" --socket="$tmp/owner.sock" --timeout=0.5 createRuntime
expect "a daemon that does not answer fails the container" 1 \
	"mshare-oci-hook: container t1: mshare-owner did not answer within 0.5 s"
if [ "$tenths" -ge 5 ] && [ "$tenths" -le 20 ]; then
	ok "after the deadline of 0.5 s ($tenths tenths of a second)"
else
	not_ok "the hook gave up after $tenths tenths of a second, expected 0.5 s"
fi
run "$(state '{"io.mshare.regions":"pool:rw"}')" --socket="$tmp/owner.sock" --timeout=0.3 poststop
expect "poststop with a daemon that does not answer fails" 1 "did not answer within 0.3 s"
kill -CONT "$owner_pid"

# ---- refusals ----
# pool read-write is for t1 with annotation x=y=z only. The daemon refuses
# a register without its two descriptors (EBADMSG) before it looks at the
# grants: EACCES is the answer to a register that had them.
rm -rf "$bundle/rootfs/run"
run "$(state '{"io.mshare.regions":"pool:rw"}')" --socket="$tmp/owner.sock" createRuntime
expect "a refused grant fails the container with the daemon's reason" 1 \
	"mshare-oci-hook: container t1: mshare-owner refused the registration: region 'pool' is not granted read-write to container t1 (only read-only) (EACCES)"
if [ -d "$bundle/rootfs/run/mshare" ] && [ ! -e "$bundle/rootfs/run/mshare/mshare.sock" ]; then
	ok "the refused channel's socket is removed from the container (its directory stays)"
else
	not_ok "after the refusal: $(ls -la "$bundle/rootfs/run/mshare" 2>&1)"
fi
run "$(state '{"io.mshare.regions":"nosuch"}')" --socket="$tmp/owner.sock" createRuntime
expect "an unknown region fails the container" 1 "refused the registration: no region 'nosuch' is configured (ENOENT)"
run "$(state '{"io.mshare.regions":"nosuch"}')" --socket="$tmp/owner.sock" poststop
expect "poststop: 'not registered' (ENOENT) is fine" 0 ""
# A poststop the daemon refuses: one that is not root's.
as="setpriv --reuid=65534 --regid=65534 --clear-groups" \
	run "$(state '{"io.mshare.regions":"pool"}')" --socket="$tmp/owner.sock" poststop
expect "poststop: another refusal is reported" 1 "mshare-owner refused the unregistration: only root may unregister a container (EPERM)"

# ---- a registration ----
rm -rf "$bundle/rootfs/run"
ann='{"io.mshare.regions":" pool:rw , catalog","io.kubernetes.cri-o.Name":"k8s_db_web-1_prod_0f3c_0","x":"y=z"}'
mark
run "$(state "$ann")" --socket="$tmp/owner.sock" createRuntime
expect "a granted container starts: exit 0, silent" 0 ""
# pool read-write is granted to a container named k8s_db_* with annotation
# x=y=z only: the daemon matched the name and annotations the hook sent.
t1='{"id":"t1","name":"k8s_db_web-1_prod_0f3c_0","regions":[{"region":"pool","mode":"rw"},{"region":"catalog","mode":"ro"}]}'
if [ "$(containers '.[] | select(.id == "t1") | {id, name, regions}')" = "$(jq -c . <<<"$t1")" ]; then
	ok "register names the container, its annotations and the regions with their modes"
else
	not_ok "registered: $(containers .)"
fi
# The daemon refuses a register without a listening AF_UNIX SOCK_SEQPACKET
# socket and a pidfd (test-daemon.py): registered, it names the process.
if [ "$(containers '[.[] | select(.id == "t1") | .pid]')" = "[$sleeper]" ]; then
	ok "with the two descriptors: the channel's listening socket and a pidfd of the container's process"
else
	not_ok "the process registered: $(containers .), expected pid $sleeper"
fi
if [ "$(hook_connections)" = 1 ] &&
	[ "$(since_mark | grep -c 'Hello from pid [0-9]* (mshare-oci-hook), uid 0, client "mshare-oci-hook 0.1.0"')" = 1 ] &&
	[ "$(since_mark | grep -c 'Container t1 (k8s_db_web-1_prod_0f3c_0), pid [0-9]*, registered by pid [0-9]* (mshare-oci-hook) for 2 regions')" = 1 ]; then
	ok "one connection: hello, then register"
else
	not_ok "unexpected connections: $(since_mark)"
fi
sock=$bundle/rootfs/run/mshare/mshare.sock
if [ -S "$sock" ] && [ "$(stat -c %a "$sock")" = 666 ] && [ "$(stat -c %a "${sock%/*}")" = 755 ]; then
	ok "the channel is at /run/mshare/mshare.sock in the container's root (0666, directory 0755)"
else
	not_ok "no channel at $sock: $(ls -la "${sock%/*}" 2>&1)"
fi
# A process of the container (its cgroup) on the channel: the daemon
# answers as the container's, with the regions it was registered for.
listed=$("${in_cgroup[@]}" "$ctl" --socket "$sock" --json list 2>&1)
if [ "$(jq -c '[.[].name] | sort' <<<"$listed" 2>/dev/null)" = '["catalog","pool"]' ]; then
	ok "a client of the channel reaches the daemon, which holds its listening socket"
else
	not_ok "list on the channel: $listed"
fi

# io.mshare.socket, and annotations from config.json when the state has none
echo '{"ociVersion":"1.0.2","root":{"path":"rootfs"},"annotations":{"io.mshare.regions":"pool","io.mshare.socket":"/var/x/ch.sock"}}' \
	>"$bundle/config.json"
run "{\"id\":\"t2\",\"pid\":$sleeper,\"bundle\":\"$bundle\"}" --socket="$tmp/owner.sock" createRuntime
expect "annotations come from config.json when the state has none" 0 ""
if [ -S "$bundle/rootfs/var/x/ch.sock" ] &&
	[ "$(containers '.[] | select(.id == "t2") | .regions')" = '[{"region":"pool","mode":"ro"}]' ]; then
	ok "io.mshare.socket puts the channel elsewhere: /var/x/ch.sock"
else
	not_ok "io.mshare.socket: $(ls -R "$bundle/rootfs" 2>&1 | tr '\n' ' ') $(containers .)"
fi

# poststop
run "$(state '{"io.mshare.regions":"pool"}' 0)" --socket="$tmp/owner.sock" poststop
expect "poststop: exit 0" 0 ""
if [ "$(containers '[.[].id]')" = '["t2"]' ]; then
	ok "poststop sends unregister with the container's id"
else
	not_ok "registered after the poststop of t1: $(containers .)"
fi

# no stage argument: the status tells it
rm -rf "$bundle/rootfs/run" "$bundle/rootfs/var"
echo '{"ociVersion":"1.0.2","root":{"path":"rootfs"}}' >"$bundle/config.json"
run "$(state '{"io.mshare.regions":"catalog"}' | sed 's/"t1"/"t3"/')" --socket="$tmp/owner.sock"
expect "without a stage argument, status \"created\" is createRuntime" 0 ""
if [ "$(containers '.[] | select(.id == "t3") | .regions')" = '[{"region":"catalog","mode":"ro"}]' ] &&
	[ -S "$bundle/rootfs/run/mshare/mshare.sock" ]; then
	ok "t3 was registered and its channel made"
else
	not_ok "t3 was not registered: $(containers .)"
fi
run "$(state '{"io.mshare.regions":"catalog"}' 0 | sed -e 's/"t1"/"t3"/' -e 's/"created"/"stopped"/')" --socket="$tmp/owner.sock"
expect "without a stage argument, status \"stopped\" is poststop" 0 ""
if [ "$(containers '[.[].id]')" = '["t2"]' ]; then
	ok "t3 was unregistered"
else
	not_ok "t3 was not unregistered: $(containers .)"
fi
run "$(state '{"io.mshare.regions":"catalog"}' | sed 's/"created"/"running"/')" --socket="$tmp/owner.sock"
expect "without a stage argument, status \"running\" is an error" 1 \
	"no stage given, and the state's status \"running\" does not tell it"

# the process is gone
kill "$sleeper"
wait "$sleeper" 2>/dev/null
dead=$sleeper
sleeper=
run "$(state '{"io.mshare.regions":"pool"}' "$dead")" --socket="$tmp/owner.sock" createRuntime
expect "a container process that is gone fails the container" 1 "cannot open a pidfd of the container's process $dead: No such process"
ktap_finish
