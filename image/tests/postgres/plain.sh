#!/bin/bash
# Plain PostgreSQL, the comparison: the same runs with no preload; the
# server has no region.
. "$(dirname "$0")/lib.sh"
N=plain
# pgbench_runs: 1 + 3 client counts x 2 mixes x (pgbench, pg_amcheck)
ktap_plan "$((1 + 3 * 2 * 2 + 3))"
fresh_cluster $N || echo "# initdb failed"
if pg "$PGBIN/pg_ctl" -D "$PGROOT/$N/data" -w -t 300 -l "$PGROOT/$N/log" \
	-o "$SETTINGS -c unix_socket_directories=$PGROOT/$N/sock" start >/dev/null 2>&1 && ready $N; then
	ok "pg_ctl start, no preload"
else
	not_ok "pg_ctl start, no preload"
	tail -n 10 "$PGROOT/$N/log" | sed 's/^/# /'
fi
if ! region_fdinfo "$(postmaster $N)" >/dev/null && ! grep -q mshare-preload "$PGROOT/$N/log"; then
	ok "the server has no region and its log has no mshare-preload line"
else
	not_ok "the plain server has a region or an mshare-preload line"
	grep mshare-preload "$PGROOT/$N/log" | head -n 3 | sed 's/^/# /'
fi
pgbench_runs $N plain
stop_cluster $N
check "the server stops" sh -c "! pgrep -u postgres -x postgres"
