/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <time.h>

#include "mshare-common/log.h"
#include "util.h"
#include "workload.h"
#include "zipf.h"

static const char *const mix_names[] = {
	[MIX_READ_MOSTLY] = "read-mostly",
	[MIX_UPDATE_HEAVY] = "update-heavy",
	[MIX_READ_ONLY] = "read-only",
};

static const char *const dist_names[] = {
	[DIST_ZIPFIAN] = "zipfian",
	[DIST_UNIFORM] = "uniform",
};

int mix_parse(const char *s, enum mix *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(mix_names); i++)
		if (streq(s, mix_names[i])) {
			*out = (enum mix)i;
			return 0;
		}
	return -EINVAL;
}

const char *mix_name(enum mix m)
{
	return mix_names[m];
}

double mix_read_fraction(enum mix m)
{
	switch (m) {
	case MIX_READ_MOSTLY:
		return 0.95;
	case MIX_UPDATE_HEAVY:
		return 0.5;
	case MIX_READ_ONLY:
		return 1.0;
	}
	return 1.0;
}

int dist_parse(const char *s, enum dist *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(dist_names); i++)
		if (streq(s, dist_names[i])) {
			*out = (enum dist)i;
			return 0;
		}
	return -EINVAL;
}

const char *dist_name(enum dist d)
{
	return dist_names[d];
}

volatile sig_atomic_t workload_stop;

/* An update: a new payload for the record's new version. */
static void rewrite(struct record *r, size_t record_size, void *arg)
{
	record_fill(r, record_size, *(uint64_t *)arg);
}

int workload_run(struct pool *p, const struct workload_opts *o, struct workload_result *res)
{
	_cleanup_free_ struct record *copy = malloc(p->record_size);
	uint64_t n = pool_nrecords(p), start, now, deadline, read_cut, salt = 0;
	struct zipf z;
	struct rng rng;

	*res = (struct workload_result){ 0 };
	hist_init(&res->latency);
	if (!copy)
		return log_error_errno(-ENOMEM, "workload: %m");
	if (!n) {
		log_error("the pool holds no records");
		return -EINVAL;
	}
	if (o->dist == DIST_ZIPFIAN && zipf_init(&z, n, o->theta) < 0) {
		log_error("--theta=%g: must be above 0 and below 1", o->theta);
		return -EINVAL;
	}
	rng_seed(&rng, o->seed);
	/* A read when the next random number is below read_cut. */
	read_cut = mix_read_fraction(o->mix) >= 1.0
			   ? UINT64_MAX
			   : (uint64_t)(mix_read_fraction(o->mix) * 18446744073709551616.0);
	start = now = clock_ns(CLOCK_MONOTONIC);
	deadline = start + (uint64_t)(o->seconds * 1e9);

	while (!workload_stop && now < deadline && (!o->max_ops || res->ops < o->max_ops)) {
		uint64_t key = o->dist == DIST_ZIPFIAN ? zipf_key(&z, &rng) : rng_below(&rng, n);
		bool read = rng_next(&rng) < read_cut;
		uint64_t t0;
		int r;

		if (!read)
			salt = rng_next(&rng);
		t0 = clock_ns(CLOCK_MONOTONIC);

		if (read) {
			r = pool_read(p, key, copy);
			res->reads++;
		} else {
			r = pool_update(p, key, rewrite, &salt);
			res->updates++;
		}
		now = clock_ns(CLOCK_MONOTONIC);
		hist_add(&res->latency, now - t0);
		res->ops++;
		if (r == -ENOENT)
			res->not_found++;
		else if (r < 0)
			res->bad_checksum++;
	}
	res->run_ns = now - start;
	return 0;
}
