#!/bin/bash
# mshare-oci-hook as a runtime runs it, on the host, against stand-ins for
# mshare-owner (tests/fake-owner.py): options, a container that asks for
# nothing, bad annotations (and control characters in them, escaped), a
# channel where the container cannot write (a read-only root, a read-only
# bind mount), no daemon, a silent daemon (the deadline), a refusal (which
# leaves no socket behind), a registration (the request, the two
# descriptors, the channel in the container's root file system reaching the
# daemon) and poststop.
# Needs root (the hook makes the channel with the container root's ids).
# Usage: test-hook.sh BUILD/mshare-oci-hook
hook=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
fake=$here/fake-owner.py
# shellcheck source-path=SCRIPTDIR source=../../common/ktap.sh
. "$here/../../common/ktap.sh"

if [ "$(id -u)" != 0 ]; then
	not_ok "test-hook.sh needs root"
	ktap_finish
	exit 1
fi
tmp=$(mktemp -d /tmp/test-hook.XXXXXX)
fake_pid=
sleeper=
ns_sleeper=
cleanup() {
	[ -z "$fake_pid" ] || kill "$fake_pid" 2>/dev/null
	[ -z "$sleeper" ] || kill "$sleeper" 2>/dev/null
	[ -z "$ns_sleeper" ] || kill "$ns_sleeper" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# The "container": a process of ours, a bundle with config.json and a root.
sleep 600 &
sleeper=$!
bundle=$tmp/bundle
mkdir -p "$bundle/rootfs"
echo '{"ociVersion":"1.0.2","root":{"path":"rootfs"}}' >"$bundle/config.json"

# state ANNOTATIONS-JSON [PID]: an OCI state as crun passes it.
state() {
	printf '{"ociVersion":"1.0","id":"t1","pid":%s,"root":"rootfs","bundle":"%s","status":"created","annotations":%s}' \
		"${2:-$sleeper}" "$bundle" "$1"
}

# run NAME STDIN ARGS...: runs the hook; sets rc, out (stdout and stderr)
# and secs (elapsed, in tenths of a second).
run() {
	local input=$1 start end
	shift
	start=$(date +%s%N)
	out=$("$hook" "$@" <<<"$input" 2>&1)
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

# start_fake MODE [ERRNO MESSAGE]: a stand-in daemon at $tmp/owner.sock.
start_fake() {
	stop_fake
	rm -f "$tmp/owner.sock" "$tmp/owner.log"
	python3 "$fake" "$tmp/owner.sock" "$tmp/owner.log" "$@" &
	fake_pid=$!
	for _ in $(seq 50); do [ -S "$tmp/owner.sock" ] && return; sleep 0.1; done
}
stop_fake() {
	[ -z "$fake_pid" ] || { kill "$fake_pid"; wait "$fake_pid" 2>/dev/null; }
	fake_pid=
}
# requests OP: the requests of that op the stand-in logged, one per line.
requests() {
	python3 -c 'import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("request", {}).get("op") == sys.argv[2]:
        print(json.dumps(e, sort_keys=True, separators=(",", ":")))' "$tmp/owner.log" "$1" 2>/dev/null
}
# pick EXPR: the Python expression EXPR over r, the JSON object on stdin, as
# compact JSON with sorted keys.
pick() {
	python3 -c 'import json, sys
r = json.loads(sys.stdin.read())
print(json.dumps(eval(sys.argv[1]), sort_keys=True, separators=(",", ":")))' "$1"
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
start_fake ok
run "$(state '{"run.oci.hooks.stderr":"/dev/stderr"}')" --socket="$tmp/owner.sock" createRuntime
expect "a container without io.mshare.regions: exit 0, silent" 0 ""
if [ ! -e "$bundle/rootfs/run" ] && [ -z "$(requests register)" ]; then
	ok "and nothing was made or asked for"
else
	not_ok "something happened for a container without the annotation: $(ls -R "$bundle/rootfs") $(cat "$tmp/owner.log")"
fi
run "$(state '{}')" --socket="$tmp/owner.sock" poststop
expect "poststop of a container without the annotation: exit 0, silent" 0 ""
if [ -z "$(requests unregister)" ]; then ok "and the daemon was not asked"; else not_ok "poststop asked the daemon"; fi

# ---- a pod's sandbox (pause container) gets the pod's annotations: nothing happens ----
run "$(state '{"io.mshare.regions":"pool","io.kubernetes.cri-o.ContainerType":"sandbox"}')" \
	--socket="$tmp/owner.sock" createRuntime
expect "a Kubernetes pod's sandbox with the pod's io.mshare.regions: exit 0, silent" 0 ""
run "$(state '{"io.mshare.regions":"pool","io.kubernetes.cri.container-type":"sandbox"}')" \
	--socket="$tmp/owner.sock" poststop
expect "and its poststop: exit 0, silent" 0 ""
if [ ! -e "$bundle/rootfs/run" ] && [ -z "$(requests register)$(requests unregister)" ]; then
	ok "no channel was made for the sandbox and the daemon was not asked"
else
	not_ok "the sandbox was handled: $(cat "$tmp/owner.log")"
fi

# ---- bad annotations ----
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
if [ ! -e "$bundle/rootfs/run" ] && [ -z "$(requests register)" ]; then
	ok "no bad annotation made anything or reached the daemon"
else
	not_ok "a bad annotation got through: $(cat "$tmp/owner.log")"
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
requests_before=$(requests register | wc -l)
echo '{"ociVersion":"1.0.2","root":{"path":"rootfs","readonly":true}}' >"$bundle/config.json"
run "$(state '{"io.mshare.regions":"pool"}')" --socket="$tmp/owner.sock" createRuntime
expect "a read-only root (root.readonly) without a tmpfs on /run fails the container" 1 \
	"cannot create the channel /run/mshare/mshare.sock in the container: the channel's directory /run/mshare is on the read-only root file system (config.json has root.readonly)"
if [ ! -e "$bundle/rootfs/run" ] && [ "$(requests register | wc -l)" = "$requests_before" ]; then
	ok "and nothing was made in the root file system, nor asked of the daemon"
else
	not_ok "the read-only root: $(ls -R "$bundle/rootfs") $(requests register | tail -n1)"
fi

# A host directory bound on /data, read-only from config.json: the runtime
# makes it read-only after createRuntime, so it is writable yet; the
# container's process has the bind mount in a mount namespace of its own.
mkdir -p "$tmp/host-data" "$bundle/rootfs/data"
unshare --mount --propagation private \
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
if [ -z "$(ls -A "$tmp/host-data")" ] && [ "$(requests register | wc -l)" = "$requests_before" ]; then
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
kill "$ns_sleeper"
wait "$ns_sleeper" 2>/dev/null
ns_sleeper=
rm -rf "$tmp/host-data" "$bundle/rootfs/data"
echo '{"ociVersion":"1.0.2","root":{"path":"rootfs"}}' >"$bundle/config.json"

# ---- no daemon ----
stop_fake
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
start_fake silent
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

# ---- refusals ----
rm -rf "$bundle/rootfs/run"
start_fake error EACCES "region 'pool' is not granted to container t1"
run "$(state '{"io.mshare.regions":"pool:rw"}')" --socket="$tmp/owner.sock" createRuntime
expect "a refused grant fails the container with the daemon's reason" 1 \
	"mshare-oci-hook: container t1: mshare-owner refused the registration: region 'pool' is not granted to container t1 (EACCES)"
if [ "$(requests register | pick 'r["n_fds"]')" = 2 ] && [ -d "$bundle/rootfs/run/mshare" ] &&
	[ ! -e "$bundle/rootfs/run/mshare/mshare.sock" ]; then
	ok "the refused channel's socket is removed from the container (its directory stays)"
else
	not_ok "after the refusal: $(ls -la "$bundle/rootfs/run/mshare" 2>&1)"
fi
start_fake error ENOENT "no region 'nosuch' is configured"
run "$(state '{"io.mshare.regions":"nosuch"}')" --socket="$tmp/owner.sock" createRuntime
expect "an unknown region fails the container" 1 "refused the registration: no region 'nosuch' is configured (ENOENT)"
run "$(state '{"io.mshare.regions":"nosuch"}')" --socket="$tmp/owner.sock" poststop
expect "poststop: 'not registered' (ENOENT) is fine" 0 ""
start_fake error EPERM "only root may unregister a container"
run "$(state '{"io.mshare.regions":"pool"}')" --socket="$tmp/owner.sock" poststop
expect "poststop: another refusal is reported" 1 "mshare-owner refused the unregistration: only root may unregister a container (EPERM)"

# ---- a registration ----
rm -rf "$bundle/rootfs/run"
start_fake ok
ann='{"io.mshare.regions":" pool:rw , catalog","io.kubernetes.cri-o.Name":"k8s_db_web-1_prod_0f3c_0","x":"y=z"}'
run "$(state "$ann")" --socket="$tmp/owner.sock" createRuntime
expect "a granted container starts: exit 0, silent" 0 ""
reg=$(requests register)
want='{"version":1,"op":"register","container":{"id":"t1","name":"k8s_db_web-1_prod_0f3c_0","annotations":{"io.mshare.regions":" pool:rw , catalog","io.kubernetes.cri-o.Name":"k8s_db_web-1_prod_0f3c_0","x":"y=z"}},"regions":[{"region":"pool","mode":"rw"},{"region":"catalog","mode":"ro"}]}'
if [ "$(pick 'r["request"]' <<<"$reg")" = "$(pick r <<<"$want")" ]; then
	ok "register names the container, its annotations and the regions with their modes"
else
	not_ok "register request: $reg"
fi
if [ "$(pick '[r["n_fds"], r["fd0_listening"], r["fd0_seqpacket"], r["fd1"]]' <<<"$reg")" = '[2,true,true,"anon_inode:[pidfd]"]' ]; then
	ok "with exactly two descriptors: a listening unix SOCK_SEQPACKET socket and a pidfd"
else
	not_ok "the descriptors: $reg"
fi
if [ "$(requests hello | wc -l)" = 1 ] && [ "$(wc -l <"$tmp/owner.log")" = 3 ]; then
	ok "one connection: hello, then register"
else
	not_ok "unexpected requests: $(cat "$tmp/owner.log")"
fi
sock=$bundle/rootfs/run/mshare/mshare.sock
if [ -S "$sock" ] && [ "$(stat -c %a "$sock")" = 666 ] && [ "$(stat -c %a "${sock%/*}")" = 755 ]; then
	ok "the channel is at /run/mshare/mshare.sock in the container's root (0666, directory 0755)"
else
	not_ok "no channel at $sock: $(ls -la "${sock%/*}" 2>&1)"
fi
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(sys.argv[1])' "$sock"
for _ in $(seq 50); do grep -q '"channel": "accepted"' "$tmp/owner.log" && break; sleep 0.1; done
if grep -q '"channel": "accepted"' "$tmp/owner.log"; then
	ok "a client of the channel reaches the daemon, which holds its listening socket"
else
	not_ok "the daemon did not see the channel's client: $(cat "$tmp/owner.log")"
fi

# io.mshare.socket, and annotations from config.json when the state has none
echo '{"ociVersion":"1.0.2","root":{"path":"rootfs"},"annotations":{"io.mshare.regions":"pool","io.mshare.socket":"/var/x/ch.sock"}}' \
	>"$bundle/config.json"
run "{\"id\":\"t2\",\"pid\":$sleeper,\"bundle\":\"$bundle\"}" --socket="$tmp/owner.sock" createRuntime
expect "annotations come from config.json when the state has none" 0 ""
if [ -S "$bundle/rootfs/var/x/ch.sock" ] &&
	[ "$(requests register | tail -n1 | pick '[r["request"]["container"]["id"], r["request"]["regions"]]')" = '["t2",[{"mode":"ro","region":"pool"}]]' ]; then
	ok "io.mshare.socket puts the channel elsewhere: /var/x/ch.sock"
else
	not_ok "io.mshare.socket: $(ls -R "$bundle/rootfs" 2>&1 | tr '\n' ' ')"
fi

# poststop
run "$(state '{"io.mshare.regions":"pool"}' 0)" --socket="$tmp/owner.sock" poststop
expect "poststop: exit 0" 0 ""
if [ "$(requests unregister | pick '[r["request"]["version"], r["request"]["container"]["id"], r["n_fds"]]')" = '[1,"t1",0]' ]; then
	ok "poststop sends unregister with the container's id"
else
	not_ok "unregister request: $(requests unregister)"
fi

# no stage argument: the status tells it
rm -rf "$bundle/rootfs/run" "$bundle/rootfs/var"
echo '{"ociVersion":"1.0.2","root":{"path":"rootfs"}}' >"$bundle/config.json"
run "$(state '{"io.mshare.regions":"catalog"}' | sed 's/"t1"/"t3"/')" --socket="$tmp/owner.sock"
expect "without a stage argument, status \"created\" is createRuntime" 0 ""
if [ "$(requests register | tail -n1 | pick 'r["request"]["container"]["id"]')" = '"t3"' ] && [ -S "$bundle/rootfs/run/mshare/mshare.sock" ]; then
	ok "t3 was registered and its channel made"
else
	not_ok "t3 was not registered: $(tail -n2 "$tmp/owner.log")"
fi
run "$(state '{"io.mshare.regions":"catalog"}' 0 | sed -e 's/"t1"/"t3"/' -e 's/"created"/"stopped"/')" --socket="$tmp/owner.sock"
expect "without a stage argument, status \"stopped\" is poststop" 0 ""
if [ "$(requests unregister | tail -n1 | pick 'r["request"]["container"]["id"]')" = '"t3"' ]; then
	ok "t3 was unregistered"
else
	not_ok "t3 was not unregistered: $(tail -n1 "$tmp/owner.log")"
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
