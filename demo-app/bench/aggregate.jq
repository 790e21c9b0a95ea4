# The numbers of one benchmark point from its workers' JSON lines; used by
# bench-guest.sh as
#   jq -n -c --arg KEY VALUE... --argjson KEY NUMBER... --slurpfile ready R \
#         --slurpfile done D --slurpfile cg C -f aggregate.jq
# --arg, --argjson  what the driver measured (backing, workers, PageTables,
#         ...): copied into the point as they are
# $ready  the ready lines read from the barrier FIFO
# $done   the workers' final lines ("event": "done")
# $cg     {"id", "pagetables"} per worker cgroup (bytes of memory.stat)
# Times are copied as the workers measured them (emulation figures under
# TCG); counts are exact.

def vals: map(select(type == "number"));
def median: vals | sort |
	if length == 0 then null
	elif length % 2 == 1 then .[(length - 1) / 2]
	else (.[length / 2 - 1] + .[length / 2]) / 2 end;
def maxv: vals | max;
def minv: vals | min;
def sumv: vals | if length == 0 then null else add end;
def meanv: vals | if length == 0 then null else add / length end;
def r1: if type == "number" then (. * 10 | round) / 10 else null end;
def r0: if type == "number" then round else null end;

($ready | map(select(type == "object" and .event == "ready"))) as $r
| ($done | map(select(type == "object" and .event == "done"))) as $d
| ($cg | map(select(type == "object"))) as $c
| ($c | map(.pagetables / 1024)) as $cgkb
| ($ARGS.named | del(.ready, .done, .cg)) as $m
| $m + {
	ready: ($r | length),
	done: ($d | length),
	failed_workers: ($m.workers - ($d | length)),
	page_bytes: ($r | map(.page_bytes) | first),
	records: ($r | map(.records) | first),

	ready_ms_median: ($r | map(.start_to_ready_ms) | median | r1),
	ready_ms_max: ($r | map(.start_to_ready_ms) | maxv | r1),
	proc_ready_ms_median: ($r | map(.proc_start_to_ready_ms) | median | r1),
	proc_ready_ms_max: ($r | map(.proc_start_to_ready_ms) | maxv | r1),
	map_ms_median: ($r | map(.map_ms) | median | r1),
	warmup_ms_median: ($r | map(.warmup_ms) | median | r1),

	warmup_minflt_median: ($r | map(.warmup_minflt) | median),
	warmup_minflt_max: ($r | map(.warmup_minflt) | maxv),
	start_minflt_median: ($r | map(.start_minflt) | median),
	minflt_total_median: ($d | map(.minflt_total) | median),
	minflt_total_max: ($d | map(.minflt_total) | maxv),
	run_minflt_median: ($d | map(.run_minflt) | median),
	majflt_total_sum: ($d | map(.majflt_total) | sumv),
	vmpte_added_kb_median: ($r | map(if (.vmpte_kb_ready | type) == "number" and (.vmpte_kb_start | type) == "number"
		then .vmpte_kb_ready - .vmpte_kb_start else null end) | median),

	cg_count: ($c | length),
	cg_pagetables_kb_sum: ($cgkb | sumv | r0),
	cg_pagetables_kb_min: ($cgkb | minv | r0),
	cg_pagetables_kb_median: ($cgkb | median | r0),
	cg_pagetables_kb_max: ($cgkb | maxv | r0),

	run_s_median: ($d | map(.run_s) | median | r1),
	ops: ($d | map(.ops) | sumv),
	ops_per_sec: ($d | map(.ops_per_sec) | sumv | r0),
	p50_us_median: ($d | map(.p50_us) | median | r1),
	p99_us_max: ($d | map(.p99_us) | maxv | r1),
	p999_us_max: ($d | map(.p999_us) | maxv | r1),
	errors: ($d | map(.errors) | sumv),
	latch_sleeps: ($d | map(.latch_sleeps) | sumv),
	latch_timeouts: ($d | map(.latch_timeouts) | sumv),
	latch_futex_errors: ($d | map(.latch_futex_errors) | sumv)
}
| .pagetables_added_kb_per_worker = (if (.pagetables_added_kb | type) == "number" and .workers > 0
	then (.pagetables_added_kb / .workers | r1) else null end)
