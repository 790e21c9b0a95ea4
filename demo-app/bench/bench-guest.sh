#!/bin/bash
# bench-guest.sh [--mode bench|quick|demo|ci] [--sizes 1G,4G] [--workers 1,16,64,256+]
#                [--backings mshare,shm,hugetlb] [--launch auto|containers|processes|B=MODE,...]
#                [--seconds S] [--mix MIX] [--max-workers N] [--stall-timeout SEC]
#                [--demo-dir DIR]
# The in-guest driver of the mshare benchmark and demo (issue 6). Runs as
# root in the booted image (a test list entry under mshare-guest-tests.service,
# made by scripts/bench.sh). For each pool size and each backing it sets up
# the buffer pool, loads it with demo-load, and for each worker count starts
# that many demo-workers (each in its own crun container, or as a plain
# process), waits until all of them have touched the whole pool (the ready
# FIFO), measures the page tables (PageTables of /proc/meminfo, each
# worker's cgroup memory.stat pagetables, the owner's cgroup), lets them run
# together, and collects their JSON lines.
#   --mode MODE      defaults for the rest: bench (1G,4G; 1,16,64,256+; all
#                    three backings; 10 s), quick (256M; 1,16,64; all; 5 s),
#                    demo (256M; 16; mshare,shm; 5 s), ci (1G; 16; mshare,shm;
#                    2 s; then TAP checks of issue 6's bound: page tables at
#                    least 20x and warm-up faults per worker at least 100x
#                    fewer with mshare than with shm)
#   --workers LIST   worker counts; a trailing + goes on doubling while the
#                    plain (shm) backing is estimated to fit in memory
#   --launch MODE    containers (crun; mshare through mshare-oci-hook),
#                    processes (mshare through `mshare-ctl run`), auto
#                    (containers if the hook is installed, else processes),
#                    or per backing: mshare=processes,shm=containers
#   --max-workers N  cap of the + sweep (default 4096)
#   --stall-timeout  give up a point when no worker got ready for SEC
#                    seconds (default 900)
#   --demo-dir DIR   demo-load and demo-worker (default /usr/libexec/mshare-demo,
#                    else bin/ next to this script)
# Output: progress lines "[bench] ...", TAP lines (one per point, and the
# bound checks in ci mode), and for the host (scripts/bench.sh) one line per
# record: "MSHARE-BENCH-BEGIN {...}", "MSHARE-BENCH-POOL {...}",
# "MSHARE-BENCH-POINT {...}", "MSHARE-BENCH-WORKERS {...}",
# "MSHARE-BENCH-END {...}". A run without the END line did not complete.
# BENCH_OVERHEAD_KB (memory per worker besides its page tables for the pool;
# default 3072 in a container, 1024 as a process) and BENCH_RESERVE_KB
# (memory kept free; default the larger of 256 MiB and 5 % of MemTotal)
# tune the estimate that stops a sweep before it would not fit.
set -euo pipefail
export LC_ALL=C.UTF-8
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=fifo-line.sh
. "$here/fifo-line.sh"

WORK=/run/mshare-bench
CG_NAME=mshare-bench
CG_ROOT=/sys/fs/cgroup/$CG_NAME
REGION=demo-pool
CONF=/etc/mshare/regions.d/bench.conf
OWNER_UNIT=mshare-owner.service
OWNER_CG=/sys/fs/cgroup/system.slice/$OWNER_UNIT
HOOK=/usr/libexec/mshare/mshare-oci-hook
KiB=1024
MiB=$((1024 * 1024))
GiB=$((1024 * MiB))

mode=bench
sizes='' workers='' backings='' seconds='' launch=auto
mix=read-mostly
max_workers=4096
stall=900
demo_dir=
usage() { sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; }
while [ $# -gt 0 ]; do
	case $1 in
	--mode) mode=$2; shift ;;
	--ci) mode=ci ;;
	--quick) mode=quick ;;
	--demo) mode=demo ;;
	--sizes) sizes=$2; shift ;;
	--workers) workers=$2; shift ;;
	--backings) backings=$2; shift ;;
	--launch) launch=$2; shift ;;
	--seconds) seconds=$2; shift ;;
	--mix) mix=$2; shift ;;
	--max-workers) max_workers=$2; shift ;;
	--stall-timeout) stall=$2; shift ;;
	--demo-dir) demo_dir=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "bench-guest.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
	shift
done
case $mode in
bench) : "${sizes:=1G,4G}" "${workers:=1,16,64,256+}" "${backings:=mshare,shm,hugetlb}" "${seconds:=10}" ;;
quick) : "${sizes:=256M}" "${workers:=1,16,64}" "${backings:=mshare,shm,hugetlb}" "${seconds:=5}" ;;
demo) : "${sizes:=256M}" "${workers:=16}" "${backings:=mshare,shm}" "${seconds:=5}" ;;
ci) : "${sizes:=1G}" "${workers:=16}" "${backings:=mshare,shm}" "${seconds:=2}" ;;
*) echo "bench-guest.sh: unknown mode '$mode'" >&2; exit 2 ;;
esac

# ---- output ----

say() { printf '[bench] %s\n' "$*"; }
# KTAP: ok, not_ok, ktap_finish and the counts ktap_n, ktap_failed
# (common/ktap.sh, which the tests disk has at its top, one directory up).
# shellcheck source-path=SCRIPTDIR source=../../common/ktap.sh
. "$here/../ktap.sh"
comment() { sed 's/^/# /'; }
# emit TYPE JSON: a record for the host, on one line.
emit() { printf 'MSHARE-BENCH-%s %s\n' "$1" "$2"; }

# ---- numbers without forks (a fork would copy the driver's page tables
# while PageTables is being read) ----

# meminfo KEY: REPLY = the kB of KEY in /proc/meminfo (empty if missing).
meminfo() {
	local k v _
	REPLY=
	while read -r k v _; do
		if [ "$k" = "$1:" ]; then REPLY=$v; return 0; fi
	done </proc/meminfo
	return 0
}
# memstat FILE KEY: REPLY = the value of KEY in a memory.stat (empty if none).
memstat() {
	local k v
	REPLY=
	[ -r "$1" ] || return 0
	while read -r k v; do
		if [ "$k" = "$2" ]; then REPLY=$v; return 0; fi
	done <"$1"
	return 0
}
now_ms() { REPLY=${EPOCHREALTIME/./}; REPLY=$((REPLY / 1000)); }
# boot_ms: REPLY = CLOCK_BOOTTIME in ms from /proc/uptime (10 ms steps), the
# clock of the workers' ready_boottime_ms.
boot_ms() {
	local up _
	read -r up _ </proc/uptime
	REPLY=$((${up%.*} * 1000 + 1${up#*.}0 - 1000))
}
# tenths MS: REPLY = MS (>= 0) in seconds with one decimal.
tenths() { REPLY=$(($1 / 1000)).$(($1 % 1000 / 100)); }
# json_num VALUE: VALUE if it is a number, else null.
json_num() { if [[ ${1:-} =~ ^-?[0-9]+(\.[0-9]+)?$ ]]; then printf '%s' "$1"; else printf null; fi; }

# to_bytes 1G / 256M / 65536K / 4096: bytes.
to_bytes() {
	local n=${1%[KkMmGg]} unit=${1##*[0-9]}
	[[ $n =~ ^[0-9]+$ ]] || { echo "bench-guest.sh: bad size '$1'" >&2; exit 2; }
	case $unit in
	'') echo "$n" ;;
	[Kk]) echo $((n * KiB)) ;;
	[Mm]) echo $((n * MiB)) ;;
	[Gg]) echo $((n * GiB)) ;;
	esac
}
size_label() {
	if [ $(($1 % GiB)) = 0 ]; then echo "$(($1 / GiB))G"; else echo "$(($1 / MiB))M"; fi
}

# ---- the environment ----

[ "$(id -u)" = 0 ] || { echo "bench-guest.sh: must run as root" >&2; exit 2; }
if [ -z "$demo_dir" ]; then
	if [ -x /usr/libexec/mshare-demo/demo-worker ]; then
		demo_dir=/usr/libexec/mshare-demo
	else
		demo_dir=$here/bin
	fi
fi
LOAD=$demo_dir/demo-load
WORKER=$demo_dir/demo-worker
for p in "$LOAD" "$WORKER"; do
	[ -x "$p" ] || { echo "bench-guest.sh: $p missing (make -C demo-app install, or scripts/bench.sh)" >&2; exit 2; }
done

cgroups=0
if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then cgroups=1; fi
have_hook=0
[ -x "$HOOK" ] && have_hook=1
have_crun=0
command -v crun >/dev/null && have_crun=1

# launch_of BACKING: containers or processes, from --launch.
launch_of() {
	local l=$launch pair
	if [[ $l == *=* ]]; then
		l=auto
		for pair in ${launch//,/ }; do
			[ "${pair%%=*}" != "$1" ] || l=${pair#*=}
		done
	fi
	if [ "$l" = auto ]; then
		if [ $have_hook = 1 ] && [ $have_crun = 1 ] && [ $cgroups = 1 ]; then l=containers; else l=processes; fi
	fi
	echo "$l"
}
for b in ${backings//,/ }; do
	case $b in mshare | shm | hugetlb) ;; *) echo "bench-guest.sh: unknown backing '$b'" >&2; exit 2 ;; esac
	case $(launch_of "$b") in
	processes) ;;
	containers)
		[ $have_crun = 1 ] || { echo "bench-guest.sh: containers need crun" >&2; exit 2; }
		[ $cgroups = 1 ] || { echo "bench-guest.sh: containers need cgroup v2 here" >&2; exit 2; }
		;;
	*) echo "bench-guest.sh: --launch: expected auto, containers or processes" >&2; exit 2 ;;
	esac
done

meminfo MemTotal
mem_total=$REPLY
reserve=${BENCH_RESERVE_KB:-$((mem_total / 20 > 262144 ? mem_total / 20 : 262144))}
ncpu=$(nproc)

# ---- cleanup ----

owner_was_active=0
systemctl -q is-active "$OWNER_UNIT" 2>/dev/null && owner_was_active=1
hugepages_orig=$(cat /proc/sys/vm/nr_hugepages)
PIDS=() IDS=()
finished=0

kill_workers() {
	local cg id
	if [ $cgroups = 1 ] && [ -d "$CG_ROOT" ]; then
		for cg in "$CG_ROOT"/*/; do
			[ -d "$cg" ] || continue
			echo 1 >"$cg/cgroup.kill" 2>/dev/null || true
		done
	fi
	# By pid only what is still ours: a container's pid may have been
	# reaped by systemd and reused.
	for id in "${PIDS[@]}"; do
		[ -n "$id" ] || continue
		case $(cat "/proc/$id/comm" 2>/dev/null) in
		demo-worker | mshare-ctl) kill -KILL "$id" 2>/dev/null || true ;;
		esac
	done
	if [ $have_crun = 1 ]; then
		for id in $(crun list -q 2>/dev/null | grep '^mb-' || true); do
			crun delete -f "$id" >/dev/null 2>&1 || true
		done
	fi
	wait 2>/dev/null || true
	if [ $cgroups = 1 ] && [ -d "$CG_ROOT" ]; then
		for cg in "$CG_ROOT"/*/; do
			if [ -d "$cg" ]; then rmdir "$cg" 2>/dev/null || true; fi
		done
	fi
	PIDS=() IDS=()
}
cleanup() {
	local rc=$?
	kill_workers
	umount "$WORK/shm" 2>/dev/null || true
	umount "$WORK/huge" 2>/dev/null || true
	echo "$hugepages_orig" >/proc/sys/vm/nr_hugepages 2>/dev/null || true
	if [ -f "$CONF" ]; then
		rm -f "$CONF"
		systemctl stop "$OWNER_UNIT" 2>/dev/null || true
		[ $owner_was_active = 0 ] || systemctl start "$OWNER_UNIT" 2>/dev/null || true
	fi
	[ $cgroups = 0 ] || rmdir "$CG_ROOT" 2>/dev/null || true
	rm -rf "$WORK/points" "$WORK/bundles"
	if [ $finished = 0 ]; then
		emit END "$(jq -n -c --argjson tap "$ktap_n" --argjson failed "$ktap_failed" --argjson rc "$rc" \
			'{type: "end", complete: false, tap: $tap, tap_failed: $failed, status: $rc}')"
		say "interrupted (status $rc): the run did not complete"
	fi
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

mkdir -p "$WORK/points" "$WORK/bundles"
if [ $cgroups = 1 ]; then
	mkdir -p "$CG_ROOT"
	grep -qw memory /sys/fs/cgroup/cgroup.subtree_control ||
		echo +memory >/sys/fs/cgroup/cgroup.subtree_control
	echo +memory >"$CG_ROOT/cgroup.subtree_control"
fi
echo -1000 >/proc/self/oom_score_adj 2>/dev/null || true

# ---- containers ----

ROOTFS=$WORK/rootfs
BASE_SPEC=$WORK/spec/config.json
make_rootfs() {
	[ -x "$ROOTFS/bin/busybox" ] && return 0
	mkdir -p "$ROOTFS"/{bin,proc,sys,dev,tmp,run,etc,demo,sync,pool}
	cp /bin/busybox "$ROOTFS/bin/busybox"
	ln -sf busybox "$ROOTFS/bin/sh"
	mkdir -p "$WORK/spec"
	(cd "$WORK/spec" && crun spec)
}

# container_template SPEC SYNC POOLDIR MSHARE: a config.json with @ID@ and
# @SEED@ left to fill in: the worker in a read-only busybox root, the demo
# binaries read-only on /demo, the point's FIFO directory on /sync, the
# pool's directory on /pool (shm, hugetlb), a tmpfs /run (where the hook
# puts the channel), a cgroup of its own; for mshare the hook and the
# annotation.
container_template() {
	jq -c --arg root "$ROOTFS" --arg demo "$demo_dir" --arg sync "$2" --arg pool "$3" \
		--argjson mshare "$4" --arg hook "$HOOK" --arg region "$REGION" \
		--arg spec "$1" --arg secs "$seconds" --arg mix "$mix" '
	  .process.terminal = false
	| .process.args = ["/demo/demo-worker", "--backing=\($spec)", "--seconds=\($secs)", "--mix=\($mix)",
	                   "--seed=@SEED@", "--id=@ID@", "--ready=/sync/ready", "--go=/sync/go"]
	| .process.oomScoreAdj = 1000
	| .root = {"path": $root, "readonly": true}
	| .mounts += [
	    {"destination": "/demo", "type": "bind", "source": $demo, "options": ["bind", "ro"]},
	    {"destination": "/sync", "type": "bind", "source": $sync, "options": ["bind", "rw"]},
	    {"destination": "/run", "type": "tmpfs", "source": "tmpfs",
	     "options": ["nosuid", "nodev", "mode=755", "size=1024k"]}]
	| if $pool != "" then .mounts += [{"destination": "/pool", "type": "bind", "source": $pool,
	                                   "options": ["bind", "rw"]}] else . end
	| .linux.cgroupsPath = "/mshare-bench/@ID@"
	| if $mshare then
	    .annotations = {"io.mshare.regions": "\($region):rw"}
	  | .hooks = {"createRuntime": [{"path": $hook, "args": ["mshare-oci-hook", "createRuntime"]}],
	              "poststop": [{"path": $hook, "args": ["mshare-oci-hook", "poststop"]}]}
	  else . end' "$BASE_SPEC"
}

# ---- pools ----

# setup_pool BACKING BYTES: makes and loads the pool; sets SPEC_HOST (the
# worker's --backing as a process), SPEC_CT (in a container), POOL_DIR
# (the directory bound to /pool, or empty). On failure returns 1 with
# SETUP_REASON.
SETUP_REASON='' SPEC_HOST='' SPEC_CT='' POOL_DIR=''
setup_pool() {
	local backing=$1 bytes=$2 out state need got
	SETUP_REASON='' POOL_DIR=''
	case $backing in
	mshare)
		mkdir -p "$(dirname "$CONF")"
		cat >"$CONF" <<-CONF
		# The benchmark's buffer pool (demo-app/bench/bench-guest.sh).
		[Region]
		Name=$REGION
		Size=$bytes
		Backing=anonymous
		Protection=rw
		Populate=no

		[Grant]
		Region=$REGION
		Mode=rw
		User=root

		[Grant]
		Region=$REGION
		Mode=rw
		Annotation=io.mshare.regions=*$REGION*
		CONF
		systemctl reset-failed "$OWNER_UNIT" 2>/dev/null || true
		if ! systemctl restart "$OWNER_UNIT" >/dev/null 2>&1; then
			# The daemon's own words (such as "the running kernel has no
			# mshare system calls") say more than systemctl.
			out=$(journalctl -b -q -o cat SYSLOG_IDENTIFIER=mshare-owner -p err -n 2 --no-pager 2>&1 | tr '\n' ' ')
			SETUP_REASON="mshare-owner did not start: ${out:-see its journal}"
			journalctl -b -u "$OWNER_UNIT" -n 20 --no-pager 2>&1 | comment
			return 1
		fi
		state=$(mshare-ctl --json list 2>&1 | jq -r --arg n "$REGION" '.[] | select(.name == $n) | "\(.state) \(.size)"' 2>&1) || true
		if [ "$state" != "active $bytes" ]; then
			SETUP_REASON="region $REGION is '${state:-missing}', expected 'active $bytes'"
			journalctl -b -u "$OWNER_UNIT" -n 20 --no-pager 2>&1 | comment
			return 1
		fi
		SPEC_HOST=mshare:$REGION SPEC_CT=mshare:$REGION
		if ! out=$(mshare-ctl run "$REGION" -- "$LOAD" --backing=mshare --size="$bytes" 2>&1); then
			SETUP_REASON="demo-load on the region failed: $(tail -n 3 <<<"$out" | tr '\n' ' ')"
			return 1
		fi
		;;
	shm)
		mkdir -p "$WORK/shm"
		if ! out=$(mount -t tmpfs -o "size=$((bytes / KiB + 16384))k,mode=1777" bench-shm "$WORK/shm" 2>&1); then
			SETUP_REASON="mounting a tmpfs for the pool failed: $out"
			return 1
		fi
		POOL_DIR=$WORK/shm SPEC_HOST=shm:$WORK/shm/pool SPEC_CT=shm:/pool/pool
		if ! out=$("$LOAD" --backing="$SPEC_HOST" --size="$bytes" 2>&1); then
			SETUP_REASON="demo-load on shm failed: $(tail -n 3 <<<"$out" | tr '\n' ' ')"
			return 1
		fi
		;;
	hugetlb)
		meminfo Hugepagesize
		need=$((bytes / KiB / REPLY))
		got=$hugepages_orig
		if [ "$got" -lt "$need" ]; then
			echo "$need" >/proc/sys/vm/nr_hugepages 2>/dev/null || true
			got=$(cat /proc/sys/vm/nr_hugepages)
		fi
		meminfo HugePages_Free
		if [ "$REPLY" -lt "$need" ]; then
			SETUP_REASON="reserving $need huge pages for the pool failed: nr_hugepages is $got, $REPLY free"
			echo "$hugepages_orig" >/proc/sys/vm/nr_hugepages 2>/dev/null || true
			return 1
		fi
		mkdir -p "$WORK/huge"
		if ! out=$(mount -t hugetlbfs -o mode=1777 bench-huge "$WORK/huge" 2>&1); then
			SETUP_REASON="mounting hugetlbfs failed: $out"
			return 1
		fi
		POOL_DIR=$WORK/huge SPEC_HOST=hugetlb:$WORK/huge/pool SPEC_CT=hugetlb:/pool/pool
		if ! out=$("$LOAD" --backing="$SPEC_HOST" --size="$bytes" 2>&1); then
			SETUP_REASON="demo-load on hugetlbfs failed: $(tail -n 3 <<<"$out" | tr '\n' ' ')"
			return 1
		fi
		;;
	esac
	local line
	line=$(grep '^{' <<<"$out" | tail -n 1)
	emit POOL "$(jq -c --arg b "$backing" --argjson bytes "$bytes" \
		'{type: "pool", backing: $b, pool_bytes: $bytes, load: .}' <<<"${line:-null}" 2>/dev/null ||
		echo "{\"type\":\"pool\",\"backing\":\"$backing\",\"pool_bytes\":$bytes,\"load\":null}")"
	say "$backing $(size_label "$bytes"): pool loaded ($(jq -r '"\(.records) records in \(.load_ms / 1000 * 10 | round / 10) s"' <<<"${line:-null}" 2>/dev/null || echo '?'))"
	return 0
}

teardown_pool() {
	case $1 in
	mshare) systemctl stop "$OWNER_UNIT" 2>/dev/null || true ;;
	shm) rm -f "$WORK/shm/pool"; umount "$WORK/shm" 2>/dev/null || true ;;
	hugetlb)
		rm -f "$WORK/huge/pool"
		umount "$WORK/huge" 2>/dev/null || true
		echo "$hugepages_orig" >/proc/sys/vm/nr_hugepages 2>/dev/null || true
		;;
	esac
}

# ---- memory estimate ----

# fits BACKING BYTES N LAUNCH: whether N workers are expected to fit in
# memory now; FIT_REASON says why not.
FIT_REASON=
fits() {
	local backing=$1 bytes=$2 n=$3 launch=$4 pt over need avail
	case $backing in
	shm) pt=$((bytes / KiB / 512)) ;;                  # 8 bytes of PTE per 4 KiB page
	hugetlb) pt=$((bytes * 4 / GiB + 4)) ;;            # a PMD table per GiB
	mshare) pt=0 ;;
	esac
	if [ "$launch" = containers ]; then over=${BENCH_OVERHEAD_KB:-3072}; else over=${BENCH_OVERHEAD_KB:-1024}; fi
	need=$((n * (pt + over)))
	meminfo MemAvailable
	avail=$((REPLY - reserve))
	if [ "$need" -le "$avail" ]; then return 0; fi
	FIT_REASON="would not fit: $n workers need about $((need / 1024)) MiB ($pt kB of page tables and $over kB otherwise each), MemAvailable is $((REPLY / 1024)) MiB less a reserve of $((reserve / 1024)) MiB"
	return 1
}

# sweep BYTES: the worker counts for one pool size: --workers, and with a
# trailing + doublings while shm is estimated to fit (MemAvailable now,
# less the pool and the reserve).
sweep() {
	local bytes=$1 list=${workers%+} n last=1 per limit
	for n in ${list//,/ }; do echo "$n"; last=$n; done
	[[ $workers == *+ ]] || return 0
	meminfo MemAvailable
	per=$((bytes / KiB / 512 + ${BENCH_OVERHEAD_KB:-3072}))
	limit=$(((REPLY - bytes / KiB - reserve) / per))
	[ "$limit" -le "$max_workers" ] || limit=$max_workers
	n=$((last * 2))
	while [ "$n" -le "$limit" ]; do echo "$n"; n=$((n * 2)); done
}

# ---- one point ----

alive_count() {
	local p st _ n=0
	for p in "${PIDS[@]}"; do
		[ -n "$p" ] || continue
		{ read -r _ _ st _ <"/proc/$p/stat"; } 2>/dev/null || continue
		[ "$st" = Z ] || n=$((n + 1))
	done
	REPLY=$n
}

declare -A RESULT # backing:bytes:n -> the point's JSON
POINTS_OK=0 POINTS_FAILED=0 POINTS_SKIPPED=0

# skip_point BACKING BYTES N LAUNCH REASON: a point not run (TAP skip).
skip_point() {
	local label
	label="$1 $(size_label "$2") $3 workers"
	emit POINT "$(jq -n -c --arg mode "$mode" --arg b "$1" --argjson bytes "$2" --arg pool "$(size_label "$2")" \
		--argjson n "$3" --arg launch "$4" --arg reason "$5" \
		'{type: "point", mode: $mode, backing: $b, pool_bytes: $bytes, pool: $pool, workers: $n,
		  launch: $launch, status: "skipped", reason: $reason}')"
	say "$label: skipped: $5"
	ok "$label # SKIP $5"
	POINTS_SKIPPED=$((POINTS_SKIPPED + 1))
}

# run_point BACKING BYTES N LAUNCH: returns 0 if the point completed
# without a failure; sets POINT (its JSON).
POINT=
run_point() {
	local backing=$1 bytes=$2 n=$3 launch=$4
	local size mb label key prefix pt i id template seed status=ok reason=''
	size=$(size_label "$bytes") mb=$((bytes / MiB))
	label="$backing $size $n workers"
	key=$backing-${mb}M-$n prefix=mb-$backing-$mb-$n
	pt=$WORK/points/$key
	rm -rf "$pt"
	mkdir -p "$pt"
	mkfifo "$pt/ready" "$pt/go"
	chmod 0666 "$pt/ready" "$pt/go"
	if [ "$launch" = containers ]; then
		make_rootfs
		template=$(container_template "$SPEC_CT" "$pt" "$POOL_DIR" "$([ "$backing" = mshare ] && echo true || echo false)")
	fi
	say "$label ($launch): starting"

	local pt_before avail_before owner_pt_before t0 boot0 t_launched t_ready t_go t_done
	exec 3<>"$pt/ready"
	meminfo MemAvailable
	avail_before=$REPLY
	memstat "$OWNER_CG/memory.stat" pagetables
	owner_pt_before=$REPLY
	meminfo PageTables
	pt_before=$REPLY
	now_ms
	t0=$REPLY
	boot_ms
	boot0=$REPLY
	PIDS=() IDS=()
	local launch_failed=0
	for ((i = 1; i <= n; i++)); do
		id=$prefix-$i seed=$((mb * 100000 + n * 10 + i))
		IDS+=("$id")
		if [ "$launch" = containers ]; then
			mkdir -p "$WORK/bundles/$id"
			local cfg=${template//@ID@/$id}
			printf '%s\n' "${cfg//@SEED@/$seed}" >"$WORK/bundles/$id/config.json"
			if crun run -d --pid-file "$WORK/bundles/$id/pid" -b "$WORK/bundles/$id" "$id" \
				>"$pt/out.$i" 2>"$pt/err.$i" </dev/null; then
				PIDS+=("$(cat "$WORK/bundles/$id/pid" 2>/dev/null || true)")
			else
				PIDS+=("")
				launch_failed=$((launch_failed + 1))
			fi
		else
			local cmd=("$WORKER" --backing="$SPEC_HOST" --seconds="$seconds" --mix="$mix" --seed="$seed"
				--id="$id" --ready="$pt/ready" --go="$pt/go")
			[ "$backing" != mshare ] || cmd=(mshare-ctl run "$REGION" -- "${cmd[@]}")
			if [ $cgroups = 1 ]; then
				mkdir -p "$CG_ROOT/$id"
				(
					exec 3<&-
					echo "$BASHPID" >"$CG_ROOT/$id/cgroup.procs"
					echo 1000 >/proc/self/oom_score_adj
					exec "${cmd[@]}"
				) >"$pt/out.$i" 2>"$pt/err.$i" </dev/null &
			else
				(
					exec 3<&-
					echo 1000 >/proc/self/oom_score_adj
					exec "${cmd[@]}"
				) >"$pt/out.$i" 2>"$pt/err.$i" </dev/null &
			fi
			PIDS+=("$!")
		fi
	done
	now_ms
	t_launched=$REPLY
	if [ "$n" -ge 4 ]; then
		tenths $((t_launched - t0))
		say "$label: $n launched in $REPLY s"
	fi

	# The barrier: every worker says ready once it has touched the whole pool.
	# The fifo is read only once all are launched, so a progress line gives
	# the time the worker itself got ready (its ready_boottime_ms), not the
	# time its line was read.
	local ready_n=0 last=$SECONDS quarter=$(((n + 3) / 4)) exited
	FIFO_PART=
	while [ "$ready_n" -lt "$n" ]; do
		if fifo_line 3 2; then
			printf '%s\n' "$LINE" >>"$pt/ready.jsonl"
			ready_n=$((ready_n + 1)) last=$SECONDS
			if [ "$n" -ge 4 ] && [ $((ready_n % quarter)) = 0 ] && [ "$ready_n" -lt "$n" ]; then
				if [[ $LINE =~ \"ready_boottime_ms\":([0-9]+) ]]; then
					tenths $((BASH_REMATCH[1] > boot0 ? BASH_REMATCH[1] - boot0 : 0))
					say "$label: worker $ready_n of $n ready at $REPLY s"
				fi
			fi
			continue
		fi
		alive_count
		exited=$((n - REPLY))
		if [ $((ready_n + exited)) -ge "$n" ]; then break; fi
		if [ $((SECONDS - last)) -ge "$stall" ]; then
			status=failed reason="no worker got ready for ${stall} s ($ready_n of $n ready)"
			break
		fi
	done
	while fifo_line 3 0.2; do
		printf '%s\n' "$LINE" >>"$pt/ready.jsonl"
		ready_n=$((ready_n + 1))
	done
	# A worker that died halfway through its line leaves a fragment: it goes
	# into the file as it is, and ready.clean below drops it with anything
	# else that does not parse.
	[ -z "$FIFO_PART" ] || printf '%s\n' "$FIFO_PART" >>"$pt/ready.jsonl"
	now_ms
	t_ready=$REPLY
	touch "$pt/ready.jsonl"

	# Measure while every worker holds the whole pool mapped.
	local pt_ready avail_ready owner_pt_ready shmem hp_free
	meminfo PageTables
	pt_ready=$REPLY
	meminfo MemAvailable
	avail_ready=$REPLY
	meminfo Shmem
	shmem=$REPLY
	meminfo HugePages_Free
	hp_free=$REPLY
	memstat "$OWNER_CG/memory.stat" pagetables
	owner_pt_ready=$REPLY
	local cgfiles=()
	if [ $cgroups = 1 ]; then
		for id in "${IDS[@]}"; do [ -r "$CG_ROOT/$id/memory.stat" ] && cgfiles+=("$CG_ROOT/$id/memory.stat"); done
	fi
	if [ ${#cgfiles[@]} -gt 0 ]; then
		awk '$1 == "pagetables" { n = split(FILENAME, a, "/"); printf "{\"id\":\"%s\",\"pagetables\":%s}\n", a[n - 1], $2 }' \
			"${cgfiles[@]}" >"$pt/cg.jsonl"
	else
		: >"$pt/cg.jsonl"
	fi
	local region_pt=null region_attached=null
	if [ "$backing" = mshare ]; then
		local rj
		rj=$(mshare-ctl --json list 2>/dev/null | jq -c --arg n "$REGION" '.[] | select(.name == $n)' 2>/dev/null) || rj=
		if [ -n "$rj" ]; then
			region_pt=$(jq 'if (.pgtables_bytes | type) == "number" then .pgtables_bytes / 1024 | floor else null end' <<<"$rj") || region_pt=null
			region_attached=$(jq '.attached // null' <<<"$rj") || region_attached=null
		fi
	fi

	# Go, and wait for the run to end.
	exec 4<>"$pt/go"
	printf x >&4
	exec 4>&-
	exec 3<&-
	now_ms
	t_go=$REPLY
	local allowed=$((${seconds%.*} + 300 + n)) deadline
	deadline=$((SECONDS + allowed))
	while :; do
		alive_count
		[ "$REPLY" -gt 0 ] || break
		if [ $SECONDS -ge $deadline ]; then
			[ "$status" != ok ] || status=failed reason="$REPLY workers still running $allowed s after go; killed"
			break
		fi
		sleep 0.5
	done
	now_ms
	t_done=$REPLY
	kill_workers

	# What the workers said.
	cat "$pt"/out.* 2>/dev/null | jq -c -R 'fromjson? // empty | select(type == "object")' >"$pt/done.jsonl" || : >"$pt/done.jsonl"
	jq -c -R 'fromjson? // empty | select(type == "object")' "$pt/ready.jsonl" >"$pt/ready.clean" || : >"$pt/ready.clean"
	local args=(--arg type point --arg mode "$mode" --arg backing "$backing" --arg launch "$launch" --arg pool "$size"
		--argjson pool_bytes "$bytes" --argjson workers "$n" --arg mix "$mix"
		--argjson seconds "$(json_num "$seconds")"
		--argjson pagetables_kb_before "$(json_num "$pt_before")"
		--argjson pagetables_kb_ready "$(json_num "$pt_ready")"
		--argjson pagetables_added_kb "$(json_num "$((pt_ready - pt_before))")"
		--argjson owner_pagetables_kb "$(json_num "$([ -n "$owner_pt_ready" ] && echo $((owner_pt_ready / KiB)))")"
		--argjson owner_pagetables_added_kb "$(json_num "$([ -n "$owner_pt_ready" ] && [ -n "$owner_pt_before" ] && echo $(((owner_pt_ready - owner_pt_before) / KiB)))")"
		--argjson region_pagetables_kb "$region_pt" --argjson region_attached "$region_attached"
		--argjson mem_available_kb_before "$(json_num "$avail_before")"
		--argjson mem_available_kb_ready "$(json_num "$avail_ready")"
		--argjson shmem_kb "$(json_num "$shmem")" --argjson hugepages_free "$(json_num "$hp_free")"
		--argjson launch_failed "$launch_failed"
		--argjson launch_s "$(json_num "$(awk -v a="$t0" -v b="$t_launched" 'BEGIN { printf "%.2f", (b - a) / 1000 }')")"
		--argjson all_ready_s "$(json_num "$(awk -v a="$t0" -v b="$t_ready" 'BEGIN { printf "%.2f", (b - a) / 1000 }')")"
		--argjson run_wall_s "$(json_num "$(awk -v a="$t_go" -v b="$t_done" 'BEGIN { printf "%.2f", (b - a) / 1000 }')")"
		--slurpfile ready "$pt/ready.clean" --slurpfile "done" "$pt/done.jsonl" --slurpfile cg "$pt/cg.jsonl")
	POINT=$(jq -n -c "${args[@]}" -f "$here/aggregate.jq")

	# The verdict.
	local done_n errors failed_w
	done_n=$(jq '.done' <<<"$POINT")
	errors=$(jq '.errors // 0' <<<"$POINT")
	failed_w=$((n - done_n))
	if [ "$status" = ok ] && [ "$failed_w" -gt 0 ]; then
		status=failed reason="$failed_w of $n workers gave no result ($ready_n got ready$([ "$launch_failed" = 0 ] || echo ", $launch_failed containers did not start"))"
	fi
	if [ "$status" = ok ] && [ "$errors" != 0 ]; then
		status=failed reason="$errors operations found a missing or torn record"
	fi
	POINT=$(jq -c --arg s "$status" --arg r "$reason" '.status = $s | .reason = (if $r == "" then null else $r end)' <<<"$POINT")
	emit POINT "$POINT"
	emit WORKERS "$(jq -n -c --arg key "$key" --slurpfile ready "$pt/ready.clean" --slurpfile "done" "$pt/done.jsonl" \
		--slurpfile cg "$pt/cg.jsonl" '
		(($ready | map({key: .id, value: .})) | from_entries) as $r
		| (($done | map({key: .id, value: .})) | from_entries) as $d
		| (($cg | map({key: .id, value: .pagetables})) | from_entries) as $c
		| ([$r, $d, $c | keys[]] | unique) as $ids
		| {type: "workers", point: $key,
		   workers: [$ids[] as $i | {id: $i,
		     cg_pagetables_kb: (if $c[$i] == null then null else $c[$i] / 1024 | round end),
		     ready_ms: $r[$i].start_to_ready_ms, proc_ready_ms: $r[$i].proc_start_to_ready_ms,
		     warmup_minflt: $r[$i].warmup_minflt, vmpte_kb: (if $r[$i] == null then null else $r[$i].vmpte_kb_ready - $r[$i].vmpte_kb_start end),
		     minflt_total: $d[$i].minflt_total, ops_per_sec: $d[$i].ops_per_sec, p99_us: $d[$i].p99_us,
		     errors: $d[$i].errors, done: ($d[$i] != null)}]}')"
	RESULT[$backing:$bytes:$n]=$POINT

	local summary
	summary=$(jq -r '
		def k: if . == null then "?" else tostring end;
		def s1: if . == null then "?" else (. * 10 | round / 10 | tostring) end;
		def ops: if . == null then "?" elif . >= 1e6 then "\(. / 1e4 | round / 100) M" elif . >= 1e3 then "\(. / 10 | round / 100) k" else tostring end;
		"all \(.ready) ready in \(.all_ready_s | s1) s (per worker median \(.ready_ms_median | k) ms, max \(.ready_ms_max | k) ms), PageTables +\(.pagetables_added_kb | k) kB (\(.pagetables_added_kb_per_worker | k) kB/worker), faults/worker \(.warmup_minflt_median | k), \(.ops_per_sec | ops) ops/s, p99 \(.p99_us_max | k) us, \(.errors | k) errors"' <<<"$POINT")
	say "$label ($launch): $summary"
	if [ "$status" = ok ]; then
		ok "$label ($launch): $summary"
		POINTS_OK=$((POINTS_OK + 1))
	else
		not_ok "$label ($launch): $reason"
		POINTS_FAILED=$((POINTS_FAILED + 1))
		for ((i = 1; i <= n && i <= 3; i++)); do
			[ -s "$pt/err.$i" ] || continue
			head -n 3 "$pt/err.$i" | sed "s/^/# worker $i: /"
		done
	fi
	rm -rf "$pt" "$WORK/bundles"/*
	[ "$status" = ok ]
}

# ---- the run ----

header=$(jq -n -c --arg mode "$mode" --arg sizes "$sizes" --arg workers "$workers" --arg backings "$backings" \
	--arg launch "$launch" --argjson seconds "$(json_num "$seconds")" --arg mix "$mix" \
	--arg kernel "$(uname -r)" --arg version "$(uname -v)" --arg cmdline "$(cat /proc/cmdline)" \
	--argjson cpus "$ncpu" --argjson mem_total_kb "$mem_total" --argjson reserve_kb "$reserve" \
	--arg demo_dir "$demo_dir" --argjson hook "$have_hook" --argjson cgroups "$cgroups" \
	--arg crun "$( (crun --version 2>/dev/null || true) | head -n 1)" \
	--arg launch_mshare "$(launch_of mshare)" --arg launch_shm "$(launch_of shm)" --arg launch_hugetlb "$(launch_of hugetlb)" \
	--arg thp "$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || true)" \
	--arg fault_around "$(cat /sys/kernel/debug/fault_around_bytes 2>/dev/null || true)" \
	--arg hugepagesize "$(awk '$1 == "Hugepagesize:" { print $2 }' /proc/meminfo)" \
	'{type: "begin", mode: $mode, sizes: $sizes, workers: $workers, backings: $backings, launch: $launch,
	  launch_by_backing: {mshare: $launch_mshare, shm: $launch_shm, hugetlb: $launch_hugetlb},
	  seconds: $seconds, mix: $mix, warmup: "read", kernel: $kernel, kernel_version: $version, cmdline: $cmdline,
	  cpus: $cpus, mem_total_kb: $mem_total_kb, reserve_kb: $reserve_kb, demo_dir: $demo_dir,
	  hook_installed: ($hook == 1), cgroup2: ($cgroups == 1), crun: $crun, thp: $thp,
	  fault_around_bytes: ($fault_around | tonumber? // null), hugepagesize_kb: ($hugepagesize | tonumber? // null)}')
emit BEGIN "$header"
say "mode $mode: pools $sizes, workers $workers, backings $backings, ${seconds} s $mix runs; kernel $(uname -r), $ncpu CPUs, $((mem_total / 1024)) MiB"
for b in ${backings//,/ }; do
	say "$b workers run as $(launch_of "$b")$([ "$b" != mshare ] || [ $have_hook = 1 ] || echo " (mshare-oci-hook is not installed)")"
done
[ $cgroups = 1 ] || say "no cgroup v2: no per-worker memory.stat"

for s in ${sizes//,/ }; do
	bytes=$(to_bytes "$s")
	list=$(sweep "$bytes" | tr '\n' ' ')
	say "pool $(size_label "$bytes"): worker counts ${list% }"
	for backing in ${backings//,/ }; do
		l=$(launch_of "$backing")
		if [ "$backing" = mshare ] && [ "$l" = containers ] && [ $have_hook = 0 ]; then
			for n in $list; do
				skip_point "$backing" "$bytes" "$n" "$l" "mshare in containers needs $HOOK, which is not installed (--launch mshare=processes)"
			done
			continue
		fi
		if ! setup_pool "$backing" "$bytes"; then
			say "$backing $(size_label "$bytes"): $SETUP_REASON"
			for n in $list; do
				emit POINT "$(jq -n -c --arg mode "$mode" --arg b "$backing" --argjson bytes "$bytes" \
					--arg pool "$(size_label "$bytes")" --argjson n "$n" --arg launch "$l" --arg reason "$SETUP_REASON" \
					'{type: "point", mode: $mode, backing: $b, pool_bytes: $bytes, pool: $pool, workers: $n,
					  launch: $launch, status: "failed", reason: ("setting up the pool: " + $reason)}')"
				not_ok "$backing $(size_label "$bytes") $n workers: setting up the pool: $SETUP_REASON"
				POINTS_FAILED=$((POINTS_FAILED + 1))
			done
			teardown_pool "$backing"
			continue
		fi
		stopped=
		for n in $list; do
			if [ -n "$stopped" ]; then
				skip_point "$backing" "$bytes" "$n" "$l" "$stopped"
				continue
			fi
			if ! fits "$backing" "$bytes" "$n" "$l"; then
				skip_point "$backing" "$bytes" "$n" "$l" "$FIT_REASON"
				stopped="not run: $n workers did not fit before it"
				continue
			fi
			run_point "$backing" "$bytes" "$n" "$l" || stopped="not run: the $n-worker point failed"
		done
		teardown_pool "$backing"
	done
done

# ---- the CI bound (issue 6): at 16 workers on a 1 GiB pool, mshare's
# page-table bytes at least 20 times smaller than shm's, its minor faults
# per worker (mapping the pool) at least 100 times fewer. Counts, not times.
if [ "$mode" = ci ]; then
	b=$(to_bytes "${sizes%%,*}") n=${workers%%,*} n=${n%+}
	m=${RESULT[mshare:$b:$n]:-} s=${RESULT[shm:$b:$n]:-}
	how="workers as $(launch_of mshare) (mshare) and $(launch_of shm) (shm)"
	bound() { # NAME FIELD FACTOR UNIT
		local mv sv verdict
		mv=$(jq -r --arg f "$2" '.[$f] // empty' <<<"$m")
		sv=$(jq -r --arg f "$2" '.[$f] // empty' <<<"$s")
		if [ -z "$mv" ] || [ -z "$sv" ]; then
			not_ok "$1: mshare ${mv:-none} vs shm ${sv:-none}: a point has no number; the bound cannot be checked ($how)"
			return
		fi
		verdict=$(awk -v m="$mv" -v s="$sv" -v f="$3" 'BEGIN {
			if (m < 0) m = 0
			r = (m > 0) ? sprintf("%.1f", s / m) : "inf"
			print ((s >= f * m && s > 0) ? "ok" : "fail"), r }')
		if [ "${verdict%% *}" = ok ]; then
			ok "$1: mshare $mv$4 vs shm $sv$4 (ratio ${verdict#* } >= $3; $n workers, $(size_label "$b") pool, $how)"
		else
			not_ok "$1: mshare $mv$4 vs shm $sv$4 (ratio ${verdict#* }, expected >= $3; $n workers, $(size_label "$b") pool, $how)"
		fi
	}
	if [ -n "$m" ] && [ -n "$s" ]; then
		bound "page tables" pagetables_added_kb 20 " kB"
		bound "minor faults per worker mapping the pool (median of the warm-up)" warmup_minflt_median 100 ""
	else
		not_ok "page tables: the mshare or the shm point did not run; the bound cannot be checked"
		not_ok "minor faults per worker: the mshare or the shm point did not run; the bound cannot be checked"
	fi
fi

ktap_finish || true
finished=1
emit END "$(jq -n -c --argjson ok "$POINTS_OK" --argjson failed "$POINTS_FAILED" --argjson skipped "$POINTS_SKIPPED" \
	--argjson tap "$ktap_n" --argjson tap_failed "$ktap_failed" --argjson secs "$SECONDS" \
	'{type: "end", complete: true, points_ok: $ok, points_failed: $failed, points_skipped: $skipped,
	  tap: $tap, tap_failed: $tap_failed, seconds: $secs}')"
say "done in $SECONDS s: $POINTS_OK points measured, $POINTS_FAILED failed, $POINTS_SKIPPED skipped"
