#!/usr/bin/env bash
# scripts/demo.sh [--workers N] [--size S] [--backings mshare,shm] [--launch MODE]
#                 [--seconds S] [--kernel DIR] [--mem 4G] [--verbose]
# `make demo`: database workers sharing one buffer pool, with and without
# mshare, side by side. Builds or reuses the release kernel, the demo
# programs and the guest image, boots the image under QEMU (TCG), starts
# mshare-owner under systemd with the pool as a region, and starts N
# workers on it (each maps the pool and touches every page, then all run a
# read-mostly mix together); then the same on plain shared memory. Shows
# the driver's progress lines while it runs and the comparison at the end.
#   --workers N   workers per backing (default 16)
#   --size S      the pool (default 256M; 1G, 4G: give the guest more --mem)
#   --backings    default mshare,shm; add hugetlb for the third backing
#   --launch MODE auto (default: each worker in a crun container once
#                 mshare-oci-hook is in the image, plain processes until then),
#                 containers, processes
# Everything else is scripts/bench.sh --demo (see its --help); the records
# and the full report go to $MSHARE_CACHE/bench/. A 2-core machine with a 4
# GiB guest runs the default in a few minutes once the kernel and image are
# cached.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../kernel/scripts/common.sh
. "$(dirname "$0")/../kernel/scripts/common.sh"

workers=16 size=256M
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--workers) workers=$2; shift ;;
	--size) size=$2; shift ;;
	--backings | --launch | --seconds | --kernel | --mem | --smp | --timeout | --image) args+=("$1" "$2"); shift ;;
	--verbose) args+=("$1") ;;
	-h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	*) die "unknown option '$1' (see --help)" ;;
	esac
	shift
done
[[ $workers =~ ^[1-9][0-9]*$ ]] || die "--workers: expected a number of workers"

name=demo-$(date -u +%Y%m%d-%H%M%S)
out=$MSHARE_CACHE/bench
echo "mshare demo: $workers database workers on one $size buffer pool, with an mshare region and with plain shared memory."
echo "The guest runs under QEMU's TCG emulator: page-table bytes and fault counts are exact, times are emulation figures."
echo
rc=0
"$REPO_DIR/scripts/bench.sh" --demo --workers "$workers" --sizes "$size" --out "$out" --name "$name" "${args[@]}" |
	grep --line-buffered -avE '^[0-9]+ passed, [0-9]+ failed$' || rc=${PIPESTATUS[0]}
jsonl=$out/$name.jsonl
[ -s "$jsonl" ] || die "the guest printed no results (see $MSHARE_CACHE/logs/$name.log)"

# The side-by-side comparison: one column per backing measured.
echo
jq -r -s --arg size "$size" --argjson n "$workers" '
	def n0: if type == "number" then (round | tostring |
		if length > 3 then [explode | reverse | _nwise(3) | reverse | implode] | reverse | join(",") else . end)
		else "-" end;
	def n1: if type == "number" then ((. * 10 | round) / 10 | tostring) else "-" end;
	def ms: if type == "number" then (if . >= 10000 then "\(. / 1000 | n1) s" else "\(n0) ms" end) else "-" end;
	def ops: if type == "number" then (if . >= 1e6 then "\(. / 1e4 | round / 100) M" elif . >= 1e3 then "\(. / 10 | round / 100) k" else n0 end) else "-" end;
	def pad($w): tostring | if length >= $w then . else . + (" " * ($w - length)) end;
	def lpad($w): tostring | if length >= $w then . else (" " * ($w - length)) + . end;
	(map(select(.type == "point" and .workers == $n)) | sort_by(.backing as $b | ["mshare", "shm", "hugetlb"] | index($b))) as $p
	| {mshare: "mshare region", shm: "plain shared memory", hugetlb: "hugetlbfs (2 MiB pages)"} as $names
	| def cell(f): if .status == "ok" then f else (if .status == "skipped" then "skipped" else "failed" end) end;
	  def row($title; f): "| \($title | pad(38)) |" + ($p | map(" \(cell(f) | lpad(22)) |") | join(""));
	"Page tables of \($n) workers on one \($size) pool, each holding all of it mapped and touched:",
	"",
	"| \("" | pad(38)) |" + ($p | map(" \($names[.backing] // .backing | lpad(22)) |") | join("")),
	"|\("-" * 40)|" + ($p | map("\("-" * 23):|") | join("")),
	row("page tables added (PageTables)"; "\(.pagetables_added_kb | n0) kB"),
	row("  per worker"; "\(.pagetables_added_kb_per_worker | n0) kB"),
	row("minor faults per worker, warm-up"; .warmup_minflt_median | n0),
	row("start to ready, median worker"; .ready_ms_median | ms),
	row("all \($n) ready, launching included"; "\(.all_ready_s | n1) s"),
	row("reads and updates per second, all"; .ops_per_sec | ops),
	row("p99 latency, worst worker"; "\(.p99_us_max | n1) us"),
	row("workers run as"; .launch),
	"",
	($p | map(select(.status != "ok")) | .[] | "\(.backing): \(.status): \(.reason // "" | gsub("\n"; " "))"),
	(($p | map({key: .backing, value: .}) | from_entries) as $b
	 | if $b.mshare.status == "ok" and $b.shm.status == "ok" and ($b.mshare.pagetables_added_kb // 0) > 0 then
	     "With plain shared memory the workers needed \($b.shm.pagetables_added_kb / $b.mshare.pagetables_added_kb | n1) times the page tables they needed with mshare, and each took \($b.shm.warmup_minflt_median | n0) page faults to reach all of the pool where an mshare worker took \($b.mshare.warmup_minflt_median | n0)."
	   else empty end)
' "$jsonl"
echo
echo "Times are TCG emulation figures; page-table bytes and fault counts are exact."
echo "Full report: $out/$name.md; serial log: $MSHARE_CACHE/logs/$name.log"
echo "Bigger runs: scripts/demo.sh --workers 64 --size 1G --mem 6G; the benchmark: make bench (docs/demo.md)."
exit "$rc"
