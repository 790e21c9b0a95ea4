/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <stdbool.h>

#include "jsonl.h"
#include "mshare-common/strprintf.h"
#include "point.h"
#include "stats.h"

enum agg { MEDIAN, MAX, MIN, SUM };

static double aggregate(const json_t *lines, const char *key, enum agg how)
{
	struct stats_list l;
	double v = NAN;

	if (stats_collect(lines, key, &l) < 0)
		return NAN;
	switch (how) {
	case MEDIAN: v = stats_median(&l); break;
	case MAX: v = stats_max(&l); break;
	case MIN: v = stats_min(&l); break;
	case SUM: v = stats_sum(&l); break;
	}
	stats_free(&l);
	return v;
}

static double diff(double a, double b)
{
	return a - b; /* NAN if either is missing */
}

/* Seconds between two millisecond times, to two decimals. */
static double seconds(int64_t from, int64_t to)
{
	return round((double)(to - from) / 10.0) / 100.0;
}

const json_t *point_region(const json_t *list, const char *name)
{
	size_t i;
	json_t *r;

	json_array_foreach (list, i, r) {
		const char *n = json_string_value(json_object_get(r, "name"));

		if (n && streq(n, name))
			return r;
	}
	return NULL;
}

/* A member of a list of derived numbers: one per line that has both. */
static int derived(const json_t *lines, const char *a, const char *b, const char *key, json_t *out)
{
	size_t i;
	json_t *o;

	json_array_foreach (lines, i, o) {
		double v = diff(json_member_num(o, a), json_member_num(o, b));

		if (!isnan(v) && json_array_append_new(out, json_pack("{s:f}", key, v)) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int set(json_t *o, const char *key, json_t *v)
{
	return json_object_set_new(o, key, v ?: json_null());
}

static json_t *first_member(const json_t *lines, const char *key)
{
	json_t *v = json_object_get(json_array_get(lines, 0), key);

	return v ? json_incref(v) : json_null();
}

static json_t *region_attached(const json_t *region)
{
	json_t *v = json_object_get(region, "attached");

	/* jq's ".attached // null": false counts as missing too. */
	return v && !json_is_false(v) ? json_incref(v) : json_null();
}

static int verdict(json_t *p, const struct point_input *in)
{
	double workers = json_member_num(p, "workers"), done = json_member_num(p, "done");
	double errors = json_member_num(p, "errors"), launch_failed = json_member_num(p, "launch_failed");
	_cleanup_free_ char *reason = NULL, *not_started = NULL;
	bool ok = streq(in->status, "ok");

	if (!ok && in->reason && *in->reason)
		reason = strdup(in->reason);
	if (ok && workers - done > 0) {
		ok = false;
		if (launch_failed > 0)
			not_started = strprintf(", %.0f containers did not start", launch_failed);
		reason = strprintf("%.0f of %.0f workers gave no result (%.0f got ready%s)", workers - done,
				   workers, json_member_num(p, "ready"), strempty(not_started));
	}
	if (ok && !isnan(errors) && errors != 0) {
		ok = false;
		reason = strprintf("%.0f operations found a missing or torn record", errors);
	}
	if (!ok && !reason)
		reason = strdup("failed");
	if (set(p, "status", json_string(ok ? "ok" : "failed")) < 0 ||
	    set(p, "reason", reason ? json_string(reason) : json_null()) < 0)
		return -ENOMEM;
	return 0;
}

/* key: the aggregate of member m of the lines, rounded or not. */
struct agg_field {
	const char *key;
	const char *member;
	enum agg how;
	double (*round)(double);
	bool from_done;
};

static const struct agg_field agg_fields[] = {
	{ "ready_ms_median", "start_to_ready_ms", MEDIAN, round1, false },
	{ "ready_ms_max", "start_to_ready_ms", MAX, round1, false },
	{ "proc_ready_ms_median", "proc_start_to_ready_ms", MEDIAN, round1, false },
	{ "proc_ready_ms_max", "proc_start_to_ready_ms", MAX, round1, false },
	{ "map_ms_median", "map_ms", MEDIAN, round1, false },
	{ "warmup_ms_median", "warmup_ms", MEDIAN, round1, false },
	{ "warmup_minflt_median", "warmup_minflt", MEDIAN, NULL, false },
	{ "warmup_minflt_max", "warmup_minflt", MAX, NULL, false },
	{ "start_minflt_median", "start_minflt", MEDIAN, NULL, false },
	{ "minflt_total_median", "minflt_total", MEDIAN, NULL, true },
	{ "minflt_total_max", "minflt_total", MAX, NULL, true },
	{ "run_minflt_median", "run_minflt", MEDIAN, NULL, true },
	{ "majflt_total_sum", "majflt_total", SUM, NULL, true },
};

static const struct agg_field run_fields[] = {
	{ "run_s_median", "run_s", MEDIAN, round1, true },
	{ "ops", "ops", SUM, NULL, true },
	{ "ops_per_sec", "ops_per_sec", SUM, round0, true },
	{ "p50_us_median", "p50_us", MEDIAN, round1, true },
	{ "p99_us_max", "p99_us", MAX, round1, true },
	{ "p999_us_max", "p999_us", MAX, round1, true },
	{ "errors", "errors", SUM, NULL, true },
	{ "latch_sleeps", "latch_sleeps", SUM, NULL, true },
	{ "latch_timeouts", "latch_timeouts", SUM, NULL, true },
	{ "latch_futex_errors", "latch_futex_errors", SUM, NULL, true },
};

static int set_aggs(json_t *p, const struct agg_field *f, size_t n, const json_t *ready,
		    const json_t *done)
{
	int r = 0;

	for (size_t i = 0; i < n; i++) {
		double v = aggregate(f[i].from_done ? done : ready, f[i].member, f[i].how);

		r |= set(p, f[i].key, json_num(f[i].round && !isnan(v) ? f[i].round(v) : v));
	}
	return r;
}

int point_build(const struct point_input *in, json_t **ret)
{
	const json_t *b = in->before, *a = in->at_ready;
	_cleanup_json_ json_t *p = json_pack("{s:s}", "type", "point"), *vmpte = json_array(),
			      *cgkb = json_array();
	double owner_ready = json_member_num(a, "owner_pagetables");
	double owner_before = json_member_num(b, "owner_pagetables");
	double region_pt = json_member_num(in->region, "pgtables_bytes");
	double added = diff(json_member_num(a, "pagetables_kb"), json_member_num(b, "pagetables_kb"));
	double workers;
	json_t *cg = json_object_get(a, "cg"), *c;
	size_t i;
	int r = 0;

	if (!p || !vmpte || !cgkb || (in->named && json_object_update(p, (json_t *)in->named) < 0))
		return -ENOMEM;
	r |= set(p, "pagetables_kb_before", json_num(json_member_num(b, "pagetables_kb")));
	r |= set(p, "pagetables_kb_ready", json_num(json_member_num(a, "pagetables_kb")));
	r |= set(p, "pagetables_added_kb", json_num(added));
	/* Bytes in memory.stat; whole kB as the shell's $((x / 1024)) made them. */
	r |= set(p, "owner_pagetables_kb", json_num(trunc(owner_ready / 1024)));
	r |= set(p, "owner_pagetables_added_kb", json_num(trunc(diff(owner_ready, owner_before) / 1024)));
	r |= set(p, "region_pagetables_kb", json_num(floor(region_pt / 1024)));
	r |= set(p, "region_attached", region_attached(in->region));
	r |= set(p, "mem_available_kb_before", json_num(json_member_num(b, "mem_available_kb")));
	r |= set(p, "mem_available_kb_ready", json_num(json_member_num(a, "mem_available_kb")));
	r |= set(p, "shmem_kb", json_num(json_member_num(a, "shmem_kb")));
	r |= set(p, "hugepages_free", json_num(json_member_num(a, "hugepages_free")));
	r |= set(p, "launch_s", json_num(seconds(in->t0, in->t_launched)));
	r |= set(p, "all_ready_s", json_num(seconds(in->t0, in->t_ready)));
	r |= set(p, "run_wall_s", json_num(seconds(in->t_go, in->t_done)));

	workers = json_member_num(p, "workers");
	r |= set(p, "ready", json_integer((json_int_t)json_array_size(in->ready)));
	r |= set(p, "done", json_integer((json_int_t)json_array_size(in->done)));
	r |= set(p, "failed_workers", json_num(workers - (double)json_array_size(in->done)));
	r |= set(p, "page_bytes", first_member(in->ready, "page_bytes"));
	r |= set(p, "records", first_member(in->ready, "records"));
	r |= set_aggs(p, agg_fields, ARRAY_SIZE(agg_fields), in->ready, in->done);
	if (derived(in->ready, "vmpte_kb_ready", "vmpte_kb_start", "kb", vmpte) < 0)
		return -ENOMEM;
	r |= set(p, "vmpte_added_kb_median", json_num(aggregate(vmpte, "kb", MEDIAN)));

	/* The workers' cgroups: bytes in memory.stat, kB in the record. */
	json_array_foreach (cg, i, c)
		r |= json_array_append_new(cgkb, json_pack("{s:f}", "kb", json_member_num(c, "pagetables") / 1024));
	r |= set(p, "cg_count", json_integer((json_int_t)json_array_size(cg)));
	r |= set(p, "cg_pagetables_kb_sum", json_num(round0(aggregate(cgkb, "kb", SUM))));
	r |= set(p, "cg_pagetables_kb_min", json_num(round0(aggregate(cgkb, "kb", MIN))));
	r |= set(p, "cg_pagetables_kb_median", json_num(round0(aggregate(cgkb, "kb", MEDIAN))));
	r |= set(p, "cg_pagetables_kb_max", json_num(round0(aggregate(cgkb, "kb", MAX))));

	r |= set_aggs(p, run_fields, ARRAY_SIZE(run_fields), in->ready, in->done);
	r |= set(p, "pagetables_added_kb_per_worker",
		 json_num(workers > 0 ? round1(added / workers) : NAN));
	if (r)
		return -ENOMEM;
	r = verdict(p, in);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(p);
	return 0;
}

static json_t *by_id(const json_t *lines, const char *id)
{
	size_t i;
	json_t *o;

	json_array_foreach (lines, i, o) {
		const char *s = json_string_value(json_object_get(o, "id"));

		if (s && streq(s, id))
			return o;
	}
	return NULL;
}

/* A worker's member as jq would copy it: 623210.0 is 623210. */
static json_t *member(const json_t *o, const char *key)
{
	json_t *v = o ? json_object_get(o, key) : NULL;

	if (json_is_number(v))
		return json_num(json_number_value(v));
	return v ? json_incref(v) : json_null();
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int point_workers(const char *key, const json_t *ready, const json_t *done, const json_t *cg,
		  json_t **ret)
{
	const json_t *lists[] = { ready, done, cg };
	size_t cap = json_array_size(ready) + json_array_size(done) + json_array_size(cg), n = 0;
	_cleanup_free_ const char **ids = calloc(cap ?: 1, sizeof(*ids));
	_cleanup_json_ json_t *w = json_pack("{s:s, s:s, s:[]}", "type", "workers", "point", key, "workers");
	json_t *rows = json_object_get(w, "workers");
	int r = 0;

	if (!ids || !w)
		return -ENOMEM;
	for (size_t l = 0; l < ARRAY_SIZE(lists); l++) {
		size_t i;
		json_t *o;

		json_array_foreach (lists[l], i, o) {
			const char *id = json_string_value(json_object_get(o, "id"));

			if (id)
				ids[n++] = id;
		}
	}
	qsort(ids, n, sizeof(*ids), cmp_str);
	for (size_t i = 0; i < n; i++) {
		json_t *rl, *dl, *cl;
		double vmpte;

		if (i > 0 && streq(ids[i], ids[i - 1]))
			continue;
		rl = by_id(ready, ids[i]);
		dl = by_id(done, ids[i]);
		cl = by_id(cg, ids[i]);
		vmpte = diff(json_member_num(rl, "vmpte_kb_ready"), json_member_num(rl, "vmpte_kb_start"));
		r |= json_array_append_new(
			rows, json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b}", "id", ids[i],
					"cg_pagetables_kb",
					json_num(round0(json_member_num(cl, "pagetables") / 1024)),
					"ready_ms", member(rl, "start_to_ready_ms"), "proc_ready_ms",
					member(rl, "proc_start_to_ready_ms"), "warmup_minflt",
					member(rl, "warmup_minflt"), "vmpte_kb", json_num(vmpte),
					"minflt_total", member(dl, "minflt_total"), "ops_per_sec",
					member(dl, "ops_per_sec"), "p99_us", member(dl, "p99_us"), "errors",
					member(dl, "errors"), "done", dl != NULL));
	}
	if (r)
		return -ENOMEM;
	*ret = TAKE_PTR(w);
	return 0;
}

static const char *ops_text(const json_t *v, char *buf, size_t size)
{
	double x = json_number_value(v);

	if (!json_is_number(v))
		return "?";
	if (x >= 1e6)
		snprintf(buf, size, "%.15g M", round(x / 1e4) / 100);
	else if (x >= 1e3)
		snprintf(buf, size, "%.15g k", round(x / 10) / 100);
	else
		return json_num_text(v, buf, size);
	return buf;
}

/* One decimal, as the summary shows seconds. */
static const char *s1_text(const json_t *v, char *buf, size_t size)
{
	_cleanup_json_ json_t *r = json_is_number(v) ? json_num(round1(json_number_value(v))) : NULL;

	return json_num_text(r, buf, size);
}

char *point_summary(const json_t *p)
{
	char b[12][64];

#define K(i, key) json_num_text(json_object_get(p, key), b[i], sizeof(b[i]))
	return strprintf("all %s ready in %s s (per worker median %s ms, max %s ms), PageTables +%s kB "
			 "(%s kB/worker), faults/worker %s, %s ops/s, p99 %s us, %s errors",
			 K(0, "ready"), s1_text(json_object_get(p, "all_ready_s"), b[1], sizeof(b[1])),
			 K(2, "ready_ms_median"), K(3, "ready_ms_max"), K(4, "pagetables_added_kb"),
			 K(5, "pagetables_added_kb_per_worker"), K(6, "warmup_minflt_median"),
			 ops_text(json_object_get(p, "ops_per_sec"), b[7], sizeof(b[7])),
			 K(8, "p99_us_max"), K(9, "errors"));
#undef K
}
