/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "latch.h"

#define WRITER 0x80000000u
#define SLEEPERS 0x40000000u
#define READERS 0x3fffffffu
#define SPINS 100

static inline uint32_t load(const struct latch *l)
{
	return __atomic_load_n(&l->word, __ATOMIC_RELAXED);
}

static inline bool cas(struct latch *l, uint32_t old, uint32_t new)
{
	return __atomic_compare_exchange_n(&l->word, &old, new, false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
}

/* Sleep while the word is still expected (it has the sleep bit set). */
static void sleep_on(struct latch *l, uint32_t expected, struct latch_stats *stats)
{
	struct timespec ts = { .tv_sec = LATCH_SLEEP_MS / 1000,
			       .tv_nsec = (LATCH_SLEEP_MS % 1000) * 1000000L };
	long r;

	if (stats)
		stats->sleeps++;
	r = syscall(SYS_futex, &l->word, FUTEX_WAIT, expected, &ts, NULL, 0);
	if (r < 0 && errno == ETIMEDOUT && stats)
		stats->timeouts++;
	else if (r < 0 && errno != EAGAIN && errno != EINTR && errno != ETIMEDOUT) {
		/* A futex that does not work on this memory: poll instead, and say so. */
		if (stats)
			stats->futex_errors++;
		sched_yield();
	}
}

static void wake_all(struct latch *l)
{
	syscall(SYS_futex, &l->word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/*
 * One attempt to mark the latch as slept on, before sleeping: returns the
 * word to sleep on, or 0 if the word changed (try again).
 */
static uint32_t mark_sleeper(struct latch *l, uint32_t s)
{
	if (s & SLEEPERS)
		return s;
	return cas(l, s, s | SLEEPERS) ? (s | SLEEPERS) : 0;
}

bool latch_try_read_lock(struct latch *l)
{
	uint32_t s = load(l);

	return !(s & WRITER) && (s & READERS) < READERS && cas(l, s, s + 1);
}

void latch_read_lock(struct latch *l, struct latch_stats *stats)
{
	unsigned spins = 0;

	for (;;) {
		uint32_t s = load(l), w;

		if (!(s & WRITER)) {
			if (cas(l, s, s + 1))
				return;
			continue;
		}
		if (spins++ < SPINS) {
			cpu_relax();
			continue;
		}
		w = mark_sleeper(l, s);
		if (w)
			sleep_on(l, w, stats);
	}
}

void latch_read_unlock(struct latch *l)
{
	uint32_t s = __atomic_sub_fetch(&l->word, 1, __ATOMIC_RELEASE);

	/* The last reader out, with sleepers: wake them, unless someone came in. */
	if (s == SLEEPERS && cas(l, SLEEPERS, 0))
		wake_all(l);
}

bool latch_try_write_lock(struct latch *l)
{
	uint32_t s = load(l);

	return !(s & ~SLEEPERS) && cas(l, s, s | WRITER);
}

void latch_write_lock(struct latch *l, struct latch_stats *stats)
{
	unsigned spins = 0;

	for (;;) {
		uint32_t s = load(l), w;

		if (!(s & ~SLEEPERS)) {
			if (cas(l, s, s | WRITER))
				return;
			continue;
		}
		if (spins++ < SPINS) {
			cpu_relax();
			continue;
		}
		w = mark_sleeper(l, s);
		if (w)
			sleep_on(l, w, stats);
	}
}

void latch_write_unlock(struct latch *l)
{
	/* Nobody else changes the word while a writer holds it, except to set the sleep bit. */
	uint32_t s = __atomic_exchange_n(&l->word, 0, __ATOMIC_RELEASE);

	if (s & SLEEPERS)
		wake_all(l);
}
