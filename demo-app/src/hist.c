/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <string.h>

#include "hist.h"

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

unsigned hist_index(uint64_t v)
{
	unsigned e, shift;

	if (v < 2 * HIST_SUB)
		return (unsigned)v;
	e = 63 - (unsigned)__builtin_clzll(v);	/* >= HIST_SUB_BITS + 1 */
	shift = e - HIST_SUB_BITS;
	return shift * HIST_SUB + (unsigned)(v >> shift);
}

uint64_t hist_bucket_low(unsigned index)
{
	unsigned shift;

	if (index < 2 * HIST_SUB)
		return index;
	shift = index / HIST_SUB - 1;
	return (uint64_t)(index % HIST_SUB + HIST_SUB) << shift;
}

void hist_add(struct hist *h, uint64_t v)
{
	h->bucket[hist_index(v)]++;
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	uint64_t want, seen = 0, low, high, mid;
	unsigned i;

	if (!h->count)
		return 0;
	want = (uint64_t)ceil(q * (double)h->count);
	if (want < 1)
		want = 1;
	if (want >= h->count)
		return h->max;
	for (i = 0; i < HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= want)
			break;
	}
	low = hist_bucket_low(i);
	high = i + 1 < HIST_BUCKETS ? hist_bucket_low(i + 1) - 1 : UINT64_MAX;
	mid = low + (high - low) / 2;
	if (mid < h->min)
		mid = h->min;
	if (mid > h->max)
		mid = h->max;
	return mid;
}
