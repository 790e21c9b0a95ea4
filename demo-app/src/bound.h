/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Issue 6's bound, checked by `make bench --ci`: at the same pool and
 * worker count, mshare's number at least factor times smaller than shm's
 * (page tables 20x, warm-up faults per worker 100x). Counts, not times.
 */

#include <jansson.h>
#include <stdbool.h>

struct bound {
	const char *name;	/* "page tables" */
	const char *short_name;	/* when there is nothing to compare */
	const char *field;	/* of the POINT records: "pagetables_added_kb" */
	double factor;		/* 20 */
	const char *unit;	/* " kB", or "" */
};

/* The two checks of the CI bound. */
extern const struct bound bound_ci[2];

/*
 * Checks one bound on the two points (POINT records; NULL if the point
 * did not run). *text is the TAP description, malloc'ed: the numbers,
 * their ratio, and context (what ran: "16 workers, 1G pool, ..."). Whether
 * it holds: shm's number is positive and at least factor times mshare's
 * (a negative mshare number counts as 0). False without both numbers.
 */
bool bound_check(const struct bound *b, const json_t *mshare, const json_t *shm, const char *context,
		 char **text);
