/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Where the pool lives, behind one interface:
 *
 *   mshare[:NAME]   an mshare region of mshare-owner(8), mapped with
 *                   mshare_attach(): without NAME the descriptor in
 *                   $MSHARE_FD (as `mshare-ctl run NAME -- ...` passes it);
 *                   with NAME the one in $MSHARE_FD_<NAME> if set, else
 *                   one asked for with mshare_request(NAME), as in a
 *                   container. The daemon creates, sizes and owns the region;
 *                   the pool sits in its object at offset 0.
 *   shm:PATH        a file on a tmpfs (/dev/shm/NAME), mmap(MAP_SHARED):
 *                   shared memory as databases use it today.
 *   hugetlb:PATH    a file on a hugetlbfs mount, mmap(MAP_SHARED) at a
 *                   1 GiB-aligned address: huge pages, and the kernel's own
 *                   page-table sharing for hugetlb (PMD sharing, for whole
 *                   aligned GiBs of the mapping).
 */

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

enum backing_kind {
	BACKING_MSHARE,
	BACKING_SHM,
	BACKING_HUGETLB,
};

struct backing_spec {
	enum backing_kind kind;
	const char *arg;	/* mshare: the region's name or NULL; else the path */
};

struct backing_map {
	enum backing_kind kind;
	void *addr;		/* where the pool starts */
	uint64_t size;		/* bytes usable from addr (file or region size) */
	size_t map_len;		/* the mapping, for munmap() */
	uint64_t page_size;	/* of the memory, or 0 if unknown (mshare) */
	char what[PATH_MAX + 64]; /* the backing, for messages */
};

/* "mshare", "shm" or "hugetlb". */
const char *backing_kind_name(enum backing_kind kind);

/* Parse a --backing= value; spec->arg points into s. -EINVAL (not logged). */
int backing_parse(const char *s, struct backing_spec *spec);

/*
 * For the loader: map the backing with size bytes usable, creating and
 * sizing the file for shm and hugetlb (an existing file is resized and
 * reused). For mshare the region must already map an object of at least
 * size bytes at offset 0.
 */
int backing_create(const struct backing_spec *spec, uint64_t size, struct backing_map *m);

/* For a worker: map the backing as it is. */
int backing_open(const struct backing_spec *spec, struct backing_map *m);

/*
 * Whether [0, size) of the mapping has memory behind it (its first and last
 * byte can be read): -EFAULT (logged) if not, for a region whose object is
 * smaller than the pool.
 */
int backing_check(const struct backing_map *m, uint64_t size);

void backing_close(struct backing_map *m);
