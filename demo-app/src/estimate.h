/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Whether more workers fit in the guest's memory: the benchmark stops a
 * sweep before a point would push the guest into the OOM killer (which
 * would kill the run, not just the point). An estimate from what each
 * worker costs besides the pool: page tables for it and a fixed overhead.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Memory kept free: BENCH_RESERVE_KB, default the larger of 256 MiB and 5 % of MemTotal. */
#define ESTIMATE_RESERVE_MIN_KB 262144
/* A worker besides its page tables (BENCH_OVERHEAD_KB), in a container and as a process. */
#define ESTIMATE_OVERHEAD_CONTAINER_KB 3072
#define ESTIMATE_OVERHEAD_PROCESS_KB 1024

/* A kB value from the environment (a decimal number), else def; -EINVAL if it is not one. */
int64_t estimate_env_kb(const char *name, int64_t def);

/* The reserve for a MemTotal, from BENCH_RESERVE_KB if set; -EINVAL for a bad one. */
int64_t estimate_reserve_kb(int64_t mem_total_kb);

/*
 * The page tables one worker needs for a pool of bytes on backing, in kB:
 * shm 8 bytes of PTE per 4 KiB page, hugetlb a PMD table per GiB (and a
 * little), mshare none (the region's are shared). -EINVAL for another backing.
 */
int64_t estimate_pagetables_kb(const char *backing, uint64_t bytes);

/*
 * Whether n workers with pt_kb + overhead_kb each fit in avail_kb less
 * reserve_kb. If not, and why is not NULL, *why says why (malloc'ed).
 */
bool estimate_fits(uint64_t n, int64_t pt_kb, int64_t overhead_kb, int64_t avail_kb,
		   int64_t reserve_kb, char **why);

/*
 * The worker counts of one pool size: the list "1,16,64", and with a
 * trailing "+" doublings of its last count while shm workers (page tables
 * and overhead_kb each) are estimated to fit in avail_kb less the pool and
 * reserve_kb, at most max. *counts is malloc'ed. 0, -EINVAL for a bad
 * list, -ENOMEM.
 */
int estimate_sweep(const char *list, uint64_t bytes, int64_t avail_kb, int64_t reserve_kb,
		   int64_t overhead_kb, uint64_t max, uint64_t **counts, size_t *n);
