#!/usr/bin/env bash
# scripts/bench.sh [--quick | --ci | --demo | --postgres] [--sizes 1G,4G] [--workers 1,16,64,256+]
#                  [--backings mshare,shm,hugetlb] [--launch auto|containers|processes|B=MODE,...]
#                  [--seconds S] [--kernel DIR] [--image FILE] [--mem 8G] [--smp 2]
#                  [--timeout SEC] [--out DIR] [--name NAME] [--verbose] [--stage DIR]
# `make bench`: the database-style demo workers (demo-app/) on one shared
# buffer pool, on three backings side by side (an mshare region, plain
# shared memory, hugetlbfs), in one boot of the guest image on the release
# kernel under QEMU TCG. The in-guest driver is demo-app/bench/bench-guest.sh;
# this script builds what it needs (or reuses the caches), boots the guest,
# takes the driver's records from the serial log, and writes
# OUT/NAME.md (tables, ratios, the command, kernel and guest), OUT/NAME.jsonl
# (the records) and PNG plots (gnuplot), and copies the report to
# OUT/latest.md.
#   (default)      pools 1G,4G; workers 1,16,64,256 and doubling while the
#                  plain backing fits; 10 s runs; an 8G guest (to 1024
#                  workers on 1G and 256 on 4G; about 80 min in the guest)
#   --quick        a 256M pool, workers 1,16,64, 5 s runs, a 4G guest
#   --ci           issue 6's bound: 16 workers on a 1G pool, mshare and shm,
#                  2 s runs; TAP "ok" only if mshare's page tables are at least
#                  20x and its warm-up faults per worker at least 100x fewer.
#                  Writes to $MSHARE_CACHE/bench/, not OUT/latest.md
#   --demo         the defaults of scripts/demo.sh (256M, 16 workers, mshare
#                  and shm, 5 s); writes to $MSHARE_CACHE/bench/
#   --postgres     the PostgreSQL scenario instead (image/tests/postgres/
#                  bench.sh in a 12G guest): plain, mshare-run and
#                  huge_pages=on at each of --clients (default 16,64,256),
#                  mshare alone at --more; --ways, --buffers (shared_buffers,
#                  MiB), --seconds (tps runs); report and plots by
#                  preload/bench/ into OUT/bench-pg-YYYYMMDD-HHMM.*
#   --sizes, --workers, --backings, --launch, --seconds   override the mode's
#                  (see demo-app/bench/bench-guest.sh --help; --launch auto runs
#                  containers once mshare-oci-hook is in the image, processes
#                  until then)
#   --kernel DIR   a kernel directory with bzImage (default: build or reuse the
#                  release kernel, kernel/scripts/build.sh release)
#   --mem, --smp   the guest (default 8G for the full bench, 4G otherwise; 2 CPUs)
#   --timeout SEC  of the whole QEMU run (default by mode: 43200, 10800 quick,
#                  5400 ci, 3600 demo)
#   --out DIR      where the results go (default docs/results)
#   --name NAME    file names (default bench-YYYYMMDD-HHMM, -quick appended for --quick)
#   --verbose      show the whole serial console instead of the progress lines
#   --stage DIR    only make the tests-disk directory for image/run-tests.sh
#                  --extra-dir DIR (bench/ and the list NAME.list, NAME bench or
#                  bench-ci) and print DIR; nothing is booted
# Exit status 0 only if the guest run passed (its serial log as
# common/build/ktap-judge reads it) and every point that ran was measured
# without a failure. The last line is the judge's `N passed, N failed`, with
# one more failure if the run passed and the measurement did not.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../kernel/scripts/common.sh
. "$(dirname "$0")/../kernel/scripts/common.sh"

mode=bench
gargs=()
pargs=()
kdir='' image='' mem='' smp=2 tmo='' out='' name='' verbose=0 stage_only=''
argv=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	--quick) mode=quick ;;
	--ci) mode=ci ;;
	--demo) mode=demo ;;
	--postgres) mode=postgres ;;
	--clients | --more | --ways | --buffers)
		[[ ${2:-} =~ ^[A-Za-z0-9,]+$ ]] || die "$1: expected a list such as 16,64 (got '${2:-}')"
		pargs+=("$1" "$2")
		shift
		;;
	--sizes | --workers | --backings | --launch | --seconds)
		# They go into the test list as they are: plain words only.
		[[ ${2:-} =~ ^[A-Za-z0-9,=+._-]+$ ]] || die "$1: expected a list such as 1,16,64 (got '${2:-}')"
		gargs+=("$1" "$2")
		shift
		;;
	--kernel) kdir=$2; shift ;;
	--image) image=$2; shift ;;
	--mem) mem=$2; shift ;;
	--smp) smp=$2; shift ;;
	--timeout) tmo=$2; shift ;;
	--out) out=$2; shift ;;
	--name) name=$2; shift ;;
	--verbose) verbose=1 ;;
	--stage) stage_only=$2; shift ;;
	-h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	*) die "unknown option '$1' (see --help)" ;;
	esac
	shift
done
list=bench
[ $mode != ci ] || list=bench-ci
[ $mode != postgres ] || list=bench-pg
bench_src=$REPO_DIR/demo-app/bench

# stage DIR: the tests disk's extra directory: the driver, the static demo
# binaries and demo-measure (built here: the image may not have them yet),
# and the list with the driver's command line.
stage() {
	local d=$1
	if [ $mode = postgres ]; then
		# The driver is on the tests disk with image/tests/; --seconds is
		# the length of its tps runs.
		mkdir -p "$d"
		{
			echo "# The PostgreSQL scenario of make bench, made by scripts/bench.sh --postgres"
			echo "postgres/bench.sh${pargs[*]:+ ${pargs[*]}}${gargs[*]:+ ${gargs[*]}}"
		} >"$d/$list.list"
		return
	fi
	make -s -C "$REPO_DIR/demo-app" >&2 || die "building demo-app failed (make -C demo-app)"
	mkdir -p "$d/bench/bin"
	install -m 0755 "$bench_src/bench-guest.sh" "$d/bench/bench-guest.sh"
	install -m 0644 "$bench_src/fifo-line.sh" "$d/bench/"
	install -m 0755 "$REPO_DIR/demo-app/build/demo-load" "$REPO_DIR/demo-app/build/demo-worker" \
		"$REPO_DIR/demo-app/build/demo-measure" "$d/bench/bin/"
	{
		echo "# The mshare benchmark (issue 6), made by scripts/bench.sh"
		echo "bench/bench-guest.sh --mode $mode${gargs[*]:+ ${gargs[*]}}"
	} >"$d/$list.list"
}
if [ -n "$stage_only" ]; then
	mkdir -p "$stage_only"
	stage "$stage_only"
	echo "$stage_only"
	exit 0
fi

case $mode in
bench) : "${mem:=8G}" "${tmo:=43200}" ;;
quick) : "${mem:=4G}" "${tmo:=10800}" ;;
ci) : "${mem:=4G}" "${tmo:=5400}" ;;
demo) : "${mem:=4G}" "${tmo:=3600}" ;;
postgres) : "${mem:=12G}" "${tmo:=21600}" ;;
esac
stamp=$(date -u +%Y%m%d-%H%M)
if [ -z "$out" ]; then
	case $mode in
	bench | quick | postgres) out=$REPO_DIR/docs/results ;;
	*) out=$MSHARE_CACHE/bench ;;
	esac
fi
if [ -z "$name" ]; then
	case $mode in
	bench) name=bench-$stamp ;;
	postgres) name=bench-pg-$stamp ;;
	*) name=bench-$stamp-$mode ;;
	esac
fi
mkdir -p "$out" "$MSHARE_CACHE/logs"
command -v jq >/dev/null || die "jq missing (apt-get install jq)"

# The kernel: the release build (no debug options), unless given.
if [ -z "$kdir" ]; then
	log "building or reusing the release kernel (kernel/scripts/build.sh release)"
	kdir=$("$KERNEL_DIR/scripts/build.sh" release)
fi
[ -f "$kdir/bzImage" ] || die "no bzImage in $kdir"
case ${kdir##*/} in
release-*) ;;
*) log "warning: ${kdir##*/} is not a release kernel build: times are not benchmark figures" ;;
esac
[ -n "$image" ] || image=$("$REPO_DIR/image/build.sh")
[ -f "$image" ] || die "image $image missing"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mshare-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
stage "$tmp/stage"

logf=$MSHARE_CACHE/logs/$name.log
started=$(date -u '+%Y-%m-%d %H:%M UTC')
host="$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
log "booting the guest ($mem, $smp CPUs, TCG) with ${kdir##*/}; serial log: $logf"
log "the driver: $(sed -n 2p "$tmp/stage/$list.list")"
# The entry may run until shortly before QEMU's timeout (boot takes minutes).
entry_tmo=$((tmo > 1800 ? tmo - 900 : tmo / 2))
rc=0
{
	"$REPO_DIR/image/run-tests.sh" --tests "$list" --extra-dir "$tmp/stage" --kernel "$kdir" \
		--image "$image" --mem "$mem" --smp "$smp" --timeout "$tmo" --test-timeout "$entry_tmo" \
		--log "$logf" 2>&1 || echo "bench.sh: run-tests.sh status $?"
} | sed -u 's/\r//g' | tee "$tmp/run.out" | {
	if [ $verbose = 1 ]; then
		cat
	else
		grep --line-buffered -aE '^ *\[bench\]|^mshare-tests: |^\[[0-9:]+\] |^ktap-judge: |^bench.sh: ' || true
	fi
}
if grep -q '^bench.sh: run-tests.sh status' "$tmp/run.out"; then
	rc=$(sed -n 's/^bench.sh: run-tests.sh status \([0-9]*\)/\1/p' "$tmp/run.out" | tail -n 1)
fi
verdict=$(grep -a '^ktap-judge: verdict=' "$tmp/run.out" | tail -n 1 || true)
# The judge's counts: the last line of run-tests.sh.
read -r gp _ gf _ < <(grep -aE '^[0-9]+ passed, [0-9]+ failed$' "$tmp/run.out" | tail -n 1) || true

# The records: MSHARE-BENCH-<TYPE> {json}, one per line. A line the console
# garbled (kernel output in the middle of it) does not parse and is counted.
# pg_report RECORDS: the PostgreSQL scenario's report and plots
# (preload/bench/), then the exit status as below.
pg_report() {
	local plots='' f
	if command -v gnuplot >/dev/null && [ "$points" -gt 0 ]; then
		while read -r f; do
			case $f in
			*-pg-pagetables.png) plots+="${f##*/}:page tables of all backends against clients"$'\n' ;;
			*-pg-faults.png) plots+="${f##*/}:minor faults a backend against clients"$'\n' ;;
			esac
		done < <(bash "$REPO_DIR/preload/bench/plot.sh" "$1" "$out/$name" || true)
	fi
	jq -r -s -f "$REPO_DIR/preload/bench/report.jq" --arg command "scripts/bench.sh ${argv[*]}" \
		--arg kernel "${kdir##*/}" --arg date "$started" --arg host "$host" --arg plots "$plots" \
		--arg qemu "QEMU TCG, \`-m $mem -smp $smp\`" \
		--arg verdict "${verdict:-no verdict from the log judge (run-tests.sh status $rc)}" "$1" >"$out/$name.md"
	log "results: $out/$name.md ($points points)"
	[ "$rc" = 0 ] && [ "$complete" != 0 ] && [ "$failed" = 0 ]
}

jsonl=$out/$name.jsonl
bad=0
: >"$jsonl"
while IFS= read -r line; do
	if jq -e -c 'select(type == "object")' <<<"$line" >>"$jsonl" 2>/dev/null; then :; else bad=$((bad + 1)); fi
done < <(tr -d '\r' <"$logf" | sed -n 's/^.*MSHARE-BENCH-[A-Z]* \({.*}\)[[:space:]]*$/\1/p')
points=$(jq -s 'map(select(.type == "point")) | length' "$jsonl")
complete=$(jq -s 'map(select(.type == "end" and .complete)) | length' "$jsonl")
failed=$(jq -s 'map(select(.type == "point" and .status == "failed")) | length' "$jsonl")
[ "$bad" = 0 ] || log "warning: $bad record lines in the log did not parse (garbled on the console); they are missing from the results"

# Plots and the report.
plots=()
if [ $mode = postgres ]; then
	pg_report "$jsonl"
	exit $?
fi
if [ "$points" -gt 0 ]; then
	if command -v gnuplot >/dev/null; then
		while read -r f; do
			case $f in
			*-pagetables.png) plots+=("${f##*/}:page tables added against workers") ;;
			*-startup.png) plots+=("${f##*/}:start to ready against workers") ;;
			esac
		done < <(bash "$bench_src/plot.sh" "$jsonl" "$out/$name" || true)
	else
		log "gnuplot is not installed (apt-get install gnuplot-nox): no plots"
	fi
fi
cmdline="scripts/bench.sh${argv[*]:+ ${argv[*]}}"
[[ " ${argv[*]} " == *" --kernel "* ]] || cmdline+=" (kernel: ${kdir##*/})"
report=(--command "$cmdline" --kernel-dir "$kdir" --image "$image" --date "$started" --host "$host"
	--qemu "QEMU $(qemu-system-x86_64 --version | sed -n '1s/.*version \([^ ]*\).*/\1/p') TCG (\`-accel tcg,thread=multi -cpu max\`), \`-m $mem -smp $smp\`"
	--verdict "${verdict:-no verdict from the log judge (run-tests.sh status $rc)}")
for p in "${plots[@]}"; do report+=(--plot "$p"); done
{
	bash "$bench_src/report.sh" "${report[@]}" "$jsonl"
	if [ "$bad" != 0 ]; then
		echo
		echo "**$bad record lines in the serial log did not parse** (kernel output in the middle of them); those points are missing above."
	fi
	echo
	echo "Serial log of the run: \`$logf\` (not kept in the repository)."
} >"$out/$name.md"
case $mode in bench | quick) cp "$out/$name.md" "$out/latest.md" ;; esac

log "results: $out/$name.md ($points points${plots:+, ${#plots[@]} plots})"
status=0
if [ "$rc" != 0 ]; then
	log "the guest run did not pass: ${verdict:-run-tests.sh status $rc}"
	status=1
fi
if [ "$complete" = 0 ]; then
	log "the driver did not complete (no end record): the results are partial"
	status=1
fi
if [ "$failed" != 0 ]; then
	log "$failed points failed (see the report)"
	status=1
fi
# The judge's counts, as the other parts of `make test` end.
if [ -n "${gp:-}" ]; then
	[ $status = 0 ] || [ "$gf" != 0 ] || gf=1
	echo "$gp passed, $gf failed"
else
	echo "0 passed, 1 failed"
fi
exit $status
