/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "estimate.h"
#include "mshare-common/macro.h"
#include "mshare-common/strprintf.h"
#include "util.h"

#define GIB (1024ull * 1024 * 1024)

int64_t estimate_env_kb(const char *name, int64_t def)
{
	const char *s = getenv(name);
	uint64_t v;

	if (!s || !*s)
		return def;
	if (parse_u64(s, &v) < 0 || v > INT64_MAX / 2)
		return -EINVAL;
	return (int64_t)v;
}

int64_t estimate_reserve_kb(int64_t mem_total_kb)
{
	int64_t def = mem_total_kb / 20;

	return estimate_env_kb("BENCH_RESERVE_KB", def > ESTIMATE_RESERVE_MIN_KB ? def : ESTIMATE_RESERVE_MIN_KB);
}

int64_t estimate_pagetables_kb(const char *backing, uint64_t bytes)
{
	if (streq(backing, "shm"))
		return (int64_t)(bytes / 1024 / 512);
	if (streq(backing, "hugetlb"))
		return (int64_t)(bytes * 4 / GIB + 4);
	if (streq(backing, "mshare"))
		return 0;
	return -EINVAL;
}

bool estimate_fits(uint64_t n, int64_t pt_kb, int64_t overhead_kb, int64_t avail_kb,
		   int64_t reserve_kb, char **why)
{
	int64_t need = (int64_t)n * (pt_kb + overhead_kb);

	if (need <= avail_kb - reserve_kb)
		return true;
	if (why)
		*why = strprintf("would not fit: %" PRIu64 " workers need about %" PRId64
				 " MiB (%" PRId64 " kB of page tables and %" PRId64
				 " kB otherwise each), MemAvailable is %" PRId64
				 " MiB less a reserve of %" PRId64 " MiB",
				 n, need / 1024, pt_kb, overhead_kb, avail_kb / 1024, reserve_kb / 1024);
	return false;
}

int estimate_sweep(const char *list, uint64_t bytes, int64_t avail_kb, int64_t reserve_kb,
		   int64_t overhead_kb, uint64_t max, uint64_t **counts, size_t *n)
{
	_cleanup_free_ char *copy = strdup(list);
	_cleanup_free_ uint64_t *c = NULL;
	size_t len, k = 0, cap = 0;
	bool more;
	char *tok, *save = NULL;
	uint64_t last = 1;

	if (!copy)
		return -ENOMEM;
	len = strlen(copy);
	more = len > 0 && copy[len - 1] == '+';
	if (more)
		copy[len - 1] = '\0';
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v, *grown;

		if (parse_u64(tok, &v) < 0 || v == 0)
			return -EINVAL;
		if (k == cap) {
			cap = cap ? cap * 2 : 8;
			grown = realloc(c, cap * sizeof(*c));
			if (!grown)
				return -ENOMEM;
			c = grown;
		}
		c[k++] = last = v;
	}
	if (k == 0)
		return -EINVAL;
	if (more) {
		int64_t per = (int64_t)(bytes / 1024 / 512) + overhead_kb;
		int64_t limit = (avail_kb - (int64_t)(bytes / 1024) - reserve_kb) / per;

		if (limit > 0 && (uint64_t)limit > max)
			limit = (int64_t)max;
		for (uint64_t v = last * 2; limit > 0 && v <= (uint64_t)limit; v *= 2) {
			if (k == cap) {
				uint64_t *grown;

				cap *= 2;
				grown = realloc(c, cap * sizeof(*c));
				if (!grown)
					return -ENOMEM;
				c = grown;
			}
			c[k++] = v;
		}
	}
	*counts = TAKE_PTR(c);
	*n = k;
	return 0;
}
