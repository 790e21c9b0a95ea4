// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The interposed mmap(), mmap64() and munmap(): shared anonymous
 * read-write mappings of at least MSHARE_PRELOAD_MIN_SIZE bytes are windows
 * onto mshare regions; everything else is the real call's.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/mman.h>

#include "config.h"
#include "real.h"
#include "region.h"
#include "report.h"
#include "table.h"
#include "window.h"

/* What a mapping's flags say about its memory: passed on to the object. */
#define OBJECT_FLAGS (MAP_HUGETLB | (MAP_HUGE_MASK << MAP_HUGE_SHIFT) | MAP_NORESERVE | MAP_POPULATE)
/* The flags a served mapping may have (MAP_NONBLOCK only qualifies
 * MAP_POPULATE). No MAP_FIXED, MAP_LOCKED, MAP_GROWSDOWN, MAP_32BIT... */
#define SERVED_FLAGS (MAP_SHARED | MAP_ANONYMOUS | OBJECT_FLAGS | MAP_NONBLOCK)

/* Shared anonymous read-write memory, anywhere: what a region can be. */
static bool shape_fits(size_t len, int prot, int flags, int fd, off64_t off)
{
	return len && prot == (PROT_READ | PROT_WRITE) && (flags & MAP_TYPE) == MAP_SHARED &&
	       (flags & MAP_ANONYMOUS) && !(flags & ~SERVED_FLAGS) && fd == -1 && off == 0;
}

/* A window for mmap(hint, len, ..., flags, ...), or MAP_FAILED and *w. */
static void *serve(const struct config *c, void *hint, size_t len, int flags, struct why *w)
{
	struct window *win;
	struct region r;
	char desc[96];
	void *p;

	if (c->error) {
		why_set(w, c->error, "%s", c->error_text);
		return MAP_FAILED;
	}
	table_lock();
	window_forget_stale();
	win = table_new_window();
	if (!win) {
		table_unlock();
		why_set(w, -ENOMEM, "it serves %d mappings already", TABLE_WINDOWS);
		return MAP_FAILED;
	}
	if (region_adopt(c, len, flags & OBJECT_FLAGS, hint, &r, &p, w) < 0) {
		table_unlock();
		return MAP_FAILED;
	}
	win->len = len;
	win->region = r;
	window_release_overlapping(p, r.size);
	table_publish_window(win, p, r.size);
	table_unlock();
	report_served("serving %zu bytes of shared memory from %s (window at %p)", len,
		      region_describe(&r, desc, sizeof(desc)), p);
	return p;
}

/* Served, failed under MSHARE_PRELOAD_STRICT, or NULL: the real call's. */
static void *try_serve(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	const struct config *c;
	struct why w;
	char what[64];
	void *p;

	if (!shape_fits(len, prot, flags, fd, off))
		return NULL;
	c = config_get();
	if (len < c->min_size)
		return NULL;
	p = serve(c, addr, len, flags, &w);
	if (p != MAP_FAILED)
		return p;
	snprintf(what, sizeof(what), "mmap of %zu bytes", len);
	report_fallback(what, &w, c->strict);
	if (!c->strict)
		return NULL;
	errno = -w.error;
	return MAP_FAILED;
}

/*
 * A mapping the kernel made where the table has a window (over all of it
 * with MAP_FIXED; or anywhere over one that was no longer there) ends it:
 * the window is forgotten, its region let go.
 */
static void *replaced(void *p, size_t len)
{
	int saved = errno;

	if (p != MAP_FAILED && table_maybe_overlap(p, len)) {
		table_lock();
		window_release_overlapping(p, len);
		table_unlock();
	}
	errno = saved;
	return p;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p = try_serve(addr, len, prot, flags, fd, off);

	return p ? p : replaced(real_mmap(addr, len, prot, flags, fd, off), len);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	void *p = try_serve(addr, len, prot, flags, fd, off);

	return p ? p : replaced(real_mmap64(addr, len, prot, flags, fd, off), len);
}

/*
 * After the kernel refused munmap(addr, len) with EINVAL: the whole window
 * at addr, if len covers what the program mapped there and the window is
 * still there (the kernel refuses to unmap part of a window). 0, or -errno.
 */
static int unmap_whole(void *addr, size_t len)
{
	struct window *win = table_find_window(addr);
	char what[80];
	uint64_t size;

	if (!win || len < win->len)
		return -EINVAL;
	size = window_size(win);
	if (len >= size)
		return -EINVAL;
	snprintf(what, sizeof(what), "munmap of %zu bytes at %p", len, addr);
	if (window_check(win, what) <= 0)
		return -EINVAL;
	if (real_munmap(addr, size) < 0)
		return -errno;
	window_release_overlapping(addr, size);
	return 0;
}

/*
 * munmap() where the table has a window: the program's own call first. A
 * window ends only whole, so where the kernel refuses part of one (EINVAL)
 * the call from the window's address over at least the length the program
 * mapped unmaps the whole window (the region's size) and lets the region
 * go. The table alone is not trusted with that: the program may have
 * unmapped the window behind the library's back, and whatever lies there
 * now would go with it (up to the sharing alignment's worth). Anything the
 * call did unmap takes the windows there along (they are forgotten).
 */
int munmap(void *addr, size_t len)
{
	int r;

	if (!table_maybe_overlap(addr, len))
		return real_munmap(addr, len);
	table_lock();
	if (real_munmap(addr, len) == 0) {
		window_release_overlapping(addr, len);
		r = 0;
	} else
		r = errno == EINVAL ? unmap_whole(addr, len) : -errno;
	table_unlock();
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return 0;
}
