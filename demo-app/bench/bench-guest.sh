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
# together, and collects their JSON lines. The numbers, the records and the
# verdicts are demo-measure's (demo-app/src/measure.c); this script starts
# and stops things.
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
#                    else bin/ next to this script); demo-measure is taken
#                    from bin/ next to this script, else from DIR
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
[[ $seconds =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "bench-guest.sh: --seconds: expected seconds, such as 2 or 0.5" >&2; exit 2; }

# ---- output ----

say() { printf '[bench] %s\n' "$*"; }
# KTAP: ok, not_ok, ktap_finish and the counts ktap_n, ktap_failed
# (common/ktap.sh, which the tests disk has at its top, one directory up).
# shellcheck source-path=SCRIPTDIR source=../../common/ktap.sh
. "$here/../ktap.sh"
comment() { sed 's/^/# /'; }

# Times for the progress lines and the point's record, without forks.
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
# demo-measure goes with this script's version of the records.
MEASURE=$here/bin/demo-measure
[ -x "$MEASURE" ] || MEASURE=$demo_dir/demo-measure
for p in "$LOAD" "$WORKER" "$MEASURE"; do
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

# ---- cleanup ----

owner_was_active=0
systemctl -q is-active "$OWNER_UNIT" 2>/dev/null && owner_was_active=1
hugepages_orig=$(cat /proc/sys/vm/nr_hugepages)
PIDS=()
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
	PIDS=()
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
	rm -rf "$WORK/points" "$WORK/bundles" "$WORK/results"
	if [ $finished = 0 ]; then
		"$MEASURE" record end complete:=false tap:="$ktap_n" tap_failed:="$ktap_failed" status:="$rc" || true
		say "interrupted (status $rc): the run did not complete"
	fi
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

mkdir -p "$WORK/points" "$WORK/bundles" "$WORK/results"
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

# setup_pool BACKING BYTES SIZE: makes and loads the pool; sets SPEC_HOST (the
# worker's --backing as a process), SPEC_CT (in a container), POOL_DIR
# (the directory bound to /pool, or empty). On failure returns 1 with
# SETUP_REASON.
SETUP_REASON='' SPEC_HOST='' SPEC_CT='' POOL_DIR=''
setup_pool() {
	local backing=$1 bytes=$2 size=$3 out state need got free
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
		need=$((bytes / KiB / $("$MEASURE" meminfo Hugepagesize)))
		got=$hugepages_orig
		if [ "$got" -lt "$need" ]; then
			echo "$need" >/proc/sys/vm/nr_hugepages 2>/dev/null || true
			got=$(cat /proc/sys/vm/nr_hugepages)
		fi
		free=$("$MEASURE" meminfo HugePages_Free)
		if [ "$free" -lt "$need" ]; then
			SETUP_REASON="reserving $need huge pages for the pool failed: nr_hugepages is $got, $free free"
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
	# The POOL record and the progress line, from demo-load's JSON line.
	"$MEASURE" pool "$backing" "$bytes" "$size" <<<"$out"
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

# ---- points ----

alive_count() {
	local p st _ n=0
	for p in "${PIDS[@]}"; do
		[ -n "$p" ] || continue
		{ read -r _ _ st _ <"/proc/$p/stat"; } 2>/dev/null || continue
		[ "$st" = Z ] || n=$((n + 1))
	done
	REPLY=$n
}

POINTS_OK=0 POINTS_FAILED=0 POINTS_SKIPPED=0

# skip_point BACKING BYTES SIZE N LAUNCH REASON: a point not run (TAP skip).
skip_point() {
	local label="$1 $3 $4 workers"
	"$MEASURE" record point mode="$mode" backing="$1" pool_bytes:="$2" pool="$3" workers:="$4" \
		launch="$5" status=skipped reason="$6"
	say "$label: skipped: $6"
	ok "$label # SKIP $6"
	POINTS_SKIPPED=$((POINTS_SKIPPED + 1))
}

# run_point BACKING BYTES SIZE N LAUNCH: returns 0 if the point completed
# without a failure; its POINT record goes to $WORK/results/KEY.json.
run_point() {
	local backing=$1 bytes=$2 size=$3 n=$4 launch=$5
	local mb label key prefix pt i id template seed status=ok reason=''
	mb=$((bytes / MiB))
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

	# The system as the workers start, and once all hold the pool mapped:
	# the same program both times, so its own page tables cancel out.
	local sample=("$MEASURE" sample --owner-cgroup "$OWNER_CG") t0 boot0 t_launched t_ready t_go t_done
	[ $cgroups = 0 ] || sample+=(--cgroups "$CG_ROOT" --prefix "$prefix-")
	exec 3<>"$pt/ready"
	"${sample[@]}" >"$pt/before.json"
	now_ms
	t0=$REPLY
	boot_ms
	boot0=$REPLY
	PIDS=()
	local launch_failed=0
	for ((i = 1; i <= n; i++)); do
		id=$prefix-$i seed=$((mb * 100000 + n * 10 + i))
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
	# into the file as it is, and demo-measure drops it with anything else
	# that does not parse.
	[ -z "$FIFO_PART" ] || printf '%s\n' "$FIFO_PART" >>"$pt/ready.jsonl"
	now_ms
	t_ready=$REPLY
	touch "$pt/ready.jsonl"

	# Measure while every worker holds the whole pool mapped.
	"${sample[@]}" >"$pt/at-ready.json"
	[ "$backing" != mshare ] || mshare-ctl --json list >"$pt/regions.json" 2>/dev/null || true

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

	# The POINT and WORKERS records, and the verdict: demo-measure's.
	local rc=0 summary=''
	"$MEASURE" point --key "$key" --before "$pt/before.json" --at-ready "$pt/at-ready.json" \
		--ready "$pt/ready.jsonl" --done "$pt/out.*" --times "$t0,$t_launched,$t_ready,$t_go,$t_done" \
		--regions "$pt/regions.json" --region "$REGION" --status "$status" --reason "$reason" \
		--save "$WORK/results/$key.json" --verdict "$pt/verdict" \
		mode="$mode" backing="$backing" launch="$launch" pool="$size" pool_bytes:="$bytes" \
		workers:="$n" mix="$mix" seconds:="$seconds" launch_failed:="$launch_failed" || rc=$?
	{ IFS= read -r summary && IFS= read -r reason; } <"$pt/verdict" 2>/dev/null || true
	say "$label ($launch): ${summary:-no numbers}"
	if [ $rc = 0 ]; then
		ok "$label ($launch): $summary"
		POINTS_OK=$((POINTS_OK + 1))
	else
		not_ok "$label ($launch): ${reason:-demo-measure point failed (status $rc)}"
		POINTS_FAILED=$((POINTS_FAILED + 1))
		for ((i = 1; i <= n && i <= 3; i++)); do
			[ -s "$pt/err.$i" ] || continue
			head -n 3 "$pt/err.$i" | sed "s/^/# worker $i: /"
		done
	fi
	rm -rf "$pt" "$WORK/bundles"/*
	[ $rc = 0 ]
}

# ---- the run ----

"$MEASURE" begin mode="$mode" sizes="$sizes" workers="$workers" backings="$backings" launch="$launch" \
	launch_by_backing.mshare="$(launch_of mshare)" launch_by_backing.shm="$(launch_of shm)" \
	launch_by_backing.hugetlb="$(launch_of hugetlb)" seconds:="$seconds" mix="$mix" demo_dir="$demo_dir" \
	hook_installed:="$([ $have_hook = 1 ] && echo true || echo false)" \
	cgroup2:="$([ $cgroups = 1 ] && echo true || echo false)" \
	crun="$( (crun --version 2>/dev/null || true) | head -n 1)"
for b in ${backings//,/ }; do
	say "$b workers run as $(launch_of "$b")$([ "$b" != mshare ] || [ $have_hook = 1 ] || echo " (mshare-oci-hook is not installed)")"
done
[ $cgroups = 1 ] || say "no cgroup v2: no per-worker memory.stat"

for s in ${sizes//,/ }; do
	sz=$("$MEASURE" size "$s")
	read -r bytes size <<<"$sz"
	list=$("$MEASURE" sweep "$bytes" "$workers" "$max_workers")
	say "pool $size: worker counts $list"
	for backing in ${backings//,/ }; do
		l=$(launch_of "$backing")
		if [ "$backing" = mshare ] && [ "$l" = containers ] && [ $have_hook = 0 ]; then
			for n in $list; do
				skip_point "$backing" "$bytes" "$size" "$n" "$l" "mshare in containers needs $HOOK, which is not installed (--launch mshare=processes)"
			done
			continue
		fi
		if ! setup_pool "$backing" "$bytes" "$size"; then
			say "$backing $size: $SETUP_REASON"
			for n in $list; do
				"$MEASURE" record point mode="$mode" backing="$backing" pool_bytes:="$bytes" pool="$size" \
					workers:="$n" launch="$l" status=failed reason="setting up the pool: $SETUP_REASON"
				not_ok "$backing $size $n workers: setting up the pool: $SETUP_REASON"
				POINTS_FAILED=$((POINTS_FAILED + 1))
			done
			teardown_pool "$backing"
			continue
		fi
		stopped=
		for n in $list; do
			if [ -n "$stopped" ]; then
				skip_point "$backing" "$bytes" "$size" "$n" "$l" "$stopped"
				continue
			fi
			# Exit status 1: would not fit, and why; 2: the estimate failed.
			fit=$("$MEASURE" fits "$backing" "$bytes" "$n" "$l") && rc=0 || rc=$?
			if [ "$rc" != 0 ]; then
				skip_point "$backing" "$bytes" "$size" "$n" "$l" "${fit:-the memory estimate failed}"
				stopped="not run: $n workers did not fit before it"
				continue
			fi
			run_point "$backing" "$bytes" "$size" "$n" "$l" || stopped="not run: the $n-worker point failed"
		done
		teardown_pool "$backing"
	done
done

# ---- the CI bound (issue 6): at 16 workers on a 1 GiB pool, mshare's
# page-table bytes at least 20 times smaller than shm's, its minor faults
# per worker (mapping the pool) at least 100 times fewer. Counts, not times.
if [ "$mode" = ci ]; then
	read -r b size <<<"$("$MEASURE" size "${sizes%%,*}")"
	n=${workers%%,*} n=${n%+}
	checks=()
	mapfile -t checks < <("$MEASURE" bound --mshare "$WORK/results/mshare-$((b / MiB))M-$n.json" \
		--shm "$WORK/results/shm-$((b / MiB))M-$n.json" \
		--context "$n workers, $size pool, workers as $(launch_of mshare) (mshare) and $(launch_of shm) (shm)" || true)
	[ ${#checks[@]} = 2 ] || checks=("not ok - the bound: demo-measure bound failed" "not ok - the bound: no second check")
	for c in "${checks[@]}"; do
		case $c in
		"ok - "*) ok "${c#ok - }" ;;
		*) not_ok "${c#not ok - }" ;;
		esac
	done
fi

ktap_finish || true
finished=1
"$MEASURE" record end complete:=true points_ok:="$POINTS_OK" points_failed:="$POINTS_FAILED" \
	points_skipped:="$POINTS_SKIPPED" tap:="$ktap_n" tap_failed:="$ktap_failed" seconds:="$SECONDS"
say "done in $SECONDS s: $POINTS_OK points measured, $POINTS_FAILED failed, $POINTS_SKIPPED skipped"
