/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <jansson.h>
#include <math.h>

#include "mshare-common/macro.h"
#include "report.h"
#include "util.h"

static void json_decref_p(json_t **j)
{
	json_decref(*j);
}
#define _cleanup_json_ _cleanup_(json_decref_p)

/* Milliseconds with microseconds kept: 12.345. */
static json_t *ms(uint64_t ns)
{
	return json_real(round((double)ns / 1e3) / 1e3);
}

static json_t *us(uint64_t ns)
{
	return json_real(round((double)ns / 10.0) / 100.0);
}

static json_t *u64(uint64_t v)
{
	return json_integer((json_int_t)v);
}

static json_t *kb_or_null(int64_t kb)
{
	return kb < 0 ? json_null() : json_integer(kb);
}

static int set(json_t *o, const char *key, json_t *v)
{
	return json_object_set_new(o, key, v ?: json_null());
}

/* What the ready line and the final line share. */
static json_t *common(const struct worker_report *w, const char *event)
{
	const struct workload_opts *o = w->opts;
	json_t *j = json_object();
	int r = 0;

	if (!j)
		return NULL;
	r |= set(j, "event", json_string(event));
	r |= set(j, "program", json_string("demo-worker"));
	r |= set(j, "id", w->id ? json_string(w->id) : json_null());
	r |= set(j, "pid", json_integer(w->pid));
	r |= set(j, "backing", json_string(w->backing));
	r |= set(j, "backing_spec", json_string(w->backing_spec));
	r |= set(j, "pool_bytes", u64(w->pool_bytes));
	r |= set(j, "record_bytes", u64(w->record_bytes));
	r |= set(j, "records", u64(w->records));
	r |= set(j, "page_bytes", w->page_bytes ? u64(w->page_bytes) : json_null());
	r |= set(j, "mix", json_string(mix_name(o->mix)));
	r |= set(j, "dist", json_string(dist_name(o->dist)));
	r |= set(j, "theta", o->dist == DIST_ZIPFIAN ? json_real(o->theta) : json_null());
	r |= set(j, "seed", u64(o->seed));
	r |= set(j, "start_to_ready_ms", ms(w->t_ready - w->t_main));
	r |= set(j, "proc_start_to_ready_ms",
		 w->boot_proc_start && w->boot_ready >= w->boot_proc_start
			 ? ms(w->boot_ready - w->boot_proc_start)
			 : json_null());
	r |= set(j, "map_ms", ms(w->t_mapped - w->t_main));
	r |= set(j, "warmup_ms", ms(w->t_ready - w->t_mapped));
	r |= set(j, "ready_boottime_ms", ms(w->boot_ready));
	r |= set(j, "warmup", json_string(w->warmup));
	r |= set(j, "warmup_pages", u64(w->warmup_pages));
	r |= set(j, "warmup_minflt", u64(w->at_ready.minflt - w->at_mapped.minflt));
	r |= set(j, "start_minflt", u64(w->at_main.minflt));
	r |= set(j, "vmpte_kb_start", kb_or_null(w->at_main.vmpte_kb));
	r |= set(j, "vmpte_kb_ready", kb_or_null(w->at_ready.vmpte_kb));
	if (r) {
		json_decref(j);
		return NULL;
	}
	return j;
}

char *report_ready_line(const struct worker_report *w)
{
	_cleanup_json_ json_t *j = common(w, "ready");

	return j ? json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(12)) : NULL;
}

static int add_run(json_t *j, const struct worker_report *w)
{
	const struct workload_result *res = w->run;
	double secs = (double)res->run_ns / 1e9;
	int r = 0;

	r |= set(j, "go_wait_ms", ms(w->t_go - w->t_ready));
	r |= set(j, "minflt_total", u64(w->at_end.minflt));
	r |= set(j, "majflt_total", u64(w->at_end.majflt));
	r |= set(j, "run_minflt", u64(w->at_end.minflt - w->at_ready.minflt));
	r |= set(j, "vmpte_kb_end", kb_or_null(w->at_end.vmpte_kb));
	r |= set(j, "run_s", json_real(round(secs * 1e6) / 1e6));
	r |= set(j, "ops", u64(res->ops));
	r |= set(j, "reads", u64(res->reads));
	r |= set(j, "updates", u64(res->updates));
	r |= set(j, "ops_per_sec", json_real(secs > 0 ? round((double)res->ops / secs) : 0));
	r |= set(j, "p50_us", us(hist_quantile(&res->latency, 0.50)));
	r |= set(j, "p99_us", us(hist_quantile(&res->latency, 0.99)));
	r |= set(j, "p999_us", us(hist_quantile(&res->latency, 0.999)));
	r |= set(j, "max_us", us(res->latency.count ? res->latency.max : 0));
	r |= set(j, "mean_us", us(res->latency.count ? res->latency.sum / res->latency.count : 0));
	r |= set(j, "errors", u64(res->not_found + res->bad_checksum));
	r |= set(j, "not_found", u64(res->not_found));
	r |= set(j, "bad_checksum", u64(res->bad_checksum));
	r |= set(j, "latch_sleeps", u64(w->latch->sleeps));
	r |= set(j, "latch_timeouts", u64(w->latch->timeouts));
	r |= set(j, "latch_futex_errors", u64(w->latch->futex_errors));
	return r;
}

static json_t *verify_object(const struct pool_verify *v)
{
	json_t *j = json_object();

	if (!j)
		return NULL;
	if (set(j, "found", u64(v->found)) | set(j, "missing", u64(v->missing)) |
	    set(j, "bad", u64(v->bad)) | set(j, "updates", u64(v->updates))) {
		json_decref(j);
		return NULL;
	}
	return j;
}

char *report_final_line(const struct worker_report *w)
{
	_cleanup_json_ json_t *j = common(w, "done");

	if (!j || add_run(j, w))
		return NULL;
	if (w->verify && set(j, "verify", verify_object(w->verify)))
		return NULL;
	return json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(12));
}
