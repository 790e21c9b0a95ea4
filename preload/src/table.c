// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The tables of served windows and backed System V segments.
 */

#include <pthread.h>

#include "table.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct window windows[TABLE_WINDOWS];
static struct segment segments[TABLE_SEGMENTS];

/* fork() copies the tables whole: never while another thread changes them. */
static void before_fork(void)
{
	pthread_mutex_lock(&lock);
}

static void after_fork(void)
{
	pthread_mutex_unlock(&lock);
}

static void table_init(void)
{
	pthread_atfork(before_fork, after_fork, after_fork);
}

void table_lock(void)
{
	pthread_once(&once, table_init);
	pthread_mutex_lock(&lock);
}

void table_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

bool table_maybe_window(const void *addr)
{
	if (!addr)
		return false;
	for (size_t i = 0; i < TABLE_WINDOWS; i++)
		if (atomic_load_explicit(&windows[i].addr, memory_order_acquire) == (uintptr_t)addr)
			return true;
	return false;
}

bool table_maybe_overlap(const void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, b = a + len < a ? UINTPTR_MAX : a + len;

	for (size_t i = 0; i < TABLE_WINDOWS; i++) {
		uintptr_t start = atomic_load_explicit(&windows[i].addr, memory_order_acquire);

		if (start && start < b &&
		    a < atomic_load_explicit(&windows[i].end, memory_order_relaxed))
			return true;
	}
	return false;
}

struct window *table_find_overlap(const void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, b = a + len < a ? UINTPTR_MAX : a + len;

	for (size_t i = 0; i < TABLE_WINDOWS; i++) {
		uintptr_t start = atomic_load_explicit(&windows[i].addr, memory_order_relaxed);

		if (start && start < b && a < atomic_load_explicit(&windows[i].end, memory_order_relaxed))
			return &windows[i];
	}
	return NULL;
}

struct window *table_window(int index)
{
	return index >= 0 && index < TABLE_WINDOWS &&
			       atomic_load_explicit(&windows[index].addr, memory_order_relaxed)
		       ? &windows[index]
		       : NULL;
}

struct window *table_find_window(const void *addr)
{
	for (size_t i = 0; i < TABLE_WINDOWS; i++)
		if (addr && atomic_load_explicit(&windows[i].addr, memory_order_relaxed) ==
				    (uintptr_t)addr)
			return &windows[i];
	return NULL;
}

struct window *table_new_window(void)
{
	/* Filled in under the lock, and seen by the lock-free lookup only
	 * once table_publish_window() sets its address. */
	for (size_t i = 0; i < TABLE_WINDOWS; i++)
		if (!atomic_load_explicit(&windows[i].addr, memory_order_relaxed)) {
			windows[i].len = 0;
			windows[i].segment = -1;
			windows[i].region = REGION_NULL;
			windows[i].hidden = NULL;
			return &windows[i];
		}
	return NULL;
}

void table_publish_window(struct window *w, void *addr, uint64_t size)
{
	atomic_store_explicit(&w->end, (uintptr_t)addr + size, memory_order_relaxed);
	atomic_store_explicit(&w->addr, (uintptr_t)addr, memory_order_release);
}

void table_drop_window(struct window *w)
{
	atomic_store_explicit(&w->addr, 0, memory_order_release);
	atomic_store_explicit(&w->end, 0, memory_order_relaxed);
	w->len = 0;
	w->segment = -1;
	w->region = REGION_NULL;
	w->hidden = NULL;
}

struct segment *table_find_segment(int id)
{
	for (size_t i = 0; i < TABLE_SEGMENTS; i++)
		if (segments[i].used && segments[i].id == id)
			return &segments[i];
	return NULL;
}

struct segment *table_new_segment(void)
{
	for (size_t i = 0; i < TABLE_SEGMENTS; i++)
		if (!segments[i].used) {
			segments[i] = (struct segment){ .region = REGION_NULL };
			return &segments[i];
		}
	return NULL;
}

struct segment *table_segment(int index)
{
	return index >= 0 && index < TABLE_SEGMENTS && segments[index].used ? &segments[index] : NULL;
}

int table_segment_index(const struct segment *s)
{
	return (int)(s - segments);
}

void table_drop_segment(struct segment *s)
{
	region_close(&s->region);
	*s = (struct segment){ .region = REGION_NULL };
}
