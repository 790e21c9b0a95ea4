// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Ending served windows, and forgetting the segments behind them.
 */

#include <errno.h>
#include <sys/ipc.h>
#include <sys/shm.h>

#include "real.h"
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

void window_release_inside(const void *addr, size_t len)
{
	struct window *w;

	while ((w = table_find_inside(addr, len)))
		window_release(w);
}
