# Shared by the in-guest PostgreSQL tests (postgres/*.sh); sourced. They run
# as root under mshare-guest-tests.service in the booted image, with Debian's
# postgresql-15, the installed libmshare-preload.so and mshare-run, and
# guest-preload from `make -C preload install-tests` in mshare-preload/.
# shellcheck shell=bash
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../smoke/tap.sh"
. "$here/../owner/lib.sh"

PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
PGROOT=/var/lib/mshare-pg
# pgbench's scale (100,000 accounts each) and transactions per run, shared
# by its clients: short runs, the emulated machine is slow; make bench
# measures.
SCALE=2
TXNS=${PG_TXNS:-256}
CLIENTS="16 64 256"
# The server's settings for every way: room for 256 clients, no TCP, a
# socket in the cluster's own directory, and durability the tests do not
# need (a kill -9 of the server is not a crash of the machine).
SETTINGS="-c max_connections=300 -c shared_buffers=128MB -c listen_addresses= -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_wal_size=1GB"

pg() { runuser -u postgres -- "$@"; }

# fresh_cluster NAME: an empty cluster in $PGROOT/NAME/data, its socket
# directory $PGROOT/NAME/sock; prints nothing, fails with initdb's output.
fresh_cluster() {
	local d=$PGROOT/$1 out
	rm -rf "$d"
	mkdir -p "$d/sock"
	chown -R postgres: "$d"
	out=$(pg "$PGBIN/initdb" -D "$d/data" -A trust -U postgres --no-sync 2>&1) ||
		{ printf '%s\n' "$out" | tail -n 5 | sed 's/^/# /'; return 1; }
}

# postmaster NAME: the server's pid (first line of postmaster.pid), in the
# test's pid namespace only for a server started here.
postmaster() { head -n1 "$PGROOT/$1/data/postmaster.pid" 2>/dev/null; }

# ready NAME: the server answers on its socket.
ready() { pg "$PGBIN/pg_isready" -q -h "$PGROOT/$1/sock" -U postgres; }

psql_at() {
	local n=$1
	shift
	pg psql -X -q -At -h "$PGROOT/$n/sock" -U postgres "$@"
}

# region_fdinfo PID: the fdinfo of the first mshare region descriptor PID
# holds (empty if none).
region_fdinfo() {
	local f
	for f in /proc/"$1"/fdinfo/*; do
		grep -q '^mshare-size:' "$f" 2>/dev/null && { cat "$f"; return 0; }
	done
	return 1
}

# region_inode PID: the inode of that descriptor's file (a region's identity).
region_inode() {
	local f
	for f in /proc/"$1"/fdinfo/*; do
		grep -q '^mshare-size:' "$f" 2>/dev/null && { stat -L -c %i "/proc/$1/fd/${f##*/}"; return 0; }
	done
	return 1
}

fdinfo_field() { sed -n "s/^$1:[[:space:]]*//p"; }

# server_procs PID: the postmaster and its children.
server_procs() { echo $(($(pgrep -c -P "$1") + 1)); }

# settle_attached COUNT PID: run COUNT (prints how many processes are
# attached to the region) and count the server's processes (PID and its
# children) until the two agree, for up to 20 s: the two reads are not
# atomic, and autovacuum workers and the backends of clients that just
# left come and go between them. Sets ATTACHED and PROCS; true if they
# agreed.
settle_attached() {
	local _
	for _ in $(seq 40); do
		ATTACHED=$("$1") PROCS=$(server_procs "$2")
		[ "$ATTACHED" = "$PROCS" ] && return 0
		sleep 0.5
	done
	return 1
}

# pgbench_runs NAME LABEL: pgbench -i, then select-only and the default
# read-write mix at each of $CLIENTS, each followed by pg_amcheck; TAP.
pgbench_runs() {
	local n=$1 label=$2 sock=$PGROOT/$1/sock c mode opt out tps failed
	if out=$(pg pgbench -i -q -s "$SCALE" -h "$sock" -U postgres postgres 2>&1) &&
		out=$(psql_at "$n" -c 'CREATE EXTENSION amcheck' 2>&1); then
		ok "$label: pgbench -i -s $SCALE, CREATE EXTENSION amcheck"
	else
		not_ok "$label: pgbench -i -s $SCALE"
		printf '%s\n' "$out" | tail -n 5 | sed 's/^/# /'
	fi
	for c in $CLIENTS; do
		for mode in select-only tpcb-like; do
			opt=-S
			[ $mode = select-only ] || opt=
			out=$(pg pgbench $opt -n -c "$c" -j 2 -t $((TXNS / c)) -h "$sock" -U postgres postgres 2>&1)
			rc=$?
			tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' <<<"$out")
			failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out")
			if [ $rc = 0 ] && [ "$failed" = 0 ] && [ -n "$tps" ] &&
				grep -q "^number of transactions actually processed: $TXNS/$TXNS$" <<<"$out"; then
				ok "$label: pgbench $mode, $c clients, $TXNS transactions, 0 failed ($tps tps, TCG emulation)"
			else
				not_ok "$label: pgbench $mode, $c clients: status $rc, failed '$failed'"
				printf '%s\n' "$out" | tail -n 8 | sed 's/^/# /'
			fi
			amcheck "$n" "$label: pg_amcheck after $mode with $c clients"
		done
	done
}

# amcheck NAME DESCRIPTION: pg_amcheck of every table and index (heap and
# B-tree, all index entries checked against the heap) reports nothing.
amcheck() {
	local out
	if out=$(pg "$PGBIN/pg_amcheck" -h "$PGROOT/$1/sock" -U postgres \
		--heapallindexed -d postgres 2>&1) && [ -z "$out" ]; then
		ok "$2: clean"
	else
		not_ok "$2"
		printf '%s\n' "$out" | tail -n 8 | sed 's/^/# /'
	fi
}

# stop_cluster NAME: fast shutdown of a server started with pg_ctl.
stop_cluster() { pg "$PGBIN/pg_ctl" -D "$PGROOT/$1/data" -m fast -w -t 120 stop >/dev/null 2>&1; }
