// SPDX-License-Identifier: GPL-2.0
/*
 * TLB flushes of a region as its sharers see them.
 *
 * tlb.once_per_mm: a change of the region flushes each sharer mm once,
 * however many windows it has. A sharer with 64 linked windows spins on
 * CPU 1 while the owner, on CPU 0, changes the protection of an object 40
 * times; the TLB shootdown interrupts CPU 1 takes (the "TLB" row of
 * /proc/interrupts) must be about one per change, not one per window and
 * change.
 *
 * tlb.pageout_batched: MADV_PAGEOUT of a file object, 256 pages that a
 * sharer spinning on CPU 1 has read, reclaims them with the flushes
 * batched as for any mm: about one shootdown on CPU 1 for 31 pages, not
 * one for each page.
 *
 * coherence.{unmap,protect}.after_the_call: once mshare_unmap() or
 * mshare_protect(PROT_READ) has returned, no sharer reads the old page or
 * writes through a read-only entry. One sharer pinned to each CPU keeps
 * the page in its TLB; the owner changes it in rounds for
 * $MSHARE_TLB_SECONDS (10 by default), and waits in each round until every
 * sharer has used the page before the change and tried again after it.
 * The crowded variants pin three sharers to each CPU, so that at each
 * change some sharers are switched out, their entries kept in another
 * ASID slot where the CPU has PCID: they must flush when switched back in.
 * The threads variant's sharers are threads of one process, started on
 * their CPUs before the process had a window; the window is linked by its
 * main thread on another CPU, so a thread's CPU never switched to the mm
 * after it had windows, and must receive the flushes all the same.
 *   unmap:   the owner maps a fresh page holding the round's number,
 *            unmaps it, then says so; a sharer that reads the round's
 *            number after being told has read the old page.
 *   protect: the owner makes the page read-only, then says so; a sharer
 *            whose write goes through after being told wrote through a
 *            read-only entry.
 * The state every process sees is one word, round << 2 | phase, in plain
 * shared memory.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>

#include "mshare_test.h"

#define RW		(PROT_READ | PROT_WRITE)
#define OBJ_ROFF	0
#define OBJ_SIZE	SZ_2M

#define WINDOWS		64
#define CHANGES		40
#define FILE_ROFF	(2 * OBJ_SIZE)
#define FILE_SIZE	SZ_1M
/*
 * Reclaim flushes a batch before it frees each folio_batch (31 folios) of
 * it, so MADV_PAGEOUT of FILE_SIZE costs about 9 rounds; one per page
 * (256) is not batched. Pages per shootdown the test accepts:
 */
#define PAGES_PER_ROUND	8

#define MAX_CPUS	64
#define MAX_PER_CPU	3
#define MAX_SHARERS	(MAX_CPUS * MAX_PER_CPU)
#define MAX_SECONDS	840
#define WAIT_MS		(30 * 1000)

enum phase {
	PHASE_USE,	/* the page is mapped read-write: use it */
	PHASE_CHANGED,	/* the call returned: the old entry must be gone */
	PHASE_STOP,	/* leave */
};

#define STATE(round, phase)	((uint64_t)(round) << 2 | (phase))
#define STATE_ROUND(s)		((s) >> 2)
#define STATE_PHASE(s)		((s) & 3)

/* Shared between the owner and the sharers (MAP_SHARED anonymous). */
struct board {
	_Atomic uint64_t state;
	_Atomic uint64_t ready;			/* sharers set up */
	struct {
		_Atomic uint64_t used;		/* last round used in USE */
		_Atomic uint64_t tried;		/* last round tried in CHANGED */
		_Atomic uint64_t attempts;	/* accesses after a change */
		_Atomic uint64_t stale;		/* ... that got through */
	} sharer[MAX_SHARERS];
};

/* The TLB shootdowns CPU cpu has taken, from /proc/interrupts; -1 on error. */
static long long tlb_shootdowns(int cpu)
{
	char *text = read_text("/proc/interrupts", NULL), *line, *save, *p, *end;
	long long val = -1;
	int col = -1, n = 0;

	if (!text)
		return -1;
	/* The header names the online CPUs in column order. */
	line = strtok_r(text, "\n", &save);
	for (p = line; p && (p = strstr(p, "CPU")); p += 3, n++) {
		if (strtol(p + 3, &end, 10) == cpu && end != p + 3) {
			col = n;
			break;
		}
	}
	while (col >= 0 && (line = strtok_r(NULL, "\n", &save))) {
		line += strspn(line, " ");
		if (strncmp(line, "TLB:", 4))
			continue;
		p = line + 4;
		for (int i = 0; i <= col; i++) {
			val = strtoll(p, &end, 10);
			if (end == p) {
				val = -1;
				break;
			}
			p = end;
		}
		break;
	}
	free(text);
	return val;
}

/* Whether /proc/cpuinfo lists flag for the first CPU. */
static bool cpu_has_flag(const char *flag)
{
	char *text = read_text("/proc/cpuinfo", NULL), *line, *tok, *save;
	bool found = false;

	line = text ? strstr(text, "\nflags") : NULL;
	if (line && (line = strchr(line, ':'))) {
		line[strcspn(line, "\n")] = '\0';
		for (tok = strtok_r(line + 1, " ", &save); tok && !found;
		     tok = strtok_r(NULL, " ", &save))
			found = !strcmp(tok, flag);
	}
	free(text);
	return found;
}

/* The board, in memory the children of fork() share with this process. */
static struct board *board_new(struct __test_metadata *_metadata)
{
	struct board *b = mmap(NULL, sizeof(*b), RW,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, b) TH_LOG("board: %s", strerror(errno));
	return b;
}

/* The owner has no window: its own flushes are local, never counted. */
FIXTURE(tlb) {
	struct mshare_ctx c;
	int fd;
	struct board *board;
};

FIXTURE_SETUP(tlb)
{
	self->fd = -1;
	self->board = MAP_FAILED;
	mshare_test_setup(_metadata, &self->c, "tlb");
	ASSERT_LE(2, sysconf(_SC_NPROCESSORS_ONLN))
		TH_LOG("the flush of another CPU needs a second CPU");
	self->board = board_new(_metadata);
	self->fd = test_new_region(_metadata, self->c.align);
	test_sys_map_anon(_metadata, self->fd, OBJ_ROFF, OBJ_SIZE, 0);
}

FIXTURE_TEARDOWN(tlb)
{
	if (self->board != MAP_FAILED)
		atomic_store(&self->board->state, STATE(0, PHASE_STOP));
	child_kill_all();
	if (self->fd >= 0)
		close(self->fd);
	if (self->board != MAP_FAILED)
		munmap(self->board, sizeof(*self->board));
	mshare_ctx_fini(&self->c);
}

/*
 * The sharer of once_per_mm: its own windows, each linked by a read, then
 * a spin on CPU 1 until told to stop, so that its mm stays loaded there.
 */
static int spin_with_windows(int fd, struct board *b)
{
	volatile uint64_t *word;
	char *win[WINDOWS];

	CHILD_CHECK(pin_to_cpu(1) == 0, "sched_setaffinity: %m");
	for (int i = 0; i < WINDOWS; i++) {
		win[i] = sys_mshare_attach(fd, 0, 0, NULL, 0);
		CHILD_CHECK(win[i] != MAP_FAILED, "window %d: %m", i);
		word = (volatile uint64_t *)(win[i] + OBJ_ROFF);
		(void)*word;
	}
	atomic_store(&b->ready, 1);
	while (atomic_load(&b->state) != STATE(0, PHASE_STOP))
		(void)*word;
	return 0;
}

TEST_F(tlb, once_per_mm)
{
	long long before, after;
	pid_t pid;

	ASSERT_SYS(pin_to_cpu(0));
	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(spin_with_windows(self->fd, self->board));
	for (uint64_t t0 = now_ms(); !atomic_load(&self->board->ready);) {
		ASSERT_LT(now_ms() - t0, WAIT_MS) TH_LOG("sharer not ready");
		usleep(1000);
	}
	ASSERT_EQ(WINDOWS, test_fdinfo(_metadata, 0, self->fd,
				       "mshare-windows"));

	before = tlb_shootdowns(1);
	ASSERT_LE(0, before) TH_LOG("no TLB row for CPU 1 in /proc/interrupts");
	for (int i = 0; i < CHANGES; i++)
		ASSERT_SYS(sys_mshare_protect(self->fd, OBJ_ROFF, OBJ_SIZE,
					      i % 2 ? RW : PROT_READ));
	after = tlb_shootdowns(1);
	atomic_store(&self->board->state, STATE(0, PHASE_STOP));
	ASSERT_CHILD_OK(pid);

	TH_LOG("%d protection changes, sharer with %d windows on CPU 1: %lld TLB shootdowns there",
	       CHANGES, WINDOWS, after - before);
	/*
	 * Each change must reach the sharer: by an IPI while it runs on CPU
	 * 1, by its TLB generation at its next switch-in if another task
	 * had CPU 1 at that moment. Without a flush there are none at all.
	 */
	ASSERT_LE(CHANGES / 2, after - before);
	/* ...once, give or take what else the machine flushes meanwhile. */
	ASSERT_GE(2 * CHANGES + 20, after - before);
}

/*
 * The sharer of pageout_batched: reads every page of the file object
 * through its window, so that CPU 1 caches them, then spins there on the
 * anonymous object until told to stop.
 */
static int spin_after_reading(int fd, int page_size, struct board *b)
{
	volatile uint64_t *word;
	char *win;

	CHILD_CHECK(pin_to_cpu(1) == 0, "sched_setaffinity: %m");
	win = sys_mshare_attach(fd, 0, 0, NULL, 0);
	CHILD_CHECK(win != MAP_FAILED, "attach: %m");
	for (size_t off = 0; off < FILE_SIZE; off += page_size)
		CHILD_CHECK(*(volatile uint64_t *)(win + FILE_ROFF + off) ==
			    pattern_word(7, off), "page at %zu", off);
	word = (volatile uint64_t *)(win + OBJ_ROFF);
	atomic_store(&b->ready, 1);
	while (atomic_load(&b->state) != STATE(0, PHASE_STOP))
		(void)*word;
	return 0;
}

TEST_F(tlb, pageout_batched)
{
	const long long pages = FILE_SIZE / self->c.page;
	long long before, after, rss0, rss1;
	char why[1024];
	pid_t pid;
	int ffd;

	ffd = disk_file(FILE_SIZE, why, sizeof(why));
	if (ffd < 0)
		SKIP(return, "%s", why);
	/* Clean pages: reclaim drops them without writing anything back. */
	ASSERT_SYS(fd_pattern_fill(ffd, 0, FILE_SIZE, 7));
	ASSERT_SYS(fsync(ffd));
	test_sys_map_fd(_metadata, self->fd, FILE_ROFF, FILE_SIZE, ffd, 0);

	ASSERT_SYS(pin_to_cpu(0));
	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(spin_after_reading(self->fd, self->c.page, self->board));
	for (uint64_t t0 = now_ms(); !atomic_load(&self->board->ready);) {
		ASSERT_LT(now_ms() - t0, WAIT_MS) TH_LOG("sharer not ready");
		usleep(1000);
	}

	rss0 = test_fdinfo(_metadata, 0, self->fd, "mshare-rss");
	before = tlb_shootdowns(1);
	ASSERT_LE(0, before) TH_LOG("no TLB row for CPU 1 in /proc/interrupts");
	ASSERT_SYS(sys_mshare_advise(self->fd, FILE_ROFF, FILE_SIZE,
				     MADV_PAGEOUT));
	after = tlb_shootdowns(1);
	rss1 = test_fdinfo(_metadata, 0, self->fd, "mshare-rss");
	atomic_store(&self->board->state, STATE(0, PHASE_STOP));
	ASSERT_CHILD_OK(pid);
	close(ffd);

	TH_LOG("MADV_PAGEOUT of %lld pages a sharer read on CPU 1: mshare-rss %lld -> %lld, %lld TLB shootdowns there",
	       pages, rss0, rss1, after - before);
	ASSERT_GT(rss0 - pages / 2, rss1) TH_LOG("nothing was reclaimed");
	ASSERT_LE(1, after - before) TH_LOG("CPU 1 was never flushed");
	ASSERT_GE(pages / PAGES_PER_ROUND, after - before)
		TH_LOG("the flushes of reclaim were not batched");
}

FIXTURE(coherence) {
	struct mshare_ctx c;
	int fd;
	char *win;
	struct board *board;
	int ncpus, nsharers;
	pid_t pids[MAX_SHARERS];
};

enum change { CHANGE_UNMAP, CHANGE_PROTECT };

FIXTURE_VARIANT(coherence) {
	enum change change;
	int per_cpu;		/* sharers pinned to each CPU */
	bool threads;		/* threads of one process, as in the header */
};

FIXTURE_VARIANT_ADD(coherence, unmap) {
	.change = CHANGE_UNMAP,
	.per_cpu = 1,
};

FIXTURE_VARIANT_ADD(coherence, protect) {
	.change = CHANGE_PROTECT,
	.per_cpu = 1,
};

FIXTURE_VARIANT_ADD(coherence, unmap_crowded) {
	.change = CHANGE_UNMAP,
	.per_cpu = MAX_PER_CPU,
};

FIXTURE_VARIANT_ADD(coherence, protect_crowded) {
	.change = CHANGE_PROTECT,
	.per_cpu = MAX_PER_CPU,
};

FIXTURE_VARIANT_ADD(coherence, unmap_threads) {
	.change = CHANGE_UNMAP,
	.per_cpu = 1,
	.threads = true,
};

/*
 * Sharer i, on CPU cpu: reads (unmap) or writes (protect) the page in a
 * loop. In USE it says which round it used; told CHANGED, it tries once
 * more, counts the access as stale if the old page let it through, and
 * says it tried.
 */
static int sharer(int i, int cpu, const char *page, enum change change,
		  struct board *b)
{
	uint64_t val, s, round;

	CHILD_CHECK(pin_to_cpu(cpu) == 0, "sched_setaffinity: %m");
	while ((s = atomic_load(&b->state)) != STATE(0, PHASE_STOP)) {
		round = STATE_ROUND(s);
		if (STATE_PHASE(s) == PHASE_USE) {
			if (atomic_load(&b->sharer[i].used) == round)
				continue;
			if (change == CHANGE_UNMAP) {
				if (probe_read(page, &val) || val != round)
					continue;
			} else if (probe_write((char *)page, round)) {
				continue;
			}
			atomic_store(&b->sharer[i].used, round);
			continue;
		}
		if (atomic_load(&b->sharer[i].tried) == round)
			continue;
		if (change == CHANGE_UNMAP) {
			/* The next round's page holds 0, then round + 1. */
			if (!probe_read(page, &val) && val == round)
				atomic_fetch_add(&b->sharer[i].stale, 1);
		} else if (!probe_write((char *)page, ~round)) {
			atomic_fetch_add(&b->sharer[i].stale, 1);
		}
		atomic_fetch_add(&b->sharer[i].attempts, 1);
		atomic_store(&b->sharer[i].tried, round);
	}
	return 0;
}

/* A sharer thread of the threads variant, and what it waits for. */
struct sharer_thread {
	pthread_t tid;
	int i;
	enum change change;
	struct board *b;
	_Atomic(char *) *page;		/* set once the window is linked */
	_Atomic int *started;
};

static void *sharer_thread(void *arg)
{
	struct sharer_thread *t = arg;
	char *page;

	CHILD_CHECK(pin_to_cpu(t->i) == 0, "sched_setaffinity: %m");
	atomic_fetch_add(t->started, 1);
	while (!(page = atomic_load(t->page)))
		;
	return (void *)(long)sharer(t->i, t->i, page, t->change, t->b);
}

/*
 * The process of the threads variant: a thread spinning on each CPU
 * first, then a window of its own, linked by a read on CPU 0 of the
 * object at FILE_ROFF (the owner maps it before forking).
 */
static int sharer_threads(int fd, int ncpus, enum change change,
			  struct board *b)
{
	struct sharer_thread t[MAX_CPUS];
	_Atomic(char *) page = NULL;
	_Atomic int started = 0;
	uint64_t val;
	char *win;

	for (int i = 0; i < ncpus; i++) {
		t[i] = (struct sharer_thread){ .i = i, .change = change,
					       .b = b, .page = &page,
					       .started = &started };
		CHILD_CHECK(!pthread_create(&t[i].tid, NULL, sharer_thread,
					    &t[i]), "thread %d", i);
	}
	while (atomic_load(&started) < ncpus)
		usleep(1000);
	win = sys_mshare_attach(fd, 0, 0, NULL, 0);
	CHILD_CHECK(win != MAP_FAILED, "attach: %m");
	CHILD_CHECK(pin_to_cpu(0) == 0, "sched_setaffinity: %m");
	CHILD_CHECK(!probe_read(win + FILE_ROFF, &val), "link the window");
	atomic_store(&page, win + OBJ_ROFF);
	for (int i = 0; i < ncpus; i++)
		CHILD_CHECK(!pthread_join(t[i].tid, NULL), "join %d", i);
	return 0;
}

FIXTURE_SETUP(coherence)
{
	self->fd = -1;
	self->board = MAP_FAILED;
	mshare_test_setup(_metadata, &self->c, "coherence");
	self->ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	ASSERT_LE(2, self->ncpus);
	ASSERT_GE(MAX_CPUS, self->ncpus);
	self->nsharers = self->ncpus * variant->per_cpu;
	self->board = board_new(_metadata);
	self->fd = test_new_region(_metadata, self->c.align);
	/* Round 0 is nobody's: the sharers start used = tried = 0. */
	atomic_store(&self->board->state, STATE(0, PHASE_CHANGED));
	if (variant->threads) {
		/* Forked before the owner has a window to pass on. */
		test_sys_map_anon(_metadata, self->fd, FILE_ROFF, OBJ_SIZE, 0);
		self->pids[0] = ASSERT_SYS(child_fork());
		if (self->pids[0] == 0)
			_exit(sharer_threads(self->fd, self->ncpus,
					     variant->change, self->board));
	}
	self->win = test_attach(_metadata, self->fd, 0, 0, 0);
	for (int i = 0; i < self->nsharers && !variant->threads; i++) {
		self->pids[i] = ASSERT_SYS(child_fork());
		if (self->pids[i] == 0)
			_exit(sharer(i, i % self->ncpus, self->win + OBJ_ROFF,
				     variant->change, self->board));
	}
}

FIXTURE_TEARDOWN(coherence)
{
	if (self->board != MAP_FAILED)
		atomic_store(&self->board->state, STATE(0, PHASE_STOP));
	child_kill_all();
	if (self->win && self->win != MAP_FAILED)
		munmap(self->win, self->c.align);
	if (self->fd >= 0)
		close(self->fd);
	if (self->board != MAP_FAILED)
		munmap(self->board, sizeof(*self->board));
	mshare_ctx_fini(&self->c);
}

/* Wait until every sharer's used (or tried) field says round. */
static bool all_at(struct board *b, int nsharers, uint64_t round, bool tried)
{
	uint64_t t0 = now_ms();

	for (int i = 0; i < nsharers; i++) {
		while ((tried ? atomic_load(&b->sharer[i].tried) :
				atomic_load(&b->sharer[i].used)) != round) {
			if (now_ms() - t0 > WAIT_MS)
				return false;
			sched_yield();
		}
	}
	return true;
}

/* Before the round: a fresh page holding the round's number, or RW again. */
static int prepare_round(int fd, char *page, enum change change,
			 uint64_t round)
{
	if (change == CHANGE_PROTECT)
		return sys_mshare_protect(fd, OBJ_ROFF, OBJ_SIZE, RW);
	if (sys_mshare_map_anon(fd, OBJ_ROFF, OBJ_SIZE, 0))
		return -1;
	*(volatile uint64_t *)page = round;
	return 0;
}

TEST_F_TIMEOUT(coherence, after_the_call, MAX_SECONDS + 60)
{
	volatile uint64_t *page = (volatile uint64_t *)(self->win + OBJ_ROFF);
	struct board *b = self->board;
	uint64_t round, deadline, attempts = 0, stale = 0;
	int seconds = env_long("MSHARE_TLB_SECONDS", 10, 1, MAX_SECONDS);

	ASSERT_LT(0, seconds)
		TH_LOG("MSHARE_TLB_SECONDS must be 1 to %d", MAX_SECONDS);
	if (variant->change == CHANGE_PROTECT)
		test_sys_map_anon(_metadata, self->fd, OBJ_ROFF, OBJ_SIZE, 0);

	deadline = now_ms() + seconds * 1000ULL;
	for (round = 1; now_ms() < deadline; round++) {
		ASSERT_SYS(prepare_round(self->fd, (char *)page, variant->change,
					 round));
		atomic_store(&b->state, STATE(round, PHASE_USE));
		ASSERT_TRUE(all_at(b, self->nsharers, round, false))
			TH_LOG("round %lu: a sharer never used the page",
			       (unsigned long)round);

		if (variant->change == CHANGE_UNMAP)
			ASSERT_SYS(sys_mshare_unmap(self->fd, OBJ_ROFF,
						    OBJ_SIZE));
		else
			ASSERT_SYS(sys_mshare_protect(self->fd, OBJ_ROFF,
						      OBJ_SIZE, PROT_READ));
		atomic_store(&b->state, STATE(round, PHASE_CHANGED));
		ASSERT_TRUE(all_at(b, self->nsharers, round, true))
			TH_LOG("round %lu: a sharer never tried the page",
			       (unsigned long)round);
	}
	atomic_store(&b->state, STATE(0, PHASE_STOP));
	for (int i = 0; i < (variant->threads ? 1 : self->nsharers); i++)
		ASSERT_CHILD_OK(self->pids[i]);
	for (int i = 0; i < self->nsharers; i++) {
		attempts += atomic_load(&b->sharer[i].attempts);
		stale += atomic_load(&b->sharer[i].stale);
	}

	TH_LOG("%s: %lu rounds in %d s, %lu accesses after the call by %d sharers on %d CPUs (PCID %s), %lu got through",
	       variant->change == CHANGE_UNMAP ? "unmap" : "protect",
	       (unsigned long)round - 1, seconds, (unsigned long)attempts,
	       self->nsharers, self->ncpus, cpu_has_flag("pcid") ? "on" : "off",
	       (unsigned long)stale);
	ASSERT_LE(10ULL, round - 1) TH_LOG("too few rounds to say anything");
	ASSERT_EQ(0ULL, stale);
}

TEST_HARNESS_MAIN
