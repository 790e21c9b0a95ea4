/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A reader-writer latch for shared memory, one 32-bit word, usable across
 * processes that map the same memory at different addresses (it holds no
 * pointer). Readers share it, a writer holds it alone. Waiting is a short
 * spin, then futex(2) FUTEX_WAIT on the word, without FUTEX_PRIVATE_FLAG, so
 * that a wake-up reaches the waiters of every process. A zeroed word is an
 * unlocked latch.
 *
 * The word: bit 31 a writer holds it, bit 30 someone may sleep on it, bits
 * 0-29 the number of readers holding it. An unlock that leaves the latch
 * free while the sleep bit is set clears the bit and wakes every sleeper;
 * each sleeper sets the bit again before sleeping if it still cannot get
 * the latch, so no wake-up is lost. Readers do not wait for waiting
 * writers: the sections this demo holds a latch for are a few hundred
 * bytes of copying.
 *
 * A sleep lasts at most LATCH_SLEEP_MS: a wake-up that did not arrive (the
 * futex key of the memory not being shared, say) costs time, which
 * latch_stats.timeouts shows, not a hang; a futex that fails on the memory
 * (latch_stats.futex_errors) makes the waiters poll with sched_yield().
 */

#include <stdbool.h>
#include <stdint.h>

#define LATCH_SLEEP_MS 1000

struct latch {
	uint32_t word;
};

/* What a process saw while taking latches; owned by that process. */
struct latch_stats {
	uint64_t sleeps;	/* futex waits */
	uint64_t timeouts;	/* futex waits that timed out */
	uint64_t futex_errors;	/* futex waits that failed otherwise (then it polls) */
};

/* stats may be NULL. */
void latch_read_lock(struct latch *l, struct latch_stats *stats);
void latch_read_unlock(struct latch *l);
void latch_write_lock(struct latch *l, struct latch_stats *stats);
void latch_write_unlock(struct latch *l);

bool latch_try_read_lock(struct latch *l);
bool latch_try_write_lock(struct latch *l);
