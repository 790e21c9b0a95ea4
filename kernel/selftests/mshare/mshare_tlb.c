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
 * coherence.{unmap,protect}.after_the_call: once mshare_unmap() or
 * mshare_protect(PROT_READ) has returned, no sharer reads the old page or
 * writes through a read-only entry. One sharer pinned to each CPU keeps
 * the page in its TLB; the owner changes it in rounds for
 * $MSHARE_TLB_SECONDS (10 by default), and waits in each round until every
 * sharer has used the page before the change and tried again after it.
 *   unmap:   the owner maps a fresh page holding the round's number,
 *            unmaps it, then says so; a sharer that reads the round's
 *            number after being told has read the old page.
 *   protect: the owner makes the page read-only, then says so; a sharer
 *            whose write goes through after being told wrote through a
 *            read-only entry.
 * The state every process sees is one word, round << 2 | phase, in plain
 * shared memory.
 */
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

#define MAX_CPUS	64
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
	} cpu[MAX_CPUS];
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

FIXTURE(coherence) {
	struct mshare_ctx c;
	int fd;
	char *win;
	struct board *board;
	int ncpus;
	pid_t pids[MAX_CPUS];
};

enum change { CHANGE_UNMAP, CHANGE_PROTECT };

FIXTURE_VARIANT(coherence) {
	enum change change;
};

FIXTURE_VARIANT_ADD(coherence, unmap) {
	.change = CHANGE_UNMAP,
};

FIXTURE_VARIANT_ADD(coherence, protect) {
	.change = CHANGE_PROTECT,
};

/*
 * A sharer on CPU cpu: reads (unmap) or writes (protect) the page in a
 * loop. In USE it says which round it used; told CHANGED, it tries once
 * more, counts the access as stale if the old page let it through, and
 * says it tried.
 */
static int sharer(int cpu, const char *page, enum change change,
		  struct board *b)
{
	uint64_t val, s, round;

	CHILD_CHECK(pin_to_cpu(cpu) == 0, "sched_setaffinity: %m");
	while ((s = atomic_load(&b->state)) != STATE(0, PHASE_STOP)) {
		round = STATE_ROUND(s);
		if (STATE_PHASE(s) == PHASE_USE) {
			if (atomic_load(&b->cpu[cpu].used) == round)
				continue;
			if (change == CHANGE_UNMAP) {
				if (probe_read(page, &val) || val != round)
					continue;
			} else if (probe_write((char *)page, round)) {
				continue;
			}
			atomic_store(&b->cpu[cpu].used, round);
			continue;
		}
		if (atomic_load(&b->cpu[cpu].tried) == round)
			continue;
		if (change == CHANGE_UNMAP) {
			/* The next round's page holds 0, then round + 1. */
			if (!probe_read(page, &val) && val == round)
				atomic_fetch_add(&b->cpu[cpu].stale, 1);
		} else if (!probe_write((char *)page, ~round)) {
			atomic_fetch_add(&b->cpu[cpu].stale, 1);
		}
		atomic_fetch_add(&b->cpu[cpu].attempts, 1);
		atomic_store(&b->cpu[cpu].tried, round);
	}
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
	self->board = board_new(_metadata);
	self->fd = test_new_region(_metadata, self->c.align);
	self->win = test_attach(_metadata, self->fd, 0, 0, 0);
	/* Round 0 is nobody's: the sharers start used = tried = 0. */
	atomic_store(&self->board->state, STATE(0, PHASE_CHANGED));
	for (int cpu = 0; cpu < self->ncpus; cpu++) {
		self->pids[cpu] = ASSERT_SYS(child_fork());
		if (self->pids[cpu] == 0)
			_exit(sharer(cpu, self->win + OBJ_ROFF, variant->change,
				     self->board));
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
static bool all_at(struct board *b, int ncpus, uint64_t round, bool tried)
{
	uint64_t t0 = now_ms();

	for (int cpu = 0; cpu < ncpus; cpu++) {
		while ((tried ? atomic_load(&b->cpu[cpu].tried) :
				atomic_load(&b->cpu[cpu].used)) != round) {
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
		ASSERT_TRUE(all_at(b, self->ncpus, round, false))
			TH_LOG("round %lu: a sharer never used the page",
			       (unsigned long)round);

		if (variant->change == CHANGE_UNMAP)
			ASSERT_SYS(sys_mshare_unmap(self->fd, OBJ_ROFF,
						    OBJ_SIZE));
		else
			ASSERT_SYS(sys_mshare_protect(self->fd, OBJ_ROFF,
						      OBJ_SIZE, PROT_READ));
		atomic_store(&b->state, STATE(round, PHASE_CHANGED));
		ASSERT_TRUE(all_at(b, self->ncpus, round, true))
			TH_LOG("round %lu: a sharer never tried the page",
			       (unsigned long)round);
	}
	atomic_store(&b->state, STATE(0, PHASE_STOP));
	for (int cpu = 0; cpu < self->ncpus; cpu++) {
		ASSERT_CHILD_OK(self->pids[cpu]);
		attempts += atomic_load(&b->cpu[cpu].attempts);
		stale += atomic_load(&b->cpu[cpu].stale);
	}

	TH_LOG("%s: %lu rounds in %d s, %lu accesses after the call on %d CPUs, %lu got through",
	       variant->change == CHANGE_UNMAP ? "unmap" : "protect",
	       (unsigned long)round - 1, seconds, (unsigned long)attempts,
	       self->ncpus, (unsigned long)stale);
	ASSERT_LE(10ULL, round - 1) TH_LOG("too few rounds to say anything");
	ASSERT_EQ(0ULL, stale);
}

TEST_HARNESS_MAIN
