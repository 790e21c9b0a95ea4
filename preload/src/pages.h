/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Page sizes and rounding: what a mapping of len bytes occupies, and the
 * size of a region that holds it.
 */

#include <stdint.h>

/* The base page size. */
uint64_t page_size(void);

/*
 * The huge page size that mmap() flags (MAP_HUGETLB with MAP_HUGE_*, or
 * shmget()'s SHM_HUGE_*, which are encoded the same way) ask for: the
 * encoded one, else the default (Hugepagesize: in /proc/meminfo). 0 or
 * -errno.
 */
int huge_page_size(int flags, uint64_t *ret);

/* *ret = v rounded up to a multiple of to (not 0): 0 or -EOVERFLOW. */
int round_up(uint64_t v, uint64_t to, uint64_t *ret);
