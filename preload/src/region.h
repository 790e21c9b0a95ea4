/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Where served memory comes from: a region of the process's own
 * (mshare_create(), the default), or the region MSHARE_PRELOAD_REGION
 * names, granted by mshare-owner (mshare_request()).
 *
 * A region of its own is made for each mapping: sized to the mapping
 * rounded up to the sharing alignment, holding one anonymous shared object
 * (with MAP_HUGETLB if asked) over the mapping's length at offset 0. Its
 * owner file is the region's life: it is kept open, at a high descriptor
 * number, until the mapping is unmapped.
 *
 * A granted region serves one mapping at a time, in one process at a time:
 * the library takes a POSIX write lock (fcntl(F_SETLK)) on byte
 * PRELOAD_LOCK_BYTE of it, refuses a region that has windows in any
 * process, before its own window and again with it, and clears the memory
 * it hands out. (Not flock(): mshare-owner
 * hands every client the same open file of a region, which one flock()
 * would let them all share; a POSIX lock belongs to a process.)
 *
 * The functions are called with the table lock held (table.h).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "report.h"

/* The byte of a granted region the library locks while it uses it. */
#define PRELOAD_LOCK_BYTE 1

struct region {
	int fd;			/* -1: none */
	uint64_t size;		/* of the region, and of a window onto it */
	uint64_t align;		/* the sharing alignment */
	uint64_t object;	/* bytes of shared memory at offset 0 relied on */
	bool granted;		/* MSHARE_PRELOAD_REGION's, else its own */
};

#define REGION_NULL ((struct region){ .fd = -1 })

/*
 * A region with at least len bytes of read-write shared memory at offset 0,
 * and its first window (placed at hint if free), in *r and *window;
 * object_flags are MAP_HUGETLB (with MAP_HUGE_*), MAP_NORESERVE and
 * MAP_POPULATE for the object of a region of its own. The memory reads as
 * zeros. 0, or -errno with *w saying why.
 */
int region_adopt(const struct config *c, uint64_t len, int object_flags, void *hint,
		 struct region *r, void **window, struct why *w);

/*
 * Another window onto r (flags: MSHARE_ATTACH_*), or MAP_FAILED with *w
 * saying why.
 */
void *region_window(const struct region *r, void *addr, unsigned flags, struct why *w);

/* Lets the region go: closes its descriptor (which ends a region of its
 * own, and releases a granted one). */
void region_close(struct region *r);

/* "a region of its own" or "region 'NAME'", for messages. */
const char *region_describe(const struct region *r, char *buf, size_t len);
