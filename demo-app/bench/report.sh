#!/usr/bin/env bash
# report.sh [--table-only] [--command CMD] [--kernel-dir DIR] [--image FILE]
#           [--qemu TEXT] [--verdict LINE] [--date TEXT] [--host TEXT]
#           [--plot FILE:CAPTION]... RECORDS.jsonl
# The markdown report of a benchmark run (host side, called by
# scripts/bench.sh and scripts/demo.sh): from the records the guest driver
# printed (MSHARE-BENCH-* lines, one JSON object each), a table per pool
# size, the ratios of mshare to shm and to hugetlb at each worker count,
# and how the run was made. --table-only prints just the side-by-side table
# (the demo's ending). Needs jq.
set -euo pipefail

table_only=0
cmd='' kdir='' image='' qemu='' verdict='' when='' host=''
plots=()
while [ $# -gt 1 ]; do
	case $1 in
	--table-only) table_only=1 ;;
	--command) cmd=$2; shift ;;
	--kernel-dir) kdir=$2; shift ;;
	--image) image=$2; shift ;;
	--qemu) qemu=$2; shift ;;
	--verdict) verdict=$2; shift ;;
	--date) when=$2; shift ;;
	--host) host=$2; shift ;;
	--plot) plots+=("$2"); shift ;;
	*) break ;;
	esac
	shift
done
if [ $# != 1 ] || [ ! -f "$1" ]; then echo "usage: report.sh [options] RECORDS.jsonl" >&2; exit 2; fi
records=$1

# Shared jq helpers: numbers as the tables show them.
# shellcheck disable=SC2016 # a jq program, not shell
JQ_DEFS='
def n0: if type == "number" then (round | tostring |
	if length > 3 then [explode | reverse | _nwise(3) | reverse | implode] | reverse | join(",") else . end)
	else "-" end;
def n1: if type == "number" then ((. * 10 | round) / 10 | tostring) else "-" end;
def kb: if type == "number" then "\(n0) kB" else "-" end;
def ms: if type == "number" then (if . >= 10000 then "\(. / 1000 | n1) s" else "\(n0) ms" end) else "-" end;
def secs: if type == "number" then "\(n1) s" else "-" end;
def ops: if type == "number" then (if . >= 1e6 then "\(. / 1e4 | round / 100) M" elif . >= 1e3 then "\(. / 10 | round / 100) k" else n0 end) else "-" end;
def us: if type == "number" then "\(n1) µs" else "-" end;
def human_bytes: if . >= 1073741824 and (. % 1073741824) == 0 then "\(. / 1073741824) GiB" else "\(. / 1048576) MiB" end;
def clean: tostring | gsub("[\n\r]+"; " ") | gsub("[|]"; "/");
def launched: if . == "containers" then "container" elif . == "processes" then "process" else (. // "-") end;
# ratio A B: A / B as "0.012 (1/81)"; "0" when A is not above 0.
def ratio($a; $b): if ($a | type) != "number" or ($b | type) != "number" or $b <= 0 then "-"
	elif $a <= 0 then "0 (none vs \($b | n0))"
	elif $a >= $b then "\($a / $b | . * 100 | round / 100)"
	else "\($a / $b | if . >= 0.01 then (. * 1000 | round / 1000) else (. * 100000 | round / 100000) end) (1/\($b / $a | if . < 10 then n1 else n0 end))" end;
'

points() { jq -c 'select(.type == "point")' "$records"; }
begin=$(jq -c 'select(.type == "begin")' "$records" | head -n 1)
end=$(jq -c 'select(.type == "end")' "$records" | tail -n 1)
[ -n "$begin" ] || begin='{}'

# table BYTES: the rows of one pool size.
table() {
	points | jq -r -s --argjson bytes "$1" "$JQ_DEFS"'
	  map(select(.pool_bytes == $bytes))
	| (["mshare", "shm", "hugetlb"]) as $order
	| sort_by((.backing as $b | $order | index($b)), .workers)
	| .[]
	| if .status == "skipped" or (.status == "failed" and (.ready // 0) == 0) then
	    "| \(.backing) | \(.workers) | \(.launch | launched) | \(.status): \(.reason // "" | clean) | | | | | | | | |"
	  else
	    "| \(.backing) | \(.workers) | \(.launch | launched) | \(.pagetables_added_kb | kb) | \(.pagetables_added_kb_per_worker | kb) | \(.cg_pagetables_kb_sum | kb) | \(.ready_ms_median | ms) / \(.ready_ms_max | ms) | \(.all_ready_s | secs) | \(.warmup_minflt_median | n0) / \(.minflt_total_median | n0) | \(.ops_per_sec | ops) | \(.p99_us_max | us) | \(.errors | n0)\(if .status != "ok" then " (\(.status): \(.reason // "" | clean))" else "" end) |"
	  end'
}

ratios() {
	points | jq -r -s --argjson bytes "$1" "$JQ_DEFS"'
	  map(select(.pool_bytes == $bytes and .status == "ok"))
	| group_by(.workers)
	| .[]
	| (map({key: .backing, value: .}) | from_entries) as $p
	| select($p.mshare != null and ($p.shm != null or $p.hugetlb != null))
	| "| \(.[0].workers) | \(ratio($p.mshare.pagetables_added_kb; $p.shm.pagetables_added_kb // null)) | \(ratio($p.mshare.pagetables_added_kb; $p.hugetlb.pagetables_added_kb // null)) | \(ratio($p.mshare.warmup_minflt_median; $p.shm.warmup_minflt_median // null)) | \(ratio($p.mshare.warmup_minflt_median; $p.hugetlb.warmup_minflt_median // null)) | \(ratio($p.mshare.ready_ms_median; $p.shm.ready_ms_median // null)) |"'
}

# shellcheck disable=SC2016 # markdown backquotes
TABLE_HEAD='| backing | workers | run as | PageTables added | per worker | worker cgroups'"'"' `pagetables` | start to ready, median / max | all ready | minor faults per worker: warm-up / whole run | ops/s, all workers | p99, worst worker | errors |
|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
RATIO_HEAD='| workers | page tables, mshare / shm | mshare / hugetlb | warm-up faults per worker, mshare / shm | mshare / hugetlb | start to ready (median), mshare / shm |
|---:|---:|---:|---:|---:|---:|'

sizes=$(points | jq -s -r 'map(.pool_bytes) | unique | .[]')
tcg_note='Under TCG (QEMU'"'"'s emulator) page-table bytes and fault counts are exact; times and throughput are emulation figures, not what the same kernel does on hardware.'

if [ $table_only = 1 ]; then
	for b in $sizes; do
		echo
		echo "Pool of $(jq -n -r --argjson b "$b" '$b | if . >= 1073741824 and (. % 1073741824) == 0 then "\(. / 1073741824) GiB" else "\(. / 1048576) MiB" end'):"
		echo
		echo "$TABLE_HEAD"
		table "$b"
		r=$(ratios "$b")
		if [ -n "$r" ]; then
			echo
			echo "$RATIO_HEAD"
			echo "$r"
		fi
	done
	echo
	echo "$tcg_note"
	exit 0
fi

bj() { jq -r "$1" <<<"$begin"; }
title_date=${when:-$(date -u '+%Y-%m-%d %H:%M UTC')}
echo "# mshare benchmark, $title_date"
echo
cat <<'TEXT'
Database-style workers (`demo-worker`, `demo-app/README.md`) on one shared
buffer pool, three ways: an **mshare** region owned by `mshare-owner`
(shared page tables), plain shared memory (**shm**: a file on a tmpfs,
`mmap(MAP_SHARED)`, what databases use today), and **hugetlb** (a file on
hugetlbfs, 2 MiB pages). Each worker maps the pool, touches every 4 KiB page
of it once (the warm-up), says it is ready; once all are ready the page
tables are measured, then all run a YCSB-like mix together.
TEXT
echo
echo "**$tcg_note**"
echo
echo "| | |"
echo "|---|---|"
[ -z "$cmd" ] || echo "| command | \`$cmd\` |"
echo "| date | $title_date |"
kname=${kdir##*/}
kkind='not a release build: times are not benchmark figures'
case $kname in
release-*) kkind='the release configuration (no debug options)' ;;
debug-*) kkind='**the debug kernel** (KASAN, lockdep): times are 5-10x slower than the release kernel; counts are unaffected' ;;
esac
echo "| kernel | \`$(bj '.kernel // "?"')\` (\`$(bj '.kernel_version // "?"')\`)${kname:+, cached build \`$kname\`: $kkind} |"
echo "| guest | ${qemu:+$qemu, }$(bj '.cpus // "?"') CPUs, $(bj 'if .mem_total_kb then "\(.mem_total_kb / 1024 | floor) MiB" else "?" end') of memory (MemTotal)${image:+, image \`$(basename "$(dirname "$image")")\`} |"
[ -z "$host" ] || echo "| host | $host |"
echo "| workload | $(bj '.mix // "?"'), zipfian keys, warm-up: $(bj '.warmup // "?"') one byte per 4 KiB page, then $(bj '.seconds // "?"') s of run; 256-byte records, loaded by \`demo-load\` |"
echo "| workers | $(bj '(.launch_by_backing // {}) | to_entries | map("\(.key): \(if .value == "containers" then "each in its own crun container" else "plain processes" end)") | join("; ")')$(bj 'if .backings then " (backings run: \(.backings))" else "" end'). mshare-oci-hook installed in the image: $(bj 'if .hook_installed then "yes" else "no" end') |"
echo "| sweep | pools $(bj '.sizes // "?"'), workers $(bj '.workers // "?"') (a trailing + doubles while the plain backing is estimated to fit) |"
if [ -n "$end" ]; then
	echo "| guest run | $(jq -r '"\(if .complete then "complete" else "**did not complete**" end): \(.points_ok // "?") points measured, \(.points_failed // "?") failed, \(.points_skipped // "?") skipped\(if .seconds then ", \(.seconds) s in the guest" else "" end)"' <<<"$end") |"
else
	echo "| guest run | **did not complete**: no end record in the log |"
fi
[ -z "$verdict" ] || echo "| log check | \`$verdict\` |"
echo

for b in $sizes; do
	echo "## Pool of $(jq -n -r --argjson b "$b" '$b | if . >= 1073741824 and (. % 1073741824) == 0 then "\(. / 1073741824) GiB" else "\(. / 1048576) MiB" end')"
	echo
	echo "$TABLE_HEAD"
	table "$b"
	echo
	r=$(ratios "$b")
	if [ -n "$r" ]; then
		echo "Ratios at each worker count (of the points measured on both backings):"
		echo
		echo "$RATIO_HEAD"
		echo "$r"
		echo
	fi
	owner=$(points | jq -r -s --argjson bytes "$b" '
		map(select(.pool_bytes == $bytes and .backing == "mshare" and (.region_pagetables_kb | type) == "number"))
		| if length > 0 then "The mshare region'"'"'s own page tables: \(.[0].region_pagetables_kb) kB, allocated once when the pool was loaded and charged to `mshare-owner.service` (\(.[0].owner_pagetables_kb // "?") kB of page tables in its cgroup with the workers ready); they are not in the PageTables added above, which are what the workers cost." else empty end')
	if [ -n "$owner" ]; then echo "$owner"; echo; fi
done

if [ ${#plots[@]} -gt 0 ]; then
	echo "## Plots"
	echo
	for p in "${plots[@]}"; do
		echo "![${p#*:}](${p%%:*})"
		echo
	done
fi

cat <<'TEXT'
## How to read it

* **PageTables added**: `PageTables` of `/proc/meminfo` with every worker
  ready (each holding the whole pool mapped and touched) minus the value just
  before the first worker started: what the workers cost in page tables,
  system-wide. With shm each worker pays 2 MiB per GiB of pool (one 8-byte
  entry per 4 KiB page) plus what any process needs; through an mshare region
  it pays only the latter, because the region's page tables are shared;
  hugetlb pays one 4 KiB table per GiB (2 MiB pages).
* **worker cgroups' `pagetables`**: the sum of `memory.stat` `pagetables` over
  the workers' own cgroups (one per container, or per process): the same cost,
  charged where it belongs.
* **start to ready**: per worker, from its `main()` to ready (mapping the pool
  plus the warm-up); median and the slowest. **all ready**: from the first
  worker's launch to the last ready line, launching included.
* **minor faults per worker**: median over the workers of the faults taken
  during the warm-up (shm: one per 16 pages with the kernel's fault-around;
  mshare: the first touch links the region's page tables), and of the whole
  process's minor faults (exec and start-up, warm-up, run).
* **ops/s**: the sum over all workers; **p99**: the worst worker's 99th
  percentile latency per operation. Both are TCG figures.
* A point that did not fit in the guest's memory is **skipped** with the
  estimate that stopped it; a point that failed says why; neither is ever
  replaced by a number.
TEXT
