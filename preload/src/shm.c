// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The interposed System V shared memory calls. A segment of at least
 * MSHARE_PRELOAD_MIN_SIZE bytes that shmget() creates is backed by a region:
 * the real segment is created too (with SHM_NORESERVE, and without
 * SHM_HUGETLB: it is never touched, so it costs no memory), so that its
 * key, id, IPC_STAT, IPC_RMID and shm_nattch behave as ever; shmat() of it
 * attaches the real segment where nobody looks (PROT_NONE) and returns a
 * window of the region; shmdt() of the window detaches both.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>

#include <mshare.h>

#include "config.h"
#include "real.h"
#include "region.h"
#include "report.h"
#include "table.h"
#include "window.h"

/* SHM_HUGE_SHIFT and SHM_HUGE_MASK of <linux/shm.h> (which the C library's
 * header does not have): the encoding of MAP_HUGE_*, HUGETLB_FLAG_ENCODE_*. */
#define SHM_HUGE_BITS (MAP_HUGE_MASK << MAP_HUGE_SHIFT)

/* The object a region needs for shmget()'s flags. */
static int object_flags(int shmflg)
{
	int f = 0;

	if (shmflg & SHM_HUGETLB)
		f |= MAP_HUGETLB | (shmflg & SHM_HUGE_BITS);
	if (shmflg & SHM_NORESERVE)
		f |= MAP_NORESERVE;
	return f;
}

/* Whether this process has just created segment id (nobody attached it). */
static bool created_here(int id)
{
	struct shmid_ds ds;

	return real_shmctl(id, IPC_STAT, &ds) == 0 && ds.shm_cpid == getpid() && ds.shm_nattch == 0 &&
	       ds.shm_lpid == 0;
}

/* The new segment id, backed by a region; -1 with errno; or -2 and *w. */
static int create_backed(const struct config *c, key_t key, size_t size, int shmflg,
			 struct why *w)
{
	struct segment *s, *old;
	struct region r;
	void *p;
	int id, err;

	if (c->error)
		return why_set(w, c->error, "%s", c->error_text), -2;
	table_lock();
	window_forget_stale();
	s = table_new_segment();
	if (!s) {
		table_unlock();
		return why_set(w, -ENOMEM, "it backs %d segments already", TABLE_SEGMENTS), -2;
	}
	if (region_adopt(c, size, object_flags(shmflg), NULL, &r, &p, w) < 0) {
		table_unlock();
		return -2;
	}
	real_munmap(p, r.size); /* shmat() attaches windows of its own */
	id = real_shmget(key, size, (shmflg & ~(SHM_HUGETLB | SHM_HUGE_BITS)) | SHM_NORESERVE);
	err = errno;
	/* A segment someone else created (IPC_CREAT without IPC_EXCL) is
	 * theirs; so is an id this process still knows, whatever it was. */
	old = id >= 0 ? table_find_segment(id) : NULL;
	if (id < 0 || old ||
	    (!(shmflg & IPC_EXCL) && key != IPC_PRIVATE && !created_here(id))) {
		region_close(&r);
		table_unlock();
		errno = err;
		return id;
	}
	*s = (struct segment){ .used = true, .id = id, .size = size, .region = r };
	table_unlock();
	return id;
}

int shmget(key_t key, size_t size, int shmflg)
{
	const struct config *c;
	struct why w;
	char what[64];
	int id;

	if (!(shmflg & IPC_CREAT) || !size)
		return real_shmget(key, size, shmflg);
	c = config_get();
	if (size < c->min_size)
		return real_shmget(key, size, shmflg);
	/* An existing segment stays what it is: its creator's (and one we
	 * cannot even look at is not ours to back). */
	if (key != IPC_PRIVATE && (real_shmget(key, 0, 0) >= 0 || errno != ENOENT))
		return real_shmget(key, size, shmflg);
	id = create_backed(c, key, size, shmflg, &w);
	if (id != -2)
		return id;
	snprintf(what, sizeof(what), "shmget of %zu bytes", size);
	report_fallback(what, &w, c->strict);
	if (c->strict) {
		errno = -w.error;
		return -1;
	}
	return real_shmget(key, size, shmflg);
}

/* Where shmat(addr, shmflg) wants the window: 0 (anywhere, *want NULL),
 * or -EINVAL and *w if the region cannot place a window there. */
static int placement(const struct segment *s, const void *addr, int shmflg, void **want,
		     struct why *w)
{
	uintptr_t a = (uintptr_t)addr;

	*want = NULL;
	if (!addr)
		return 0;
	if (shmflg & SHM_RND)
		a -= a % SHMLBA;
	if (a % s->region.align)
		return why_set(w, -EINVAL,
			       "segment %d is served from an mshare region, whose windows lie at multiples of %" PRIu64
			       " bytes, and %p is not one", s->id, s->region.align, addr);
	*want = (void *)a;
	return 0;
}

void *shmat(int id, const void *addr, int shmflg)
{
	unsigned flags = 0;
	struct segment *s;
	struct window *win;
	void *hidden, *want, *p;
	char what[64], desc[96];
	struct why w;
	int err;

	table_lock();
	window_forget_stale();
	s = table_find_segment(id);
	if (!s) {
		table_unlock();
		return real_shmat(id, addr, shmflg);
	}
	if (placement(s, addr, shmflg, &want, &w) < 0)
		goto fail;
	if (want)
		flags |= MSHARE_ATTACH_FIXED;
	if (shmflg & SHM_RDONLY)
		flags |= MSHARE_ATTACH_RDONLY;
	if (shmflg & SHM_EXEC)
		flags |= MSHARE_ATTACH_EXEC;
	win = table_new_window();
	if (!win) {
		why_set(&w, -ENOMEM, "it serves %d mappings already", TABLE_WINDOWS);
		goto fail;
	}
	/* The real segment, attached in the mode asked for (so that its
	 * permissions decide as ever) and never touched. */
	hidden = real_shmat(id, NULL, shmflg & SHM_RDONLY);
	if (hidden == (void *)-1) {
		table_unlock();
		return hidden;
	}
	err = errno;
	mprotect(hidden, s->size, PROT_NONE);
	errno = err;
	p = region_window(&s->region, want, flags, &w);
	if (p == MAP_FAILED) {
		real_shmdt(hidden);
		goto fail;
	}
	win->len = s->size;
	win->segment = table_segment_index(s);
	win->hidden = hidden;
	s->attached++;
	window_release_overlapping(p, s->region.size);
	table_publish_window(win, p, s->region.size);
	table_unlock();
	report_served("serving System V segment %d (%" PRIu64 " bytes) from %s (window at %p)", id,
		      s->size, region_describe(&s->region, desc, sizeof(desc)), p);
	return p;
fail:
	table_unlock();
	snprintf(what, sizeof(what), "shmat of segment %d", id);
	report_failure(what, &w);
	errno = -w.error;
	return (void *)-1;
}

/*
 * shmdt() of a window: unmaps it whole, with the real segment beside it,
 * once it is checked to be still there (see munmap()); one that is gone
 * is forgotten, and the call is the C library's.
 */
static int detach(struct window *win, const void *addr)
{
	char what[64];
	int k;

	snprintf(what, sizeof(what), "shmdt of the window at %p", addr);
	k = window_check(win, what);
	if (k == 0)
		return real_shmdt(addr) < 0 ? -errno : 0;
	if (k < 0)
		return -EINVAL;
	if (real_munmap((void *)addr, window_size(win)) < 0)
		return -errno;
	window_release(win);
	return 0;
}

int shmdt(const void *addr)
{
	struct window *win;
	int r;

	if (!table_maybe_window(addr))
		return real_shmdt(addr);
	table_lock();
	win = table_find_window(addr);
	if (!win || win->segment < 0) {
		table_unlock();
		return real_shmdt(addr);
	}
	r = detach(win, addr);
	table_unlock();
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return 0;
}

int shmctl(int id, int cmd, struct shmid_ds *buf)
{
	int r = real_shmctl(id, cmd, buf), saved = errno;
	struct segment *s;

	if (r == 0 && cmd == IPC_RMID) {
		table_lock();
		s = table_find_segment(id);
		if (s)
			segment_maybe_forget(s);
		table_unlock();
	}
	errno = saved;
	return r;
}
