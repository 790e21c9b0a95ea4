/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bucket latch across processes: shared and exclusive holding, a
 * futex wake-up that crosses processes, no lost update when many
 * processes increment one record, mutual exclusion under a random mix,
 * and no torn read of records that writers rewrite while readers copy them.
 * Each child process maps the shared memory anew, at an address of its own.
 */
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "latch.h"
#include "mshare-common/macro.h"
#include "mshare-common/tap.h"
#include "pool.h"
#include "util.h"
#include "zipf.h"

#define POOL_SIZE (1u << 20)

static void *shared_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return p;
}

static void msleep(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Wait for every child; returns how many failed (non-zero exit or signal). */
static int reap(pid_t *pids, int n)
{
	int bad = 0, status;

	for (int i = 0; i < n; i++)
		if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			bad++;
	return bad;
}

/* A memfd holding a loaded pool of POOL_SIZE bytes with keys 0..nkeys-1. */
static int make_pool(size_t record_size, uint64_t nkeys)
{
	int fd = memfd_create("test-latch-pool", MFD_CLOEXEC);
	struct pool p;
	void *base;

	if (fd < 0 || ftruncate(fd, POOL_SIZE) < 0)
		exit(2);
	base = mmap(NULL, POOL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED || pool_format(base, POOL_SIZE, record_size, 42, &p) < 0)
		exit(2);
	for (uint64_t k = 0; k < nkeys; k++)
		if (pool_insert(&p, k) < 0)
			exit(2);
	pool_set_loaded(&p);
	munmap(base, POOL_SIZE);
	return fd;
}

/* In a child: map the pool memfd anew and open it. */
static void *map_pool(int fd, struct pool *p)
{
	void *base = mmap(NULL, POOL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (base == MAP_FAILED || pool_open(base, POOL_SIZE, "test pool", p) < 0)
		_exit(3);
	return base;
}

static void test_single_process(void)
{
	struct latch l = { 0 };

	ok(latch_try_read_lock(&l) && latch_try_read_lock(&l), "two readers share the latch");
	ok(!latch_try_write_lock(&l), "a writer cannot take it from readers");
	latch_read_unlock(&l);
	ok(!latch_try_write_lock(&l), "nor from the one reader left");
	latch_read_unlock(&l);
	ok(l.word == 0, "the latch is free after both readers left");
	ok(latch_try_write_lock(&l), "a writer takes a free latch");
	ok(!latch_try_read_lock(&l) && !latch_try_write_lock(&l),
	   "neither a reader nor another writer gets it from the writer");
	latch_write_unlock(&l);
	ok(l.word == 0 && latch_try_read_lock(&l), "a reader gets it after the writer left");
	latch_read_unlock(&l);
}

struct handoff {
	struct latch latch;
	uint32_t step;
	uint64_t released_ns;
};

static void wait_step(struct handoff *h, uint32_t step)
{
	while (__atomic_load_n(&h->step, __ATOMIC_ACQUIRE) < step)
		sched_yield();
}

static void test_across_processes(void)
{
	struct handoff *h = shared_anon(sizeof(*h));
	struct latch_stats stats = { 0 };
	uint64_t acquired;
	pid_t pid;
	bool shared, excluded;

	/* A reader in another process: another reader gets in, a writer does not. */
	pid = fork();
	if (pid == 0) {
		latch_read_lock(&h->latch, NULL);
		__atomic_store_n(&h->step, 1, __ATOMIC_RELEASE);
		wait_step(h, 2);
		latch_read_unlock(&h->latch);
		__atomic_store_n(&h->step, 3, __ATOMIC_RELEASE);
		_exit(0);
	}
	wait_step(h, 1);
	shared = latch_try_read_lock(&h->latch);
	if (shared)
		latch_read_unlock(&h->latch);
	excluded = !latch_try_write_lock(&h->latch);
	__atomic_store_n(&h->step, 2, __ATOMIC_RELEASE);
	wait_step(h, 3);
	ok(shared, "a reader shares the latch with a reader in another process");
	ok(excluded, "a writer is kept out by a reader in another process");
	ok(latch_try_write_lock(&h->latch), "the writer gets in once that reader left");
	latch_write_unlock(&h->latch);
	ok(reap(&pid, 1) == 0, "the other process ended well");

	/* A writer in another process holds it 200 ms; we sleep on the futex until it wakes us. */
	h->step = 0;
	pid = fork();
	if (pid == 0) {
		latch_write_lock(&h->latch, NULL);
		__atomic_store_n(&h->step, 1, __ATOMIC_RELEASE);
		msleep(200);
		h->released_ns = clock_ns(CLOCK_MONOTONIC);
		latch_write_unlock(&h->latch);
		_exit(0);
	}
	wait_step(h, 1);
	latch_read_lock(&h->latch, &stats);
	acquired = clock_ns(CLOCK_MONOTONIC);
	latch_read_unlock(&h->latch);
	ok(reap(&pid, 1) == 0, "the writer process ended well");
	ok(stats.sleeps >= 1 && stats.futex_errors == 0,
	   "the reader slept on the futex (%llu sleeps, %llu futex errors)",
	   (unsigned long long)stats.sleeps, (unsigned long long)stats.futex_errors);
	ok(stats.timeouts == 0 && acquired - h->released_ns < 200000000ull,
	   "the writer's unlock in another process woke it (%.1f ms after, %llu timeouts of %d ms)",
	   ns_to_ms(acquired - h->released_ns), (unsigned long long)stats.timeouts, LATCH_SLEEP_MS);
	munmap(h, sizeof(*h));
}

static void increment(struct record *r, size_t record_size, void *arg)
{
	(void)record_size;
	(void)arg;
	r->payload[0]++;
}

/*
 * N processes x M increments of one record, under its latch. We keep our
 * own mapping while they run, so each child's lands elsewhere.
 */
static void test_no_lost_update(int nproc, unsigned m)
{
	int fd = make_pool(256, 1000);
	pid_t pids[64];
	struct pool p;
	struct record *copy = malloc(256);
	void **child_bases = shared_anon(sizeof(void *) * 64);
	void *base = map_pool(fd, &p);
	uint64_t start;
	int bad, r, moved = 0;

	if (!copy || pool_read(&p, 7, copy) < 0)
		exit(2);
	start = copy->payload[0];
	for (int i = 0; i < nproc; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			struct pool cp;

			child_bases[i] = map_pool(fd, &cp);
			for (unsigned k = 0; k < m; k++)
				if (pool_update(&cp, 7, increment, NULL) < 0)
					_exit(4);
			_exit(0);
		}
	}
	bad = reap(pids, nproc);
	for (int i = 0; i < nproc; i++)
		moved += child_bases[i] && child_bases[i] != base;
	r = pool_read(&p, 7, copy);
	ok(bad == 0, "%d processes incremented the record %u times each", nproc, m);
	ok(moved == nproc, "each mapped the pool at an address other than ours (%d of %d)", moved,
	   nproc);
	ok(r == 0 && copy->payload[0] - start == (uint64_t)nproc * m,
	   "the counter went up by %d x %u = %llu (by %llu)", nproc, m,
	   (unsigned long long)nproc * m, (unsigned long long)(copy->payload[0] - start));
	ok(r == 0 && copy->version == 1 + (uint64_t)nproc * m, "its version is 1 + %llu",
	   (unsigned long long)nproc * m);
	munmap(base, POOL_SIZE);
	munmap(child_bases, sizeof(void *) * 64);
	free(copy);
	close(fd);
}

struct exclusion {
	struct latch latch;
	int32_t readers, writers;
	int32_t max_readers;
	uint64_t violations, reads, writes;
};

/* Random reads and writes on one latch; nobody sees a writer with anyone else. */
static void test_exclusion(int nproc, unsigned rounds)
{
	struct exclusion *x = shared_anon(sizeof(*x));
	pid_t pids[64];

	for (int i = 0; i < nproc; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			struct rng rng;

			rng_seed(&rng, (uint64_t)i);
			for (unsigned k = 0; k < rounds; k++) {
				if (rng_below(&rng, 4) == 0) {
					latch_write_lock(&x->latch, NULL);
					if (__atomic_add_fetch(&x->writers, 1, __ATOMIC_SEQ_CST) != 1 ||
					    __atomic_load_n(&x->readers, __ATOMIC_SEQ_CST) != 0)
						__atomic_add_fetch(&x->violations, 1, __ATOMIC_SEQ_CST);
					for (int s = 0; s < 50; s++)
						__asm__ volatile("" ::: "memory");
					__atomic_sub_fetch(&x->writers, 1, __ATOMIC_SEQ_CST);
					__atomic_add_fetch(&x->writes, 1, __ATOMIC_RELAXED);
					latch_write_unlock(&x->latch);
				} else {
					int32_t n;

					latch_read_lock(&x->latch, NULL);
					n = __atomic_add_fetch(&x->readers, 1, __ATOMIC_SEQ_CST);
					if (__atomic_load_n(&x->writers, __ATOMIC_SEQ_CST) != 0)
						__atomic_add_fetch(&x->violations, 1, __ATOMIC_SEQ_CST);
					int32_t mx = __atomic_load_n(&x->max_readers, __ATOMIC_RELAXED);
					while (n > mx && !__atomic_compare_exchange_n(&x->max_readers, &mx, n,
									     false, __ATOMIC_RELAXED,
									     __ATOMIC_RELAXED))
						;
					for (int s = 0; s < 50; s++)
						__asm__ volatile("" ::: "memory");
					__atomic_sub_fetch(&x->readers, 1, __ATOMIC_SEQ_CST);
					__atomic_add_fetch(&x->reads, 1, __ATOMIC_RELAXED);
					latch_read_unlock(&x->latch);
				}
			}
			_exit(0);
		}
	}
	ok(reap(pids, nproc) == 0, "%d processes took one latch %u times each", nproc, rounds);
	ok(x->violations == 0 && x->reads + x->writes == (uint64_t)nproc * rounds,
	   "no writer ever held it with anyone else (%llu reads, %llu writes, %llu violations)",
	   (unsigned long long)x->reads, (unsigned long long)x->writes,
	   (unsigned long long)x->violations);
	printf("# at most %d readers held it at once\n", x->max_readers);
	ok(x->latch.word == 0, "the latch is free at the end");
	munmap(x, sizeof(*x));
}

static void rewrite(struct record *r, size_t record_size, void *arg)
{
	record_fill(r, record_size, *(uint64_t *)arg);
}

struct torn {
	uint64_t reads, torn, went_back, unlatched_reads, unlatched_torn;
	uint32_t stop;
};

/*
 * Writers rewrite 4 records of 1 KiB again and again; readers copy them
 * under the latch and check the checksum and that versions only grow. As
 * a control (not a check), one reader also copies without the latch.
 */
static void test_no_torn_reads(unsigned ms)
{
	enum { WRITERS = 2, READERS = 3, KEYS = 4, RS = 1024 };
	int fd = make_pool(RS, KEYS);
	struct torn *t = shared_anon(sizeof(*t));
	pid_t pids[WRITERS + READERS + 1];
	int n = 0;

	for (int i = 0; i < WRITERS; i++) {
		pids[n++] = fork();
		if (pids[n - 1] == 0) {
			struct pool p;
			struct rng rng;
			uint64_t salt;

			map_pool(fd, &p);
			rng_seed(&rng, 100 + (uint64_t)i);
			while (!__atomic_load_n(&t->stop, __ATOMIC_RELAXED)) {
				salt = rng_next(&rng);
				if (pool_update(&p, rng_below(&rng, KEYS), rewrite, &salt) < 0)
					_exit(4);
			}
			_exit(0);
		}
	}
	for (int i = 0; i < READERS; i++) {
		pids[n++] = fork();
		if (pids[n - 1] == 0) {
			struct pool p;
			struct record *copy = malloc(RS);
			uint64_t last[KEYS] = { 0 }, reads = 0, torn = 0, back = 0;
			struct rng rng;

			map_pool(fd, &p);
			rng_seed(&rng, 200 + (uint64_t)i);
			while (!__atomic_load_n(&t->stop, __ATOMIC_RELAXED)) {
				uint64_t key = rng_below(&rng, KEYS);
				int r = pool_read(&p, key, copy);

				reads++;
				if (r == -EBADMSG)
					torn++;
				else if (r < 0)
					_exit(4);
				else if (copy->version < last[key])
					back++;
				else
					last[key] = copy->version;
			}
			__atomic_add_fetch(&t->reads, reads, __ATOMIC_RELAXED);
			__atomic_add_fetch(&t->torn, torn, __ATOMIC_RELAXED);
			__atomic_add_fetch(&t->went_back, back, __ATOMIC_RELAXED);
			_exit(0);
		}
	}
	pids[n++] = fork();
	if (pids[n - 1] == 0) {
		struct pool p;
		unsigned char *copy = malloc(RS);
		uint64_t reads = 0, torn = 0;

		map_pool(fd, &p);
		while (!__atomic_load_n(&t->stop, __ATOMIC_RELAXED)) {
			const volatile unsigned char *src =
				(const volatile unsigned char *)pool_slot(&p, reads % KEYS);

			for (size_t b = 0; b < RS; b++)
				copy[b] = src[b];
			reads++;
			torn += !record_valid((struct record *)copy, RS);
		}
		t->unlatched_reads = reads;
		t->unlatched_torn = torn;
		_exit(0);
	}
	msleep(ms);
	__atomic_store_n(&t->stop, 1, __ATOMIC_RELAXED);
	ok(reap(pids, n) == 0, "%d writers and %d readers ran on %d records for %u ms", WRITERS,
	   READERS, KEYS, ms);
	ok(t->reads > 0 && t->torn == 0, "no torn read in %llu latched reads",
	   (unsigned long long)t->reads);
	ok(t->went_back == 0, "no reader saw a record's version go back");
	printf("# control, without the latch: %llu torn of %llu reads\n",
	       (unsigned long long)t->unlatched_torn, (unsigned long long)t->unlatched_reads);
	munmap(t, sizeof(*t));
	close(fd);
}

int main(void)
{
	test_single_process();
	test_across_processes();
	test_no_lost_update(4, 20000);
	test_no_lost_update(16, 5000);
	test_exclusion(6, 50000);
	test_no_torn_reads(1000);
	return tap_finish();
}
