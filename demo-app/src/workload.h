/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The YCSB-like run of a worker over a loaded pool: each operation reads
 * or updates one record, picked by key from a zipfian or uniform
 * distribution, under the record's bucket latch (shared for a read, alone
 * for an update), and is timed into a latency histogram.
 *
 *   read-mostly    95 % reads, 5 % updates (YCSB workload B)
 *   update-heavy   50 % reads, 50 % updates (YCSB workload A)
 *   read-only      reads only (YCSB workload C)
 *
 * A read copies the record out and checks its checksum; an update writes a
 * new payload and version. A key not found or a checksum that does not
 * match is an error.
 */

#include <signal.h>
#include <stdint.h>

#include "hist.h"
#include "pool.h"

enum mix {
	MIX_READ_MOSTLY,
	MIX_UPDATE_HEAVY,
	MIX_READ_ONLY,
};

enum dist {
	DIST_ZIPFIAN,
	DIST_UNIFORM,
};

struct workload_opts {
	enum mix mix;
	enum dist dist;
	double theta;		/* zipfian */
	uint64_t seed;
	double seconds;		/* stop after this long ... */
	uint64_t max_ops;	/* ... or this many operations (0: no limit) */
};

struct workload_result {
	uint64_t ops, reads, updates;
	uint64_t not_found, bad_checksum;
	uint64_t run_ns;
	struct hist latency;	/* nanoseconds per operation */
};

/* "read-mostly" ... -> mix; -EINVAL. */
int mix_parse(const char *s, enum mix *out);
const char *mix_name(enum mix m);
double mix_read_fraction(enum mix m);

int dist_parse(const char *s, enum dist *out);
const char *dist_name(enum dist d);

/* Set from a signal handler (demo-worker: SIGTERM, SIGINT): the run ends
 * after the operation in progress, as if its time were up. */
extern volatile sig_atomic_t workload_stop;

/* Run the mix on the pool; res is filled. -EINVAL (logged) for bad options. */
int workload_run(struct pool *p, const struct workload_opts *o, struct workload_result *res);
