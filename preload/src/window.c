// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Ending served windows, checking that they are still there, and forgetting
 * the segments behind them.
 */

#include <errno.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>

#include "maps.h"
#include "real.h"
#include "report.h"
#include "window.h"

uint64_t window_size(const struct window *w)
{
	const struct segment *s = table_segment(w->segment);

	return s ? s->region.size : w->region.size;
}

void segment_maybe_forget(struct segment *s)
{
	struct shmid_ds ds;
	int saved = errno;

	if (s->attached)
		return;
	if (real_shmctl(s->id, IPC_STAT, &ds) < 0 ? (errno == EINVAL || errno == EIDRM)
						  : (ds.shm_perm.mode & SHM_DEST) != 0)
		table_drop_segment(s);
	errno = saved;
}

void window_release(struct window *w)
{
	struct segment *s = table_segment(w->segment);
	int saved = errno;

	if (w->hidden)
		real_shmdt(w->hidden);
	region_close(&w->region);
	table_drop_window(w);
	if (s) {
		s->attached--;
		segment_maybe_forget(s);
	}
	errno = saved;
}

void window_release_overlapping(const void *addr, size_t len)
{
	struct window *w;

	while ((w = table_find_overlap(addr, len)))
		window_release(w);
}

/* 1, 0 or -errno: maps_shows() of the window's range and region. */
static int window_verify(const struct window *w)
{
	const struct segment *s = table_segment(w->segment);

	return maps_shows(atomic_load_explicit(&w->addr, memory_order_relaxed),
			  atomic_load_explicit(&w->end, memory_order_relaxed),
			  s ? s->region.fd : w->region.fd);
}

int window_check(struct window *w, const char *what)
{
	int k = window_verify(w);
	struct why why;

	if (k == 0)
		window_release(w);
	if (k < 0) {
		why_set(&why, k, "cannot tell whether the window is still mapped "
			"(/proc/self/maps: %s): left as it is", strerrordesc_np(-k));
		report_failure(what, &why);
	}
	return k;
}

void window_forget_stale(void)
{
	for (int i = 0; i < TABLE_WINDOWS; i++) {
		struct window *w = table_window(i);

		if (w && window_verify(w) == 0)
			window_release(w);
	}
}
