// SPDX-License-Identifier: GPL-2.0
/*
 * msharefs stress: for argv[1] seconds (default 30), all at once,
 *  - sharers read and write random pages of the windows of a region, and
 *    churn a second window of their own;
 *  - a mapper MSHAREFS_UNMAPs, replaces and re-creates objects (memfd,
 *    tmpfs file, anonymous, MAP_POPULATE, MAP_HUGETLB) in slots of it: a
 *    thread of the test process, which owns the region, since only the
 *    owner may map and unmap;
 *  - a forker forks children that use the inherited window and exit (or
 *    are killed);
 *  - an owner churner creates owners of other regions, lets processes use
 *    those regions, and SIGKILLs the owners under them.
 *
 * Data must be consistent wherever the protocol makes it certain: each
 * slot has a state in shared memory (HOLE, TRANSITION, MAPPED with a
 * generation) that the mapper changes only around its ioctls. A read that
 * sees the same stable state before and after must fault in a HOLE and
 * return the generation's stamp when MAPPED; in TRANSITION a read may
 * fault, but what it returns must be a stamp of that very page. Readers
 * never write the first 64 bytes of a page. Faults are caught with
 * sigsetjmp/siglongjmp, only around window accesses.
 *
 * One TAP result; the workers' reasons for failing go to stderr, and
 * "# stress-numbers:" sums up the work done.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest.h"
#include "mshare_util.h"

#define NR_SLOTS	8
#define SLOT_STRIDE	(8 * SZ_1M)	/* the 6 MiB after each slot: a hole */
#define SLOT_SIZE	SZ_2M
#define SLOT_PAGES	(SLOT_SIZE / SZ_4K)
#define HEADER		64		/* never written by readers */
#define NR_SHARERS	2
#define PRIV_ROFF	(256 * SZ_1M)	/* one private object per sharer/forker */
#define PRIV_SIZE	SZ_64K
#define OWN_ROFF	0		/* owner churn: the checked object */
#define OWN_SIZE	(4 * SZ_1M)
#define GRACE_S		120		/* to finish after the deadline */
#define MAPPER_THREAD	((pid_t)-2)	/* pids[MAPPER]: not a process */

enum { HOLE, TRANSITION, MAPPED };	/* slot state: gen << 2 | state */
enum { ALIVE, KILLING, REAPED };	/* churned owner */
enum { SHARER0, FORKER = NR_SHARERS, MAPPER, CHURNER, NR_WORKERS };

static const char * const worker_names[NR_WORKERS] = {
	[SHARER0] = "sharer0", [SHARER0 + 1] = "sharer1",
	[FORKER] = "forker", [MAPPER] = "mapper", [CHURNER] = "owner-churn",
};

struct counters {
	uint64_t reads, faults, writes, remaps, forks, kills;
	uint64_t maps, unmaps, owners;
};

struct shared {
	int stop;
	uint64_t slot[NR_SLOTS];
	int owner_phase;
	struct counters n;
};

static struct {
	struct mshare_ctx c;
	struct shared *sh;
	double deadline;
	bool hugetlb;
	uint64_t rnd;
} S;

#define COUNT(field) __atomic_fetch_add(&S.sh->n.field, 1, __ATOMIC_RELAXED)

static bool running(void)
{
	return !__atomic_load_n(&S.sh->stop, __ATOMIC_RELAXED) &&
	       now_s() < S.deadline;
}

static void reseed(void)
{
	S.rnd = ((uint64_t)getpid() << 32) ^ (uint64_t)(now_s() * 1e9) ^ 1;
}

static uint64_t rnd(void)
{
	return rnd_next(&S.rnd);
}

static uint64_t slot_roff(int slot)
{
	return (uint64_t)slot * SLOT_STRIDE;
}

static uint64_t load_state(int slot)
{
	return __atomic_load_n(&S.sh->slot[slot], __ATOMIC_SEQ_CST);
}

static void set_state(int slot, uint64_t gen, int state)
{
	__atomic_store_n(&S.sh->slot[slot], gen << 2 | state, __ATOMIC_SEQ_CST);
}

static uint64_t stamp(int slot, int page, uint64_t gen)
{
	return 0x5354ULL << 48 | (uint64_t)slot << 40 | (uint64_t)page << 24 |
	       (gen & 0xffffff);
}

static bool stamp_of_page(uint64_t v, int slot, int page)
{
	return v >> 24 == (stamp(slot, page, 0) >> 24);
}

static int open_stable(char **win)
{
	int fd = mshare_open(&S.c, "stable", O_RDWR);

	CHILD_CHECK(fd >= 0, "open: %m");
	*win = mshare_window(fd, S.c.align, NULL, 0);
	CHILD_CHECK(*win != MAP_FAILED, "window: %m");
	return fd;
}

/* Read (and perhaps write) one page of a slot; see the protocol above. */
static void check_slot_page(char *win, int slot, int page)
{
	char *p = win + slot_roff(slot) + (uint64_t)page * SZ_4K;
	uint64_t s1, s2, v = 0, r = rnd();
	int sig;

	s1 = load_state(slot);
	sig = probe_read(p, &v);
	s2 = load_state(slot);
	COUNT(reads);
	CHILD_CHECK(sig == 0 || sig == SIGSEGV, "slot %d page %d: signal %d",
		    slot, page, sig);
	if (sig)
		COUNT(faults);
	if (s1 == s2 && (s1 & 3) == HOLE)
		CHILD_CHECK(sig, "slot %d page %d: read %#lx from a hole (gen %lu)",
			    slot, page, (unsigned long)v,
			    (unsigned long)(s1 >> 2));
	else if (s1 == s2 && (s1 & 3) == MAPPED)
		CHILD_CHECK(!sig && v == stamp(slot, page, s1 >> 2),
			    "slot %d page %d gen %lu: signal %d, read %#lx",
			    slot, page, (unsigned long)(s1 >> 2), sig,
			    (unsigned long)v);
	else if (!sig)
		CHILD_CHECK(v == 0 || stamp_of_page(v, slot, page),
			    "slot %d page %d in transition: read %#lx", slot,
			    page, (unsigned long)v);
	if (!sig && r % 4 == 0) {
		p += HEADER + (r >> 8) % ((SZ_4K - HEADER) / 8) * 8;
		if (probe_write(p, r) == 0)
			COUNT(writes);
	}
}

/* A random slot page, or now and then a place that is always a hole. */
static void check_random(char *win)
{
	uint64_t r = rnd();
	int slot = r % NR_SLOTS, page = (r >> 8) % SLOT_PAGES;
	char *gap;

	if ((r >> 20) % 16) {
		check_slot_page(win, slot, page);
		return;
	}
	gap = win + slot_roff(slot) + SLOT_SIZE + (uint64_t)page * SZ_4K;
	CHILD_CHECK(probe_read(gap, NULL) == SIGSEGV, "gap %p readable", gap);
	COUNT(faults);
}

static uint64_t *priv_word(char *win, int idx, uint64_t r)
{
	return (uint64_t *)(win + PRIV_ROFF + idx * PRIV_SIZE +
			    r % (PRIV_SIZE / 8) * 8);
}

static int sharer(int idx)
{
	char *win, *win2;
	volatile uint64_t *w, *w2;
	uint64_t r, iter = 0;
	int fd, k;

	fd = open_stable(&win);
	win2 = mshare_window(fd, S.c.align, NULL, 0);
	CHILD_CHECK(win2 != MAP_FAILED, "window: %m");
	while (running()) {
		for (k = 0; k < 32; k++)
			check_random(win);
		/* a private object: what one window writes, the other reads */
		r = rnd();
		w = priv_word(win, idx, r);
		w2 = priv_word(win2, idx, r);
		*w = r;
		CHILD_CHECK(*w2 == r, "private word %p: %#lx, wrote %#lx",
			    (void *)w2, (unsigned long)*w2, (unsigned long)r);
		if (++iter % 64 == 0) {
			CHILD_CHECK(munmap(win2, S.c.align) == 0, "%m");
			win2 = mshare_window(fd, S.c.align, NULL, 0);
			CHILD_CHECK(win2 != MAP_FAILED, "window: %m");
			COUNT(remaps);
		}
	}
	return 0;
}

static int forker(void)
{
	volatile uint64_t *w1, *w2;
	uint64_t r1, r2;
	bool killed;
	char *win;
	pid_t pid;
	int k, status;

	open_stable(&win);
	while (running()) {
		r1 = rnd();
		do {
			r2 = rnd();
		} while (r2 % (PRIV_SIZE / 8) == r1 % (PRIV_SIZE / 8));
		w1 = priv_word(win, FORKER, r1);
		w2 = priv_word(win, FORKER, r2);
		*w1 = r1;
		pid = child_fork();
		CHILD_CHECK(pid >= 0, "fork: %m");
		if (pid == 0) {
			reseed();
			CHILD_CHECK(*w1 == r1, "inherited window: %#lx",
				    (unsigned long)*w1);
			for (k = 0; k < 16; k++)
				check_random(win);
			*w2 = r2;
			_exit(0);
		}
		killed = rnd() % 4 == 0;
		if (killed) {
			usleep(rnd() % 2000);
			kill(pid, SIGKILL);
		}
		status = child_wait(pid);
		if (status_ok(status))
			CHILD_CHECK(*w2 == r2, "child's write lost");
		else
			CHILD_CHECK(killed && status_killed_by(status, SIGKILL),
				    "forked child %s", status_str(status));
		COUNT(forks);
		if (killed)
			COUNT(kills);
	}
	return 0;
}

/* A new object of a random kind in the slot, stamped with gen. */
/* Returns whether the object is hugetlb memory. */
static bool map_object(int fd, char *win, char *buf, int slot, uint64_t gen)
{
	const uint64_t roff = slot_roff(slot);
	uint64_t r = rnd();
	int kind = r % (S.hugetlb ? 5 : 4), page, ofd = -1, ret;
	unsigned int populate = (r >> 8) % 2 ? MAP_POPULATE : 0;

	if (kind < 2) {
		/* a file: stamped before it is mapped */
		ofd = kind == 0 ? memfd_sized(SLOT_SIZE) :
				  file_sized("/tmp", SLOT_SIZE);
		CHILD_CHECK(ofd >= 0, "object: %m");
		for (page = 0; page < (int)SLOT_PAGES; page++)
			*(uint64_t *)(buf + page * SZ_4K) = stamp(slot, page, gen);
		CHILD_CHECK(pwrite_full(ofd, buf, SLOT_SIZE, 0) == 0, "%m");
		ret = mshare_map(fd, roff, SLOT_SIZE, 0, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_FIXED | populate, ofd);
		close(ofd);
	} else {
		ret = mshare_map_anon(fd, roff, SLOT_SIZE,
				      kind == 4 ? MAP_HUGETLB : populate);
	}
	CHILD_CHECK(ret == 0, "CREATE_MAPPING kind %d slot %d: %m", kind, slot);
	if (kind >= 2)
		for (page = 0; page < (int)SLOT_PAGES; page++)
			*(volatile uint64_t *)(win + roff + page * SZ_4K) =
				stamp(slot, page, gen);
	COUNT(maps);
	return kind == 4;
}

static int mapper(void)
{
	uint64_t st, gen, r, first, len;
	bool huge[NR_SLOTS] = { false };
	char *win, *buf;
	int fd, slot;

	fd = open_stable(&win);
	buf = calloc(1, SLOT_SIZE);
	CHILD_CHECK(buf, "calloc");
	while (running()) {
		r = rnd();
		slot = r % NR_SLOTS;
		st = load_state(slot);
		gen = st >> 2;
		set_state(slot, gen, TRANSITION);
		if ((st & 3) == MAPPED && (r >> 8) % 4 < 2) {
			CHILD_CHECK(mshare_unmap(fd, slot_roff(slot), SLOT_SIZE) == 0,
				    "UNMAP: %m");
			set_state(slot, gen, HOLE);
		} else if ((st & 3) == MAPPED && (r >> 8) % 4 == 2) {
			/* part of it; the slot stays in transition */
			first = (r >> 16) % SLOT_PAGES;
			len = 1 + (r >> 32) % 16;
			if (first + len > SLOT_PAGES)
				len = SLOT_PAGES - first;
			/* hugetlb mappings only split at huge page boundaries */
			if (huge[slot]) {
				first = 0;
				len = SLOT_PAGES;
			}
			CHILD_CHECK(mshare_unmap(fd, slot_roff(slot) + first * SZ_4K,
						 len * SZ_4K) == 0, "UNMAP: %m");
		} else {
			/* over a hole, a part, or a whole object (replacing it) */
			huge[slot] = map_object(fd, win, buf, slot, gen + 1);
			set_state(slot, gen + 1, MAPPED);
		}
		COUNT(unmaps);
		usleep(rnd() % 2000);
	}
	free(buf);
	return 0;
}

static int owner_phase(void)
{
	return __atomic_load_n(&S.sh->owner_phase, __ATOMIC_SEQ_CST);
}

/* The owner of a churned region: sets it up, then uses it until killed. */
static int churned_owner(const char *name, uint64_t seed, int ready_fd)
{
	uint64_t r, v;
	char *win, ok = 1;
	int fd, mfd;

	fd = mshare_create(&S.c, name, S.c.align);
	CHILD_CHECK(fd >= 0, "create %s: %m", name);
	CHILD_CHECK(mshare_map_anon(fd, OWN_ROFF, OWN_SIZE, MAP_POPULATE) == 0,
		    "%m");
	mfd = memfd_sized(SZ_1M);
	CHILD_CHECK(mfd >= 0 && mshare_map_fd(fd, OWN_ROFF + OWN_SIZE, SZ_1M,
					      mfd, 0) == 0, "%m");
	win = mshare_window(fd, S.c.align, NULL, 0);
	CHILD_CHECK(win != MAP_FAILED, "%m");
	stamp_pages(win + OWN_ROFF, OWN_SIZE, seed);
	memset(win + OWN_ROFF + OWN_SIZE, 1, SZ_1M);
	CHILD_CHECK(msg_send(ready_fd, &ok, 1) == 0, "%m");
	for (;;) {
		r = rnd() % (OWN_SIZE / SZ_4K) * SZ_4K;
		v = *(volatile uint64_t *)(win + OWN_ROFF + r);
		CHILD_CHECK(v == pattern_word(seed, r), "owner read %#lx",
			    (unsigned long)v);
		*(volatile uint64_t *)(win + OWN_ROFF + r + 8) = v;
		CHILD_CHECK(now_s() < S.deadline + GRACE_S, "never killed");
	}
}

/* A user of a churned region; user 1 also maps and unmaps objects. */
static int churned_user(const char *name, uint64_t seed, int role)
{
	int fd, ph1, ph2, sig, faults_after_reap = 0;
	uint64_t r, v;
	char *win;

	reseed();
	ph1 = owner_phase();
	fd = mshare_open(&S.c, name, O_RDWR);
	CHILD_CHECK(fd >= 0 || ph1 != ALIVE, "open %s: %m", name);
	if (fd < 0)
		return 0;
	win = mshare_window(fd, S.c.align, NULL, 0);
	ph2 = owner_phase();
	if (win == MAP_FAILED) {
		CHILD_CHECK(ph2 != ALIVE, "window of %s: %m", name);
		CHILD_CHECK(ph1 != REAPED || errno == ENXIO, "window: %m");
		return 0;
	}
	while (faults_after_reap < 4) {
		r = rnd() % (OWN_SIZE / SZ_4K) * SZ_4K;
		ph1 = owner_phase();
		sig = probe_read(win + OWN_ROFF + r, &v);
		ph2 = owner_phase();
		COUNT(reads);
		CHILD_CHECK(sig == 0 || sig == SIGSEGV, "signal %d", sig);
		if (sig)
			COUNT(faults);
		CHILD_CHECK(sig || v == pattern_word(seed, r),
			    "%s+%#lx: read %#lx", name, (unsigned long)r,
			    (unsigned long)v);
		if (ph1 == ph2 && ph1 == ALIVE)
			CHILD_CHECK(!sig, "SIGSEGV while the owner lives");
		if (ph1 == ph2 && ph1 == REAPED) {
			CHILD_CHECK(sig, "window works after the owner's end");
			faults_after_reap++;
		}
		if (role == 1 && rnd() % 8 == 0) {
			/* racing the owner's death: any result but a crash */
			r = 64 * SZ_1M + rnd() % 64 * SZ_64K;
			if (rnd() % 2)
				mshare_map_anon(fd, r, SZ_64K, 0);
			else
				mshare_unmap(fd, r, SZ_64K);
		}
		CHILD_CHECK(now_s() < S.deadline + GRACE_S, "stuck");
	}
	return 0;
}

static int owner_churner(void)
{
	char name[64], ok;
	pid_t owner, users[2];
	int cycle, fd, i, ready[2];
	uint64_t seed;
	void *w;

	for (cycle = 0; running(); cycle++) {
		snprintf(name, sizeof(name), "owner.%d", cycle);
		seed = 1000 + cycle;
		__atomic_store_n(&S.sh->owner_phase, ALIVE, __ATOMIC_SEQ_CST);
		CHILD_CHECK(pipe(ready) == 0, "%m");
		owner = child_fork();
		CHILD_CHECK(owner >= 0, "fork: %m");
		if (owner == 0) {
			close(ready[0]);
			reseed();
			_exit(churned_owner(name, seed, ready[1]));
		}
		close(ready[1]);
		CHILD_CHECK(msg_recv(ready[0], &ok, 1, GRACE_S * 1000) == 0,
			    "owner not ready: %m");
		close(ready[0]);
		fd = mshare_open(&S.c, name, O_RDWR);
		CHILD_CHECK(fd >= 0, "open %s: %m", name);
		for (i = 0; i < 2; i++) {
			users[i] = child_fork();
			CHILD_CHECK(users[i] >= 0, "fork: %m");
			if (users[i] == 0)
				_exit(churned_user(name, seed, i));
		}

		usleep(20000 + rnd() % 180000);
		__atomic_store_n(&S.sh->owner_phase, KILLING, __ATOMIC_SEQ_CST);
		kill(owner, SIGKILL);
		i = child_wait(owner);
		CHILD_CHECK(status_killed_by(i, SIGKILL), "owner %s",
			    status_str(i));
		__atomic_store_n(&S.sh->owner_phase, REAPED, __ATOMIC_SEQ_CST);
		COUNT(owners);

		w = mshare_window(fd, S.c.align, NULL, 0);
		CHILD_CHECK(w == MAP_FAILED && errno == ENXIO,
			    "mmap after the owner's end: %p %m", w);
		for (i = 0; i < 2; i++) {
			int st = child_wait(users[i]);

			CHILD_CHECK(status_ok(st), "user %d %s", i,
				    status_str(st));
		}
		close(fd);
		unlink(mshare_path(&S.c, name));
	}
	return 0;
}

static int run_worker(int w)
{
	reseed();
	switch (w) {
	case FORKER:
		return forker();
	case MAPPER:
		return mapper();
	case CHURNER:
		return owner_churner();
	default:
		return sharer(w - SHARER0);
	}
}

static void *mapper_thread(void *arg)
{
	(void)arg;
	reseed();
	return (void *)(long)mapper();
}

/* The stable region: every slot MAPPED (generation 1), private objects. */
static int setup_stable(char **win)
{
	char *buf;
	int fd, slot, w, ofd, page;

	fd = mshare_create(&S.c, "stable", S.c.align);
	if (fd < 0)
		return -1;
	buf = calloc(1, SLOT_SIZE);
	if (!buf)
		return -1;
	for (slot = 0; slot < NR_SLOTS; slot++) {
		ofd = memfd_sized(SLOT_SIZE);
		for (page = 0; page < (int)SLOT_PAGES; page++)
			*(uint64_t *)(buf + page * SZ_4K) = stamp(slot, page, 1);
		if (ofd < 0 || pwrite_full(ofd, buf, SLOT_SIZE, 0) ||
		    mshare_map_fd(fd, slot_roff(slot), SLOT_SIZE, ofd, 0))
			return -1;
		close(ofd);
		set_state(slot, 1, MAPPED);
	}
	free(buf);
	for (w = 0; w <= FORKER; w++)
		if (mshare_map_anon(fd, PRIV_ROFF + w * PRIV_SIZE, PRIV_SIZE, 0))
			return -1;
	*win = mshare_window(fd, S.c.align, NULL, 0);
	return *win == MAP_FAILED ? -1 : fd;
}

/* After the run, with every worker gone, each slot must be as recorded. */
static bool final_check(char *win)
{
	uint64_t st, v;
	bool ok = true;
	int slot, page, sig;

	for (slot = 0; slot < NR_SLOTS; slot++) {
		st = load_state(slot);
		for (page = 0; page < (int)SLOT_PAGES; page += 37) {
			sig = probe_read(win + slot_roff(slot) + page * SZ_4K, &v);
			if ((st & 3) == HOLE && !sig) {
				ksft_print_msg("slot %d page %d: readable hole\n",
					       slot, page);
				ok = false;
			} else if ((st & 3) == MAPPED &&
				   (sig || v != stamp(slot, page, st >> 2))) {
				ksft_print_msg("slot %d page %d: signal %d, %#lx\n",
					       slot, page, sig, (unsigned long)v);
				ok = false;
			}
		}
	}
	return ok;
}

static bool run(int seconds)
{
	pid_t pids[NR_WORKERS];
	pthread_t mapper_tid;
	int w, status, left;
	double start = now_s();
	char why[128];
	bool ok = true;
	char *win;

	if (mshare_ctx_init(&S.c, "stress")) {
		ksft_print_msg("msharefs: %s\n", strerror(errno));
		return false;
	}
	S.sh = mmap(NULL, sizeof(*S.sh), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (S.sh == MAP_FAILED || setup_stable(&win) < 0) {
		ksft_print_msg("setup: %s\n", strerror(errno));
		mshare_ctx_fini(&S.c);
		return false;
	}
	S.hugetlb = hugetlb_usable(NR_SLOTS, why, sizeof(why)) == 0;
	if (!S.hugetlb)
		ksft_print_msg("no MAP_HUGETLB objects: %s\n", why);
	S.deadline = start + seconds;

	for (w = 0; w < NR_WORKERS; w++) {
		pids[w] = 0;
		if (w == MAPPER)
			continue;
		pids[w] = child_fork();
		if (pids[w] == 0)
			_exit(run_worker(w));
		if (pids[w] < 0) {
			ksft_print_msg("fork: %s\n", strerror(errno));
			S.sh->stop = 1;
			ok = false;
			pids[w] = 0;
			break;
		}
	}
	left = 0;
	for (w = 0; w < NR_WORKERS; w++)
		left += pids[w] > 0;
	/* The mapper runs in the owner, after the forks. */
	if (ok && pthread_create(&mapper_tid, NULL, mapper_thread, NULL) == 0) {
		pids[MAPPER] = MAPPER_THREAD;
		left++;
	} else if (ok) {
		ksft_print_msg("pthread_create failed\n");
		S.sh->stop = 1;
		ok = false;
	}

	while (left > 0) {
		for (w = 0; w < NR_WORKERS; w++) {
			if (pids[w] == MAPPER_THREAD) {
				void *ret;

				if (pthread_tryjoin_np(mapper_tid, &ret))
					continue;
				/* an exit status of 0 or 1, like a child's */
				status = ret ? 1 << 8 : 0;
			} else if (pids[w] <= 0 ||
				   child_poll(pids[w], &status) != 1) {
				continue;
			}
			pids[w] = 0;
			left--;
			if (!status_ok(status) || now_s() < S.deadline - 1) {
				ksft_print_msg("%s %s after %.1f s\n",
					       worker_names[w], status_str(status),
					       now_s() - start);
				ok = false;
				__atomic_store_n(&S.sh->stop, 1, __ATOMIC_SEQ_CST);
			}
		}
		if (left && now_s() > S.deadline + GRACE_S) {
			ksft_print_msg("%d workers still running %d s after the end\n",
				       left, GRACE_S);
			ok = false;
			break;
		}
		if (left)
			usleep(100 * 1000);
	}
	child_kill_all();
	if (pids[MAPPER] == MAPPER_THREAD) {
		/* Still running past the grace period: it holds no lock. */
		__atomic_store_n(&S.sh->stop, 1, __ATOMIC_SEQ_CST);
		pthread_join(mapper_tid, NULL);
	}

	ok = final_check(win) && ok;
	ksft_print_msg("stress-numbers: seconds=%.1f reads=%lu faults=%lu writes=%lu window_remaps=%lu forks=%lu forks_killed=%lu maps=%lu mapper_ops=%lu owners_killed=%lu\n",
		       now_s() - start, S.sh->n.reads, S.sh->n.faults,
		       S.sh->n.writes, S.sh->n.remaps, S.sh->n.forks,
		       S.sh->n.kills, S.sh->n.maps, S.sh->n.unmaps,
		       S.sh->n.owners);
	if (!S.sh->n.owners || !S.sh->n.forks || !S.sh->n.maps) {
		ksft_print_msg("a worker did no work\n");
		ok = false;
	}
	mshare_ctx_fini(&S.c);
	return ok;
}

int main(int argc, char **argv)
{
	int seconds = 30;

	if (argc > 1) {
		seconds = atoi(argv[1]);
		if (seconds <= 0) {
			fprintf(stderr, "usage: %s [seconds]\n", argv[0]);
			return KSFT_FAIL;
		}
	}
	ksft_print_header();
	ksft_set_plan(1);
	ksft_test_result(run(seconds), "msharefs_stress\n");
	ksft_finished();
}
