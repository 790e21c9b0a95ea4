#!/bin/bash
# postgres/bench.sh [--clients 16,64,256] [--more 1024] [--ways plain,mshare,huge]
#                   [--buffers 256] [--seconds 10]
# The PostgreSQL scenario of `make bench` (scripts/bench.sh --postgres), in
# the guest. One cluster, started each way in turn: plain shared memory,
# under mshare-run (a region of its own, every backend inherits a window),
# and huge_pages=on when hugetlbfs pages can be reserved. After a warm-up
# read that brings the tables into shared_buffers, at each client count
# pgbench connects every client at once and each backend reads tables
# covering 80% of shared_buffers (each below a quarter of it, so no ring
# buffer), then records its own VmPTE and minor faults from /proc/self; a
# select-only run then gives tps. Each point is one line
# "MSHARE-BENCH-PG {json}" and one TAP line.
#   --clients   counts for every way; --more: counts for mshare alone
#   --buffers   shared_buffers in MiB; --seconds: length of the tps runs
. "$(dirname "$0")/lib.sh"

clients=16,64,256 more='' ways=plain,mshare,huge buffers=256 seconds=10
while [ $# -gt 0 ]; do
	case $1 in
	--clients) clients=$2; shift ;;
	--more) more=$2; shift ;;
	--ways) ways=$2; shift ;;
	--buffers) buffers=$2; shift ;;
	--seconds) seconds=$2; shift ;;
	*) echo "postgres/bench.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
	shift
done
N=bench
sock=$PGROOT/$N/sock
max=$(tr , '\n' <<<"$clients,$more" | sort -n | tail -n1)
# Room for every client, and nothing the measurement does not need.
BENCH_SETTINGS="-c max_connections=$((max + 10)) -c shared_buffers=${buffers}MB -c listen_addresses= -c unix_socket_directories=$sock -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_wal_size=1GB -c jit=off"
record() { echo "MSHARE-BENCH-PG $*"; }
# pgbench as postgres with a descriptor per client: runuser's pam_limits
# starts from PID 1's soft limit (1024), the hard one allows more.
pgbench_n() { pg sh -c 'ulimit -n 65536 && exec pgbench "$@"' pgbench "$@"; }
progress() { echo "[bench] $*"; }

start_way() {
	local hp=off
	local -a wrap=()
	case $1 in
	mshare) wrap=(mshare-run --strict --) ;;
	huge) hp=on ;;
	esac
	pg "${wrap[@]}" "$PGBIN/pg_ctl" -D "$PGROOT/$N/data" -w -t 600 -l "$PGROOT/$N/log-$1" \
		-o "$BENCH_SETTINGS -c huge_pages=$hp" start >/dev/null 2>&1
}

# Four tables of one 5000-byte row per 8 KiB page (storage plain: no
# compression, no TOAST), each a fifth of shared_buffers.
make_tables() {
	local rows=$((buffers * 128 / 5)) i
	for i in 1 2 3 4; do
		psql_at $N -c "CREATE TABLE touch$i (id int, pad text); ALTER TABLE touch$i ALTER COLUMN pad SET STORAGE PLAIN; INSERT INTO touch$i SELECT g, repeat('x', 5000) FROM generate_series(1, $rows) g;" || return 1
	done
	psql_at $N -c 'CREATE TABLE stats (pid int, status text, stat text)'
}

# What each client runs once: touch.sql reads the four tables, then records
# what the backend's own /proc entries say; idle.sql only records, for what
# a backend costs without the pool.
stats_sql="INSERT INTO stats SELECT pg_backend_pid(), pg_read_file('/proc/self/status'), pg_read_file('/proc/self/stat');"
printf 'SELECT count(*) FROM touch%d;\n' 1 2 3 4 >/tmp/touch.sql
echo "$stats_sql" >>/tmp/touch.sql
echo "$stats_sql" >/tmp/idle.sql
chmod 644 /tmp/touch.sql /tmp/idle.sql
# The recorded backends' figures, as one JSON object made by the server.
stats_json="
	WITH s AS (SELECT (regexp_match(status, 'VmPTE:\s+(\d+) kB'))[1]::bigint AS pte_kb,
	                  split_part(regexp_replace(stat, '^.*\) ', ''), ' ', 8)::bigint AS minflt
	           FROM stats)
	SELECT json_build_object('backends', count(*), 'pte_kb_mean', round(avg(pte_kb), 1),
		'pte_kb_max', max(pte_kb), 'pte_kb_sum', sum(pte_kb),
		'minflt_mean', round(avg(minflt), 1), 'minflt_max', max(minflt)) FROM s"

# run_sql FILE CLIENTS: every client runs FILE once, all connected at once.
run_sql() { pgbench_n -n -c "$2" -j 2 -t 1 -f "$1" -h "$sock" -U postgres postgres 2>&1; }

# baseline: after a warm-up read of the tables by one backend (every point
# then finds the pool in shared_buffers), the figures of one backend that
# read nothing.
baseline() {
	run_sql /tmp/touch.sql 1 >/dev/null && psql_at $N -c 'TRUNCATE stats' >/dev/null &&
		run_sql /tmp/idle.sql 1 >/dev/null && psql_at $N -c "$stats_json"
}

# point WAY CLIENTS IDLE: one MSHARE-BENCH-PG line and its TAP line.
point() {
	local way=$1 c=$2 idle=${3:-'{}'} out out2 conn conn_ms tps status=ok t0 t1 figs
	psql_at $N -c 'TRUNCATE stats' >/dev/null
	t0=$(date +%s%N)
	out=$(run_sql /tmp/touch.sql "$c") || status=failed
	t1=$(date +%s%N)
	conn=$(sed -n 's/^initial connection time = \([0-9.]*\) ms$/\1/p' <<<"$out")
	# pgbench's -T clock runs while its clients connect: add twice the
	# time connecting them all took (connecting them again can take longer
	# than that on a busy host), so each run has its seconds of work.
	conn_ms=${conn%.*}
	out2=$(pgbench_n -n -S -c "$c" -j 2 -T "$((seconds + 2 * ${conn_ms:-0} / 1000 + 1))" -h "$sock" \
		-U postgres postgres 2>&1) || status=failed
	tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' <<<"$out2")
	figs=$(psql_at $N -c "$stats_json") || figs='{}'
	[ -n "$conn" ] && [ -n "$tps" ] && [ "$(jq -r .backends <<<"$figs")" = "$c" ] || status=failed
	record "$(jq -cn --arg way "$way" --argjson c "$c" --arg status "$status" \
		--argjson figs "$figs" --argjson idle "$idle" --argjson buffers "$buffers" \
		--argjson conn "${conn:-null}" --argjson tps "${tps:-null}" --argjson seconds "$seconds" \
		--argjson run_ms "$(((t1 - t0) / 1000000))" \
		'{type: "point", scenario: "postgres", way: $way, clients: $c, status: $status,
		  shared_buffers_mib: $buffers, touched_mib: ($buffers * 4 / 5)} + $figs +
		 {idle_pte_kb: $idle.pte_kb_mean, idle_minflt: $idle.minflt_mean,
		  connect_all_ms: $conn, touch_run_ms: $run_ms, tps_select_only: $tps, tps_seconds: $seconds}')"
	if [ $status = ok ]; then
		ok "$way, $c clients: VmPTE $(jq -r .pte_kb_mean <<<"$figs") kB and $(jq -r .minflt_mean <<<"$figs") minor faults a backend, connect-all $conn ms, $tps tps (TCG emulation)"
	else
		not_ok "$way, $c clients"
		printf '%s\n%s\n' "$out" "$out2" | tail -n 8 | sed 's/^/# /'
	fi
}

fresh_cluster $N || { not_ok "initdb"; ktap_finish; exit 1; }
progress "cluster ready; shared_buffers $buffers MiB, clients $clients, mshare alone $more, ways $ways"
first=1
for way in ${ways//,/ }; do
	if [ "$way" = huge ]; then
		# The server's whole shared memory in 2 MiB pages, as it computes
		# it for these settings (shared_buffers is only part of it: room
		# for 4096 connections is over 100 MiB more), and some room.
		# shellcheck disable=SC2086 # the settings are separate words
		want=$(pg "$PGBIN/postgres" -D "$PGROOT/$N/data" $BENCH_SETTINGS \
			-C shared_memory_size_in_huge_pages 2>/dev/null) || want=$((buffers / 2))
		want=$((want + 16))
		echo "$want" >/proc/sys/vm/nr_hugepages
		got=$(cat /proc/sys/vm/nr_hugepages)
		if [ "$got" -lt "$want" ]; then
			record "{\"type\":\"skip\",\"way\":\"huge\",\"why\":\"only $got of $want huge pages could be reserved\"}"
			not_ok "huge: only $got of $want huge pages could be reserved"
			echo 0 >/proc/sys/vm/nr_hugepages
			continue
		fi
	fi
	if ! start_way "$way"; then
		record "{\"type\":\"point\",\"scenario\":\"postgres\",\"way\":\"$way\",\"status\":\"failed\"}"
		not_ok "$way: the server did not start"
		tail -n 5 "$PGROOT/$N/log-$way" | sed 's/^/# /'
		continue
	fi
	if [ $first = 1 ]; then
		if ! { pg pgbench -i -q -s 1 -h "$sock" -U postgres postgres && make_tables; } >/dev/null 2>&1; then
			not_ok "making the tables"
			ktap_finish
			exit 1
		fi
		first=0
	fi
	list=$clients
	[ "$way" != mshare ] || [ -z "$more" ] || list=$clients,$more
	idle=$(baseline) || { not_ok "$way: the warm-up read or the idle backend failed"; idle=; }
	for c in ${list//,/ }; do
		progress "$way: $c clients"
		point "$way" "$c" "$idle"
	done
	stop_cluster $N
	[ "$way" != huge ] || echo 0 >/proc/sys/vm/nr_hugepages
done
record '{"type":"end","scenario":"postgres","complete":true}'
ktap_finish
