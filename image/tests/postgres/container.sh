#!/bin/bash
# PostgreSQL in a crun container on a region mshare-owner grants it: the
# container (annotation io.mshare.regions=pgpool:rw) gets its channel from
# mshare-oci-hook, and the server runs under `mshare-run --region pgpool
# --strict`; pgbench from outside on the socket directory it shares. Then:
# a container without the grant does not start; kill -9 of the postmaster
# (the container's first process) and a new container recovers the data on
# the region, cleared for it. Last, podman runs the same server the way
# docs/postgresql.md shows: the annotation, the library bound in and named
# by LD_PRELOAD and MSHARE_PRELOAD_REGION, podman's default seccomp filter.
. "$(dirname "$0")/lib.sh"
N=ctr
ROOT=/tmp/pg-rootfs
BUNDLES=/tmp/pg-bundles
HOOK=/usr/libexec/mshare/mshare-oci-hook
# pgbench_runs: 1 + 3 client counts x 2 mixes x (pgbench, pg_amcheck);
# then 13 checks of the containers, recovery and podman
ktap_plan "$((1 + 3 * 2 * 2 + 13))"

for id in $(crun list -q 2>/dev/null); do crun delete -f "$id" >/dev/null 2>&1; done
cat >"$CONF_DIR/postgres.conf" <<'CONF'
[Region]
Name=pgpool
Size=256M
Backing=anonymous
Protection=rw
Populate=no

[Grant]
Region=pgpool
Mode=rw
Annotation=io.mshare.test=postgres
CONF
fresh_owner || echo "# systemctl start mshare-owner failed"
fresh_cluster $N || echo "# initdb failed"

# The containers' root: the guest's /usr and /etc, read-only, and the
# cluster's directory at the same path as outside.
mkdir -p "$ROOT"/{usr,etc,proc,sys,dev,tmp,run,"$PGROOT/$N"}
for l in bin sbin lib lib64; do ln -sfn "usr/$l" "$ROOT/$l"; done
uid=$(id -u postgres) gid=$(id -g postgres)

# bundle ID ANNOTATIONS: a container that runs the server under mshare-run.
bundle() {
	local b=$BUNDLES/$1 args
	rm -rf "$b"
	mkdir -p "$b"
	(cd "$b" && crun spec) || return 1
	args=$(for a in mshare-run --region pgpool --strict -- "$PGBIN/postgres" -D "$PGROOT/$N/data" \
		$SETTINGS -c unix_socket_directories="$PGROOT/$N/sock"; do jq -n --arg a "$a" '$a'; done | jq -s .)
	jq --arg root "$ROOT" --arg hook "$HOOK" --argjson ann "$2" --argjson args "$args" \
		--arg data "$PGROOT/$N" --argjson uid "$uid" --argjson gid "$gid" '
	  .process.terminal = false
	| .process.args = $args
	| .process.user = {"uid": $uid, "gid": $gid}
	| .process.env += ["HOME=/tmp"]
	| .root = {"path": $root, "readonly": true}
	| .mounts += [{"destination": "/usr", "type": "bind", "source": "/usr", "options": ["rbind", "ro"]},
	              {"destination": "/etc", "type": "bind", "source": "/etc", "options": ["rbind", "ro"]},
	              {"destination": $data, "type": "bind", "source": $data, "options": ["rbind", "rw"]},
	              {"destination": "/run", "type": "tmpfs", "source": "tmpfs",
	               "options": ["nosuid", "nodev", "mode=755", "size=1024k"]},
	              {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "mode=1777"]}]
	| .annotations = $ann
	| .hooks = {"createRuntime": [{"path": $hook, "args": ["mshare-oci-hook", "createRuntime"]}],
	            "poststop": [{"path": $hook, "args": ["mshare-oci-hook", "poststop"]}]}
	' "$b/config.json" >"$b/config.json.new" && mv "$b/config.json.new" "$b/config.json" && echo "$b"
}
GRANTED='{"io.mshare.regions": "pgpool:rw", "io.mshare.test": "postgres"}'

# start_server ID: the container, detached, its output in /run/ID.out;
# waits until the server answers.
start_server() {
	local b
	b=$(bundle "$1" "$GRANTED") || return 1
	crun run -d -b "$b" "$1" >"/run/$1.out" 2>&1 </dev/null || return 1
	wait_for 300 ready $N
}

if start_server pg1; then
	ok "PostgreSQL starts in a crun container under mshare-run --region pgpool --strict"
else
	not_ok "the container's server did not start"
	tail -n 10 /run/pg1.out | sed 's/^/# /'
fi
if grep -q "mshare-preload: serving [0-9]* bytes of shared memory from region 'pgpool'" /run/pg1.out; then
	ok "its log says the shared memory is served from region 'pgpool'"
else
	not_ok "no 'serving' line for pgpool"
	grep mshare /run/pg1.out | sed 's/^/# /'
fi
pgbench_runs $N "granted region (container)"
pm=$(crun state pg1 | jq .pid)
pgpool_attached() { region_field pgpool attached; }
if settle_attached pgpool_attached "$pm"; then
	ok "all $PROCS processes of the server are attached to pgpool (mshare-ctl: attached $PROCS)"
else
	not_ok "pgpool attached '$ATTACHED', server processes $PROCS"
fi

# Without the grant the container does not start.
# run.oci.hooks.stderr: crun shows what the hook says, else only the
# journal has it.
b=$(bundle nogrant '{"io.mshare.regions": "pgpool:rw", "run.oci.hooks.stderr": "/dev/stderr"}')
out=$(timeout 120 crun run -b "$b" nogrant 2>&1 </dev/null)
rc=$?
if [ $rc != 0 ] && grep -q 'EACCES' <<<"$out"; then
	ok "a container without the grant does not start (status $rc: $(grep -o 'mshare-owner refused[^(]*(EACCES)' <<<"$out" | head -n1))"
else
	not_ok "the container without a grant: status $rc"
	tail -n 5 <<<"$out" | sed 's/^/# /'
fi
crun delete -f nogrant >/dev/null 2>&1

# Crash: kill -9 of the postmaster ends the container; a new one recovers.
kill -KILL "$pm"
stopped() { [ "$(crun state pg1 2>/dev/null | jq -r .status)" != running ] && [ "$(region_field pgpool attached)" = 0 ]; }
if wait_for 120 stopped; then ok "kill -9 of the postmaster: the container stops, nothing is attached to pgpool"; else not_ok "after kill -9: pg1 $(crun state pg1 | jq -r .status), attached $(region_field pgpool attached)"; fi
crun delete -f pg1 >/dev/null 2>&1
if start_server pg2; then
	ok "a new container starts the server on pgpool again"
else
	not_ok "the second container's server did not start"
	tail -n 10 /run/pg2.out | sed 's/^/# /'
fi
if grep -q 'database system was interrupted\|was not properly shut down' /run/pg2.out &&
	grep -q "serving [0-9]* bytes of shared memory from region 'pgpool'" /run/pg2.out; then
	ok "it ran crash recovery, on pgpool"
else
	not_ok "no recovery or no region in the second container's log"
	tail -n 10 /run/pg2.out | sed 's/^/# /'
fi
out=$(pg pgbench -S -n -c 4 -t 50 -h "$PGROOT/$N/sock" -U postgres postgres 2>&1)
if grep -q '^number of failed transactions: 0 ' <<<"$out"; then ok "pgbench after recovery"; else not_ok "pgbench after recovery"; tail -n 5 <<<"$out" | sed 's/^/# /'; fi
amcheck $N "granted region (container): pg_amcheck after recovery"
crun kill pg2 TERM >/dev/null 2>&1
down() { [ "$(crun state pg2 2>/dev/null | jq -r .status)" != running ]; }
check "the container's server stops on SIGTERM" wait_for 120 down
crun delete -f pg2 >/dev/null 2>&1

# podman, as in docs/postgresql.md but for the image: the guest reaches no
# registry, so the root is $ROOT with the guest's /usr and /etc bound in.
LIB=$(ls /usr/lib/*/mshare/libmshare-preload.so | head -n1)
out=$(timeout 300 podman run -d --name pg-podman --network none \
	--annotation io.mshare.regions=pgpool:rw --annotation io.mshare.test=postgres \
	-v /usr:/usr:ro -v /etc:/etc:ro -v "$PGROOT/$N:$PGROOT/$N" \
	-v "$LIB:/usr/lib/mshare/libmshare-preload.so:ro" \
	-e LD_PRELOAD=/usr/lib/mshare/libmshare-preload.so \
	-e MSHARE_PRELOAD_REGION=pgpool -e MSHARE_PRELOAD_STRICT=1 \
	--user "$uid:$gid" --rootfs "$ROOT" \
	"$PGBIN/postgres" -D "$PGROOT/$N/data" $SETTINGS -c unix_socket_directories="$PGROOT/$N/sock" 2>&1 </dev/null)
rc=$?
if [ $rc = 0 ] && wait_for 300 ready $N &&
	podman logs pg-podman 2>&1 | grep -q "serving [0-9]* bytes of shared memory from region 'pgpool'"; then
	ok "podman run with the annotation and LD_PRELOAD: the server runs on pgpool"
else
	not_ok "podman's server: status $rc"
	{ printf '%s\n' "$out"; podman logs pg-podman 2>&1; } | tail -n 10 | sed 's/^/# /'
fi
out=$(pg pgbench -n -c 16 -j 2 -t 16 -h "$PGROOT/$N/sock" -U postgres postgres 2>&1)
if grep -q '^number of failed transactions: 0 ' <<<"$out" &&
	settle_attached pgpool_attached "$(podman inspect -f '{{.State.Pid}}' pg-podman 2>/dev/null)"; then
	ok "pgbench through podman's server; all $PROCS of its processes are attached to pgpool"
else
	not_ok "podman's server: pgbench or attached '$ATTACHED' of $PROCS"
	tail -n 5 <<<"$out" | sed 's/^/# /'
fi
amcheck $N "granted region (podman): pg_amcheck"
podman stop -t 60 pg-podman >/dev/null 2>&1
podman rm -f pg-podman >/dev/null 2>&1
rm -f "$CONF_DIR/postgres.conf"
mshare-ctl reload >/dev/null 2>&1 || echo "# reload without postgres.conf failed"
