/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the benchmark driver measures of the whole system at a point: the
 * page tables and memory of /proc/meminfo, the page tables charged to the
 * region owner's cgroup and to each worker's cgroup (memory.stat).
 */

#include <jansson.h>

struct sample_source {
	const char *meminfo;	/* "/proc/meminfo" */
	const char *owner_stat;	/* memory.stat of mshare-owner's cgroup, or NULL */
	const char *cgroups;	/* the directory of the workers' cgroups, or NULL */
	const char *prefix;	/* of the names of this point's workers' cgroups */
};

/*
 * A sample as one object: pagetables_kb, mem_available_kb, shmem_kb,
 * hugepages_free (null where meminfo lacks them), owner_pagetables (bytes,
 * null without the owner's memory.stat), cg: [{"id", "pagetables"}] in
 * bytes, one per worker cgroup that has a memory.stat, sorted by id.
 * meminfo is read first, in one pass, so its numbers belong together.
 * 0 or -errno (the meminfo file could not be read).
 */
int sample_take(const struct sample_source *src, json_t **ret);
