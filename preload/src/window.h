/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The end of a served window, whichever call ends it (munmap(), shmdt()),
 * and of the System V segments behind them. With the table lock held.
 */

#include <stdint.h>

#include "table.h"

/* The window's size: its region's. */
uint64_t window_size(const struct window *w);

/*
 * After the window was unmapped: detaches the real segment behind a
 * shmat() window, lets the region of an mmap() window go, and forgets the
 * window.
 */
void window_release(struct window *w);

/*
 * After [addr, addr + len) was unmapped, replaced or mapped anew (a
 * munmap(), a MAP_FIXED mapping, a new mapping the kernel placed there):
 * releases the windows whose range meets it. They are gone, or were gone
 * already: the kernel unmaps a window only whole (a partial munmap() or
 * MAP_FIXED mapping fails with EINVAL), and places nothing where one is.
 */
void window_release_overlapping(const void *addr, size_t len);

/*
 * Whether the window is still mapped where the table says, onto its region
 * (maps.h), before the library acts on its whole range: 1; 0 if not, after
 * forgetting it (releasing its region); -errno if it cannot tell, said on
 * stderr (what: "munmap of 66060288 bytes at 0x..."), the window left as it
 * is.
 */
int window_check(struct window *w, const char *what);

/* Forgets the windows that are no longer mapped, before a new one is made:
 * the kernel may put the new one where a stale one was, and a full table
 * may be full of stale ones. */
void window_forget_stale(void);

/*
 * Lets a segment's region go once no window of this process shows it and
 * the segment is removed (IPC_RMID: gone, or marked SHM_DEST).
 */
void segment_maybe_forget(struct segment *s);
