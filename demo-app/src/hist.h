/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A latency histogram of fixed size, log-linear as HdrHistogram's: values
 * below 64 have a bucket each, and every power of two above is cut into 32
 * buckets, so a percentile is off by at most 1/32 (about 3 %) of itself. It
 * covers every uint64_t; recording is a few instructions, with no
 * allocation and no sorting.
 */

#include <stdint.h>

#define HIST_SUB_BITS 5
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BUCKETS ((64 - HIST_SUB_BITS) * HIST_SUB + HIST_SUB)

struct hist {
	uint64_t count, sum, min, max;
	uint64_t bucket[HIST_BUCKETS];
};

void hist_init(struct hist *h);
void hist_add(struct hist *h, uint64_t value);

/* The bucket of value, and the smallest value of a bucket. */
unsigned hist_index(uint64_t value);
uint64_t hist_bucket_low(unsigned index);

/*
 * The value at quantile q (0 < q <= 1): the middle of the bucket that holds
 * the ceil(q * count)-th smallest value, clamped to [min, max]; the maximum
 * itself when that is the largest value. 0 if empty.
 */
uint64_t hist_quantile(const struct hist *h, double q);
