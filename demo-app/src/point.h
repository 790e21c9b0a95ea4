/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One benchmark point from what the driver measured and what its workers
 * said: the POINT record (medians, maxima and sums over the workers, the
 * page tables before and at the barrier), its verdict, the WORKERS record
 * (a row per worker), and the one-line summary of the progress and TAP
 * lines. Field by field what demo-app/bench/README.md lists.
 */

#include <jansson.h>
#include <stdint.h>

struct point_input {
	const json_t *named;	/* the driver's fields (mode, backing, workers, ...), copied first */
	const json_t *before;	/* sample_take() as the workers were started */
	const json_t *at_ready;	/* sample_take() once all were ready */
	const json_t *ready;	/* the workers' ready lines (objects) */
	const json_t *done;	/* their final lines */
	const json_t *region;	/* the region's entry of `mshare-ctl --json list`, or NULL */
	/* Milliseconds of one clock: start, all launched, all ready, go, all done. */
	int64_t t0, t_launched, t_ready, t_go, t_done;
	const char *status;	/* the driver's: "ok" or "failed" (a stall, a timeout) */
	const char *reason;	/* why it failed, or NULL */
};

/*
 * The POINT record. Its status is the driver's, turned to "failed" when a
 * worker gave no result or an operation found a missing or torn record;
 * reason says why (null when ok). 0 or -ENOMEM.
 */
int point_build(const struct point_input *in, json_t **ret);

/* The entry named name in mshare-ctl's region list, or NULL. */
const json_t *point_region(const json_t *list, const char *name);

/*
 * The WORKERS record of the point called key: per worker id (sorted), its
 * cgroup's page tables in kB, start to ready, warm-up and total faults,
 * VmPTE growth, ops/s, p99, errors, whether it finished. cg is the ready
 * sample's "cg". 0 or -ENOMEM.
 */
int point_workers(const char *key, const json_t *ready, const json_t *done, const json_t *cg,
		  json_t **ret);

/* "all 16 ready in 6.5 s (per worker median ...), PageTables +624 kB ...". malloc'ed. */
char *point_summary(const json_t *point);
