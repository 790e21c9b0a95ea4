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
 * After [addr, addr + len) was unmapped or replaced (a munmap() or a
 * MAP_FIXED mapping over more than one window): releases the windows that
 * lay in it, and that are gone with it.
 */
void window_release_inside(const void *addr, size_t len);

/*
 * Lets a segment's region go once no window of this process shows it and
 * the segment is removed (IPC_RMID: gone, or marked SHM_DEST).
 */
void segment_maybe_forget(struct segment *s);
