#!/bin/bash
# PostgreSQL on the host of the guest, owning its region: pg_ctl start under
# `mshare-run --strict` (the postmaster's big shared mapping becomes a window
# onto a region of its own, every backend inherits it), pgbench at each
# client count with pg_amcheck after every run, then crash recovery: kill -9
# of the postmaster, and a start again on a fresh region.
. "$(dirname "$0")/lib.sh"
N=host
# pgbench_runs: 1 + 3 client counts x 2 mixes x (pgbench, pg_amcheck)
ktap_plan "$((1 + 3 * 2 * 2 + 11))"

start() {
	pg mshare-run --strict -- "$PGBIN/pg_ctl" -D "$PGROOT/$N/data" -w -t 300 \
		-l "$PGROOT/$N/log" -o "$SETTINGS -c unix_socket_directories=$PGROOT/$N/sock" start >/dev/null 2>&1
}

fresh_cluster $N || echo "# initdb failed"
if start && ready $N; then
	ok "pg_ctl start under mshare-run --strict"
else
	not_ok "pg_ctl start under mshare-run --strict"
	tail -n 10 "$PGROOT/$N/log" | sed 's/^/# /'
fi
pm=$(postmaster $N)
if grep -q 'mshare-preload: serving [0-9]* bytes of shared memory from a region of its own' "$PGROOT/$N/log"; then
	ok "the server log says its shared memory is served from a region of its own: $(grep -o 'serving [0-9]* bytes' "$PGROOT/$N/log" | head -n1)"
else
	not_ok "no 'serving' line in the server log"
	grep mshare "$PGROOT/$N/log" | sed 's/^/# /'
fi
info=$(region_fdinfo "$pm")
if [ "$(fdinfo_field mshare-owner-fd <<<"$info")" = 1 ] && [ "$(fdinfo_field mshare-owned <<<"$info")" = 1 ]; then
	ok "the postmaster (pid $pm) holds the owner file of a region of $(fdinfo_field mshare-size <<<"$info") bytes"
else
	not_ok "the postmaster's region: $(tr '\n' ' ' <<<"$info")"
fi
pgbench_runs $N "own region"
# Every process of the server has a window onto the one region.
own_attached() { region_fdinfo "$pm" | fdinfo_field mshare-attached; }
if settle_attached own_attached "$pm"; then
	ok "all $PROCS processes of the server are attached to the region (mshare-attached $PROCS), page tables $(region_fdinfo "$pm" | fdinfo_field mshare-pgtables) bytes for all of them"
else
	not_ok "mshare-attached $ATTACHED, server processes $PROCS"
fi

# Crash: the postmaster killed, its children go; the next start recovers
# (WAL redo) on a new region.
inode=$(region_inode "$pm")
kill -KILL "$pm"
gone() { ! pgrep -u postgres -x postgres >/dev/null; }
if wait_for 120 gone; then ok "kill -9 of the postmaster: every server process is gone"; else not_ok "server processes left: $(pgrep -u postgres -a postgres | head -n 3)"; fi
: >"$PGROOT/$N/log"
if start && ready $N; then
	ok "a start after the crash"
else
	not_ok "a start after the crash"
	tail -n 10 "$PGROOT/$N/log" | sed 's/^/# /'
fi
pm=$(postmaster $N)
if grep -q 'database system was interrupted\|was not properly shut down' "$PGROOT/$N/log" &&
	grep -q 'redo done\|database system is ready to accept connections' "$PGROOT/$N/log"; then
	ok "the server ran crash recovery"
else
	not_ok "no recovery in the server log"
	tail -n 10 "$PGROOT/$N/log" | sed 's/^/# /'
fi
new=$(region_inode "$pm")
if [ -n "$new" ] && [ "$new" != "$inode" ]; then
	ok "it runs on a fresh region (inode $inode before, $new now)"
else
	not_ok "region inode before '$inode', now '$new'"
fi
out=$(pg pgbench -S -n -c 4 -t 50 -h "$PGROOT/$N/sock" -U postgres postgres 2>&1)
if grep -q '^number of failed transactions: 0 ' <<<"$out"; then ok "pgbench after recovery"; else not_ok "pgbench after recovery"; tail -n 5 <<<"$out" | sed 's/^/# /'; fi
amcheck $N "own region: pg_amcheck after recovery"
stop_cluster $N
check "the server stops" sh -c "! pgrep -u postgres -x postgres"
