#!/bin/bash
# PostgreSQL under mshare-run, on the host: initdb, pg_ctl start, pgbench -i
# and a short pgbench run, as the user postgres (runuser; PostgreSQL refuses
# to run as root), on a private socket directory and no TCP port.
#   * with libmshare-preload.so on this kernel (no mshare): the server runs
#     on plain shared memory and its log says so once, naming ENOSYS;
#     --strict makes the start fail with the library's message;
#   * with the library on the fake of the mshare calls (../libmshare/tests/fake-mshare.c,
#     NOT the kernel): shared_memory_type=mmap (huge_pages=try: the huge
#     page attempt is refused, the retry is served) and =sysv are served
#     from regions of the server's own, and pgbench runs on them.
# Skipped unless run as root with PostgreSQL's server (postgresql-NN) and
# pgbench installed and a user postgres. About 30 s.
# Usage: test-postgres.sh BUILD
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
b=$(realpath "$1")

pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ "$(id -u)" != 0 ] || [ ! -x "$pgbin/initdb" ] || ! command -v pgbench >/dev/null ||
	! id postgres >/dev/null 2>&1; then
	skip "PostgreSQL under mshare-run: needs root, postgresql-NN, pgbench and a user postgres"
	ktap_finish
	exit
fi

tmp=$(mktemp -d /tmp/test-postgres.XXXXXX)
data=$tmp/data
port=$((50000 + $$ % 10000))
cleanup() {
	[ ! -e "$data/postmaster.pid" ] || runuser -u postgres -- "$pgbin/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
# The user postgres may not reach the build tree: a copy of what it runs.
mkdir "$tmp/bin"
cp "$b/mshare-run" "$b/libmshare-preload.so" "$tmp/bin/"
cp "$b/tests/libmshare-preload-fake.so" "$tmp/bin/fake.so"
chmod -R a+rX "$tmp/bin"
chown postgres "$tmp"

# pg ARG...: as postgres, with the environment of the test only.
pg() {
	runuser -u postgres -- env -u MSHARE_PRELOAD_MIN_SIZE -u MSHARE_PRELOAD_REGION \
		-u MSHARE_PRELOAD_STRICT -u MSHARE_PRELOAD_QUIET -u MSHARE_SOCKET -u LD_PRELOAD \
		-u MSHARE_PRELOAD_LIB "$@"
}
# start LOG [MSHARE-RUN OPTION...] [-- SERVER SETTING...]: pg_ctl start under mshare-run.
start() {
	local log=$1 opts=() settings="-c port=$port -c listen_addresses='' -c unix_socket_directories=$tmp -c shared_buffers=128MB"
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	[ "$1" != -- ] || shift
	for s in "$@"; do settings="$settings -c $s"; done
	run pg "${env[@]}" "$tmp/bin/mshare-run" "${opts[@]}" "$pgbin/pg_ctl" -D "$data" -l "$log" -w -t 60 \
		-o "$settings" start
}
stop() { pg "$pgbin/pg_ctl" -D "$data" -w stop >/dev/null 2>&1; }
bench() {
	local secs=$1
	run pg pgbench -h "$tmp" -p "$port" -i -s 1 postgres
	[ "$rc" = 0 ] || return 1
	run pg pgbench -h "$tmp" -p "$port" -T "$secs" -c 4 postgres
	[ "$rc" = 0 ] && has "$out" "number of failed transactions: 0" && grep -q '^tps = [1-9]' <<<"$out"
}
preload_lines() { grep -c '^mshare-preload:' "$1"; }

env=()
run pg "$tmp/bin/mshare-run" "$pgbin/initdb" -D "$data" -A trust -U postgres
check "initdb under mshare-run" eval 'status 0 && has "$err" "falls back to plain shared memory"'

# --- the library on this kernel ---

start "$tmp/plain.log"
check "pg_ctl start under mshare-run (no mshare in this kernel)" status 0
check "the server's log says once that it falls back, with ENOSYS" \
	eval '[ "$(preload_lines "$tmp/plain.log")" = 1 ] &&
	      grep -q "^mshare-preload: mmap of [0-9]* bytes falls back to plain shared memory: mshare_create: Function not implemented" "$tmp/plain.log"'
check "pgbench -i -s 1 and pgbench -T 5 -c 4 on plain shared memory" bench 5
stop

start "$tmp/strict.log" --strict
check "--strict: the server does not start" eval '! status 0'
check "... and its log says why" \
	eval 'grep -q "fails (MSHARE_PRELOAD_STRICT=1): mshare_create: Function not implemented" "$tmp/strict.log" &&
	      grep -q "could not map anonymous shared memory: Function not implemented" "$tmp/strict.log"'
stop

# --- the library on the fake of the mshare calls ---

env=(MSHARE_PRELOAD_LIB="$tmp/bin/fake.so")
start "$tmp/fake-mmap.log" -- huge_pages=try
check "on the fake: shared_memory_type=mmap starts" status 0
check "... huge pages are refused, the retry is served from a region of its own" \
	eval 'grep -q "mmap of [0-9]* bytes falls back to plain shared memory: mshare_map of huge pages" "$tmp/fake-mmap.log" &&
	      grep -q "^mshare-preload: serving [0-9]* bytes of shared memory from a region of its own" "$tmp/fake-mmap.log"'
pid=$(head -1 "$data/postmaster.pid" 2>/dev/null)
check "... the postmaster holds the region at a high descriptor" \
	eval 'ls -l /proc/$pid/fd 2>/dev/null | grep -q " [0-9]\{4\} -> /memfd:fake-mshare"'
check "... pgbench runs on it" bench 2
stop

start "$tmp/fake-sysv.log" -- shared_memory_type=sysv
check "on the fake: shared_memory_type=sysv starts" status 0
check "... its segment is served from a region of its own" \
	grep -q "^mshare-preload: serving System V segment [0-9]* ([0-9]* bytes) from a region of its own" "$tmp/fake-sysv.log"
shmid=$(sed -n 's/^mshare-preload: serving System V segment \([0-9]*\) .*/\1/p' "$tmp/fake-sysv.log")
nattch=$(ipcs -m | awk -v id="$shmid" '$2 == id { print $6 }')
check "... the real segment's shm_nattch counts the server's processes ($nattch)" eval '[ "${nattch:-0}" -ge 2 ]'
check "... pgbench runs on it" bench 2
stop
check "... and the segment is removed when the server stops" eval '! ipcs -m | awk "{ print \$2 }" | grep -qx "$shmid"'

ktap_finish
