/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * demo-measure's logic on fixture files (tests/fixtures: a /proc/meminfo,
 * a status, cgroup memory.stat files, workers' lines): the /proc readers,
 * the system sample, the memory estimate and the sweep, the POINT and
 * WORKERS records and their verdict, the CI bound, the record arguments.
 */
#include <math.h>
#include <stdlib.h>

#include "bound.h"
#include "estimate.h"
#include "jsonl.h"
#include "mshare-common/macro.h"
#include "mshare-common/tap.h"
#include "point.h"
#include "mshare-common/procstat.h"
#include "sample.h"
#include "stats.h"

#define F(name) TEST_FIXTURES "/" name
#define GIB (1024ull * 1024 * 1024)

static bool num_is(const json_t *o, const char *key, double want)
{
	double v = json_member_num(o, key);

	if (fabs(v - want) < 1e-9)
		return true;
	printf("#   %s is %g, expected %g\n", key, v, want);
	return false;
}

static bool is_null(const json_t *o, const char *key)
{
	return json_is_null(json_object_get(o, key));
}

static void test_proc_fields(void)
{
	static const char *const keys[] = { "PageTables", "MemAvailable", "HugePages_Free", "Nope", "Shmem" };
	int64_t v[ARRAY_SIZE(keys)], kb = 0;

	ok(proc_fields(F("meminfo"), keys, v, ARRAY_SIZE(keys)) == 4 && v[0] == 3604 &&
		   v[1] == 3281604 && v[2] == 64 && v[3] == -1 && v[4] == 1059292,
	   "meminfo: the keys asked for in one pass, -1 for a missing one");
	ok(proc_field(F("meminfo"), "Page", &kb) == -ENOENT, "a key is matched whole, not as a prefix");
	ok(proc_field(F("status"), "VmPTE", &kb) == 0 && kb == 44, "status: VmPTE");
	ok(proc_field(F("cgroup/mb-shm-1024-16-1/memory.stat"), "pagetables", &kb) == 0 && kb == 2146304,
	   "memory.stat: pagetables in bytes, not sec_pagetables");
	ok(proc_field(F("missing"), "x", &kb) == -ENOENT, "a missing file is -ENOENT");
}

static void test_sample(void)
{
	struct sample_source src = {
		.meminfo = F("meminfo"),
		.owner_stat = F("owner.memory.stat"),
		.cgroups = F("cgroup"),
		.prefix = "mb-shm-1024-16-",
	};
	_cleanup_json_ json_t *s = NULL, *t = NULL;
	json_t *cg;

	ok(sample_take(&src, &s) == 0 && num_is(s, "pagetables_kb", 3604) &&
		   num_is(s, "mem_available_kb", 3281604) && num_is(s, "shmem_kb", 1059292) &&
		   num_is(s, "hugepages_free", 64) && num_is(s, "owner_pagetables", 2154496),
	   "sample: meminfo and the owner's cgroup");
	cg = json_object_get(s, "cg");
	ok(json_array_size(cg) == 2 &&
		   streq(json_string_value(json_object_get(json_array_get(cg, 0), "id")), "mb-shm-1024-16-1") &&
		   num_is(json_array_get(cg, 1), "pagetables", 2142208),
	   "sample: this point's worker cgroups only (not 1-1), sorted, none without memory.stat");
	src.owner_stat = F("missing");
	src.cgroups = F("missing");
	ok(sample_take(&src, &t) == 0 && is_null(t, "owner_pagetables") &&
		   json_array_size(json_object_get(t, "cg")) == 0,
	   "sample: no owner cgroup, no worker cgroups");
	src.meminfo = F("missing");
	ok(sample_take(&src, &t) == -ENOENT, "sample: without meminfo, an error");
}

static void test_estimate(void)
{
	_cleanup_free_ char *why = NULL;
	_cleanup_free_ uint64_t *c = NULL;
	size_t n = 0;

	ok(estimate_pagetables_kb("shm", GIB) == 2048 && estimate_pagetables_kb("hugetlb", GIB) == 8 &&
		   estimate_pagetables_kb("mshare", GIB) == 0 && estimate_pagetables_kb("nfs", GIB) == -EINVAL,
	   "page tables per worker: 2 MiB per GiB on shm, a PMD table on hugetlb, none on mshare");
	unsetenv("BENCH_RESERVE_KB");
	ok(estimate_reserve_kb(4010800) == 262144 && estimate_reserve_kb(8157992) == 407899,
	   "the reserve: 256 MiB, or 5 %% of a larger MemTotal");
	setenv("BENCH_RESERVE_KB", "1000", 1);
	ok(estimate_reserve_kb(8157992) == 1000, "BENCH_RESERVE_KB overrides it");
	setenv("BENCH_RESERVE_KB", "lots", 1);
	ok(estimate_reserve_kb(8157992) == -EINVAL, "a bad BENCH_RESERVE_KB is refused");
	unsetenv("BENCH_RESERVE_KB");

	ok(estimate_fits(16, 2048, 3072, 3281604, 262144, &why) && !why, "16 shm workers fit in 3 GiB");
	ok(!estimate_fits(1024, 2048, 3072, 3281604, 262144, &why) && why &&
		   streq(why, "would not fit: 1024 workers need about 5120 MiB (2048 kB of page tables and "
			      "3072 kB otherwise each), MemAvailable is 3204 MiB less a reserve of 256 MiB"),
	   "1024 do not, and the reason says the numbers");

	ok(estimate_sweep("1,16,64", GIB, 8000000, 400000, 3072, 4096, &c, &n) == 0 && n == 3 &&
		   c[0] == 1 && c[2] == 64,
	   "a list without +: as it is");
	free(c);
	c = NULL;
	/* (8000000 - 1048576 - 400000) / (2048 + 3072) = 1279: doublings to 1024. */
	ok(estimate_sweep("1,16,64,256+", GIB, 8000000, 400000, 3072, 4096, &c, &n) == 0 && n == 6 &&
		   c[3] == 256 && c[4] == 512 && c[5] == 1024,
	   "a trailing +: doublings while shm fits");
	free(c);
	c = NULL;
	ok(estimate_sweep("1,16,64,256+", GIB, 8000000, 400000, 3072, 600, &c, &n) == 0 && n == 5 &&
		   c[4] == 512,
	   "the doublings stop at --max-workers");
	free(c);
	c = NULL;
	ok(estimate_sweep("16+", GIB, 1000000, 400000, 3072, 4096, &c, &n) == 0 && n == 1,
	   "no doubling when the pool itself does not fit");
	ok(estimate_sweep("", GIB, 1, 1, 1, 1, &c, &n) == -EINVAL &&
		   estimate_sweep("1,x", GIB, 1, 1, 1, 1, &c, &n) == -EINVAL &&
		   estimate_sweep("0", GIB, 1, 1, 1, 1, &c, &n) == -EINVAL,
	   "bad lists are refused");
}

static void test_json(void)
{
	_cleanup_json_ json_t *o = json_object(), *a = json_num(4095), *b = json_num(0.5), *c = json_num(NAN);
	_cleanup_free_ char *s = NULL;
	struct stats_list l;
	_cleanup_json_ json_t *lines = json_array();
	char buf[64];

	ok(json_is_integer(a) && json_is_real(b) && json_is_null(c),
	   "numbers as jq writes them: 4095, 0.5, null for none");
	ok(streq(json_num_text(b, buf, sizeof(buf)), "0.5") && streq(json_num_text(c, buf, sizeof(buf)), "?"),
	   "numbers as text: 0.5, ? for none");
	ok(json_set_arg(o, "mode=ci") == 0 && json_set_arg(o, "seconds:=2") == 0 &&
		   json_set_arg(o, "launch_by_backing.shm=processes") == 0 &&
		   json_set_arg(o, "launch_by_backing.mshare=containers") == 0 &&
		   json_set_arg(o, "crun=") == 0 && json_set_arg(o, "reason:=") == 0,
	   "arguments: strings, JSON, dotted names, empty values");
	s = json_dumps(o, JSONL_DUMP_FLAGS);
	ok(s && streq(s, "{\"mode\":\"ci\",\"seconds\":2,\"launch_by_backing\":{\"shm\":\"processes\","
			 "\"mshare\":\"containers\"},\"crun\":\"\",\"reason\":null}"),
	   "... make the object: %s", strna(s));
	ok(json_set_arg(o, "x") == -EINVAL && json_set_arg(o, "Bad=1") == -EINVAL &&
		   json_set_arg(o, "n:={") == -EINVAL && json_set_arg(o, "=1") == -EINVAL,
	   "bad arguments are refused");

	ok(jsonl_read(F("ready.jsonl"), "ready", lines) == 0 && json_array_size(lines) == 3,
	   "lines: the cut one is left out");
	ok(stats_collect(lines, "warmup_minflt", &l) == 0 && l.n == 3 && stats_median(&l) == 16386 &&
		   stats_max(&l) == 16390 && stats_min(&l) == 16384 && stats_sum(&l) == 49160,
	   "median, max, min, sum");
	stats_free(&l);
	ok(stats_collect(lines, "vmpte_kb_ready", &l) == 0 && l.n == 2 && stats_median(&l) == 2058,
	   "a null is left out; an even count's median is the mean of the middle two");
	stats_free(&l);
	ok(stats_collect(lines, "nothing", &l) == 0 && isnan(stats_median(&l)) && isnan(stats_sum(&l)),
	   "no numbers: no median, no sum");
	stats_free(&l);
	ok(round1(42.25) == 42.3 && round1(-0.05) == -0.1 && round0(2.5) == 3, "rounding as jq's round");
}

/* The point of three workers on the fixtures; w3 gave no final line. */
static int build_point(json_t *named, json_t *done_extra, const char *status, const char *reason,
		       json_t **p, json_t **w)
{
	struct sample_source src = {
		.meminfo = F("meminfo"),
		.owner_stat = F("owner.memory.stat"),
		.cgroups = F("cgroup"),
		.prefix = "mb-shm-1024-16-",
	};
	_cleanup_json_ json_t *before = json_load_file(F("sample-before.json"), 0, NULL), *at = NULL;
	_cleanup_json_ json_t *ready = json_array(), *done = json_array();
	_cleanup_json_ json_t *regions = json_load_file(F("regions.json"), 0, NULL);
	struct point_input in = {
		.named = named, .before = before, .ready = ready, .done = done,
		.region = point_region(regions, "demo-pool"),
		.t0 = 1000, .t_launched = 1410, .t_ready = 1630, .t_go = 1700, .t_done = 11740,
		.status = status, .reason = reason,
	};
	int r;

	if (sample_take(&src, &at) < 0 || jsonl_read(F("ready.jsonl"), "ready", ready) < 0 ||
	    jsonl_read_glob(F("done.*"), "done", done) < 0)
		return -EIO;
	if (done_extra)
		json_array_append(done, done_extra);
	in.at_ready = at;
	r = point_build(&in, p);
	if (r >= 0 && w)
		r = point_workers("shm-1024M-3", ready, done, json_object_get(at, "cg"), w);
	return r;
}

static void test_point(void)
{
	_cleanup_json_ json_t *named = json_pack("{s:s, s:s, s:i, s:i}", "mode", "ci", "backing", "shm",
						 "workers", 3, "launch_failed", 0);
	_cleanup_json_ json_t *p = NULL, *w = NULL, *p2 = NULL, *p3 = NULL, *p4 = NULL, *extra = NULL;
	_cleanup_free_ char *summary = NULL;
	json_t *rows;

	ok(build_point(named, NULL, "ok", NULL, &p, &w) == 0 && p && w, "a point is built");
	ok(streq(json_string_value(json_object_get(p, "type")), "point") &&
		   streq(json_string_value(json_object_get(p, "backing")), "shm") && num_is(p, "workers", 3),
	   "the driver's fields are copied");
	ok(num_is(p, "pagetables_kb_before", 2980) && num_is(p, "pagetables_kb_ready", 3604) &&
		   num_is(p, "pagetables_added_kb", 624) && num_is(p, "pagetables_added_kb_per_worker", 208),
	   "PageTables before, at the barrier, added, per worker");
	ok(num_is(p, "owner_pagetables_kb", 2104) && num_is(p, "owner_pagetables_added_kb", 0) &&
		   num_is(p, "region_pagetables_kb", 2056) && num_is(p, "region_attached", 3),
	   "the owner's cgroup and the region");
	ok(num_is(p, "cg_count", 2) && num_is(p, "cg_pagetables_kb_sum", 4188) &&
		   num_is(p, "cg_pagetables_kb_min", 2092) && num_is(p, "cg_pagetables_kb_median", 2094) &&
		   num_is(p, "cg_pagetables_kb_max", 2096),
	   "the workers' cgroups in kB");
	ok(num_is(p, "launch_s", 0.41) && num_is(p, "all_ready_s", 0.63) && num_is(p, "run_wall_s", 10.04),
	   "the driver's times in seconds");
	ok(num_is(p, "ready", 3) && num_is(p, "done", 2) && num_is(p, "failed_workers", 1) &&
		   num_is(p, "page_bytes", 4096) && num_is(p, "ready_ms_median", 42.3) &&
		   num_is(p, "ready_ms_max", 84.5) && num_is(p, "warmup_minflt_median", 16386) &&
		   num_is(p, "warmup_minflt_max", 16390) && num_is(p, "vmpte_added_kb_median", 2050),
	   "the ready lines: counts, medians, maxima");
	ok(num_is(p, "ops", 3500000) && num_is(p, "ops_per_sec", 1714286) && num_is(p, "p99_us_max", 7.3) &&
		   num_is(p, "errors", 0) && num_is(p, "latch_timeouts", 1) && num_is(p, "majflt_total_sum", 1) &&
		   num_is(p, "run_s_median", 2.1),
	   "the final lines: sums, maxima");
	ok(streq(json_string_value(json_object_get(p, "status")), "failed") &&
		   streq(json_string_value(json_object_get(p, "reason")),
			 "1 of 3 workers gave no result (3 got ready)"),
	   "a worker without a final line fails the point: %s",
	   strna(json_string_value(json_object_get(p, "reason"))));

	rows = json_object_get(w, "workers");
	/* The fixtures' cgroups are named as in the guest, the lines' ids are short: 5 rows. */
	ok(json_array_size(rows) == 5 &&
		   streq(json_string_value(json_object_get(json_array_get(rows, 0), "id")), "mb-shm-1024-16-1") &&
		   num_is(json_array_get(rows, 0), "cg_pagetables_kb", 2096) &&
		   json_is_true(json_object_get(json_array_get(rows, 2), "done")) &&
		   num_is(json_array_get(rows, 2), "vmpte_kb", 2048) &&
		   is_null(json_array_get(rows, 2), "cg_pagetables_kb") &&
		   json_is_false(json_object_get(json_array_get(rows, 4), "done")) &&
		   is_null(json_array_get(rows, 4), "vmpte_kb"),
	   "WORKERS: a row per id of the cgroups and the lines, sorted; done or not");

	json_object_set_new(named, "workers", json_integer(2));
	ok(build_point(named, NULL, "ok", NULL, &p2, NULL) == 0 &&
		   streq(json_string_value(json_object_get(p2, "status")), "ok") && is_null(p2, "reason"),
	   "all workers done, no errors: ok");
	summary = point_summary(p2);
	ok(summary && streq(summary, "all 3 ready in 0.6 s (per worker median 42.3 ms, max 84.5 ms), "
				     "PageTables +624 kB (312 kB/worker), faults/worker 16386, "
				     "1.71 M ops/s, p99 7.3 us, 0 errors"),
	   "the summary: %s", strna(summary));
	ok(build_point(named, NULL, "failed", "no worker got ready for 900 s (2 of 3 ready)", &p3, NULL) == 0 &&
		   streq(json_string_value(json_object_get(p3, "reason")),
			 "no worker got ready for 900 s (2 of 3 ready)"),
	   "the driver's reason stays");
	extra = json_pack("{s:s, s:s, s:i}", "event", "done", "id", "w3", "errors", 2);
	json_object_set_new(named, "workers", json_integer(3));
	ok(build_point(named, extra, "ok", NULL, &p4, NULL) == 0 &&
		   streq(json_string_value(json_object_get(p4, "reason")),
			 "2 operations found a missing or torn record"),
	   "errors fail the point");
}

static void test_bound(void)
{
	_cleanup_json_ json_t *m = json_pack("{s:i, s:i}", "pagetables_added_kb", 624, "warmup_minflt_median", 0);
	_cleanup_json_ json_t *s = json_pack("{s:i, s:i}", "pagetables_added_kb", 33400, "warmup_minflt_median", 16386);
	_cleanup_json_ json_t *bad = json_pack("{s:i, s:n}", "pagetables_added_kb", 20000, "warmup_minflt_median");
	char *text = NULL;

	ok(bound_check(&bound_ci[0], m, s, "16 workers, 1G pool", &text) && text &&
		   streq(text, "page tables: mshare 624 kB vs shm 33400 kB (ratio 53.5 >= 20; 16 workers, 1G pool)"),
	   "page tables 53x fewer: ok");
	free(text);
	ok(bound_check(&bound_ci[1], m, s, "c", &text) && strstr(text, "(ratio inf >= 100; c)"),
	   "no faults at all with mshare: ok, ratio inf");
	free(text);
	ok(!bound_check(&bound_ci[0], s, bad, "c", &text) &&
		   streq(text, "page tables: mshare 33400 kB vs shm 20000 kB (ratio 0.6, expected >= 20; c)"),
	   "the other way round: not ok");
	free(text);
	ok(!bound_check(&bound_ci[1], m, bad, "c", &text) &&
		   streq(text, "minor faults per worker mapping the pool (median of the warm-up): mshare 0 vs shm "
			       "none: a point has no number; the bound cannot be checked (c)"),
	   "a missing number: not ok");
	free(text);
	ok(!bound_check(&bound_ci[1], NULL, s, "c", &text) &&
		   streq(text, "minor faults per worker: the mshare or the shm point did not run; the bound "
			       "cannot be checked"),
	   "a point that did not run: not ok");
	free(text);
	json_object_set_new(s, "pagetables_added_kb", json_integer(0));
	json_object_set_new(m, "pagetables_added_kb", json_integer(0));
	ok(!bound_check(&bound_ci[0], m, s, "c", &text), "nothing measured on shm either: not ok");
	free(text);
}

int main(void)
{
	test_proc_fields();
	test_sample();
	test_estimate();
	test_json();
	test_point();
	test_bound();
	return tap_finish();
}
