/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the library serves in this process: windows (one per served mmap()
 * or shmat()) and the System V segments it backs with regions. Fixed
 * tables under one mutex; a child made by fork() gets a copy, as it gets
 * the windows and the descriptors (the mutex is held across fork(), so the
 * copy is consistent).
 *
 * Looking a window up by address (table_maybe_window(),
 * table_maybe_overlap()) takes no lock, so that munmap() and shmdt() of
 * anything the library does not serve stay as async-signal-safe as the real
 * calls.
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "region.h"

#define TABLE_WINDOWS 64
#define TABLE_SEGMENTS 32

struct window {
	_Atomic(uintptr_t) addr;	/* 0: a free slot; set last, cleared first */
	_Atomic(uintptr_t) end;		/* addr + the window's size */
	uint64_t len;		/* what the program asked for */
	int segment;		/* -1: an mmap(), which owns region */
	struct region region;
	void *hidden;		/* a shmat(): the real segment's attachment */
};

struct segment {
	bool used;
	int id;
	uint64_t size;
	unsigned attached;	/* windows of this process onto it */
	struct region region;
};

void table_lock(void);
void table_unlock(void);

/* Whether addr might be a served window (no lock). */
bool table_maybe_window(const void *addr);

/* Whether [addr, addr + len) might meet a served window (no lock). */
bool table_maybe_overlap(const void *addr, size_t len);

/* With the lock held: */
struct window *table_find_window(const void *addr);
struct window *table_new_window(void);		/* NULL if the table is full */
void table_publish_window(struct window *w, void *addr, uint64_t size);
/* A window whose range meets [addr, addr + len), or NULL. */
struct window *table_find_overlap(const void *addr, size_t len);
/* The window in slot index, or NULL if the slot is free. */
struct window *table_window(int index);
void table_drop_window(struct window *w);

struct segment *table_find_segment(int id);
struct segment *table_new_segment(void);	/* NULL if the table is full */
struct segment *table_segment(int index);
int table_segment_index(const struct segment *s);
void table_drop_segment(struct segment *s);	/* closes its region */
